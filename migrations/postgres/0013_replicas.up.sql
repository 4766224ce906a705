-- claimed_by names the process holding a delivery's claim: the key of its
-- presence lock, a session-level advisory lock that PostgreSQL releases
-- when the process's session ends. A claim whose key no session holds is
-- taken back at once instead of after its lease.
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by BIGINT;
CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries (webhook_id) WHERE claimed_until IS NOT NULL;

-- The setup link is made once and kept until used or expired, so every
-- boot of every replica prints the same link rather than replacing it.
DROP TABLE dashboard_setup;
CREATE TABLE dashboard_setup (
    id         BIGINT PRIMARY KEY CHECK (id = 1),
    token      TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- The sign-in throttle, shared by every replica: failures per key (an
-- e-mail or a client address) since the first one of the current window.
CREATE TABLE dashboard_signin_failures (
    key      TEXT COLLATE "C" PRIMARY KEY,
    first_at BIGINT NOT NULL,
    failures BIGINT NOT NULL
);
CREATE INDEX dashboard_signin_failures_first ON dashboard_signin_failures (first_at);

-- Rate limits summed over every replica: the requests (or tokens leased
-- to replicas) of an app's traffic class in one minute. A row lives for
-- its minute; old ones are trimmed by time. No foreign key: the row is
-- touched on the hot path, and an app's rows go with their minute.
CREATE TABLE rate_limit_windows (
    app_id  BIGINT NOT NULL,
    class   BIGINT NOT NULL,
    minute  BIGINT NOT NULL,
    used    BIGINT NOT NULL,
    PRIMARY KEY (app_id, class, minute)
);
