-- change_version counts the committed transactions that changed what the
-- servers cache (campaigns, content, audiences, apps and their settings,
-- keys, webhooks). Each such transaction bumps it beside its NOTIFY, and
-- every server reads it every few seconds: a server that missed a
-- notification sees the count move and starts its caches over. It holds
-- at most one row (id 1), inserted by the first bump.
CREATE TABLE change_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
