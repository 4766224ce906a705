-- The complete current schema of the service's database: read it here.
--
-- Generated from migrations/, which remain the way the schema changes: to
-- change it, add a migration (migrations/NNNN_name.up.sql and .down.sql),
-- then rewrite this file with
--
--     go test ./store -run TestSchema -update
--
-- TestSchema fails whenever this file and the migrations disagree.
-- Timestamps are integer milliseconds since the Unix epoch (UTC).

CREATE TABLE apps (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    plan        TEXT    NOT NULL,
    rate_limit  INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
, allowed_origins TEXT NOT NULL DEFAULT '*', event_retention_days INTEGER CHECK (event_retention_days BETWEEN 1 AND 3650), form_retention_days INTEGER CHECK (form_retention_days BETWEEN 1 AND 3650));

CREATE TABLE content_views (
    id           INTEGER PRIMARY KEY,
    app_id       INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    items        TEXT    NOT NULL DEFAULT '[]',
    published_at INTEGER,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX content_views_app ON content_views(app_id, status, id);

CREATE TABLE audiences (
    id                 INTEGER PRIMARY KEY,
    app_id             INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    name               TEXT    NOT NULL,
    description        TEXT    NOT NULL DEFAULT '',
    status             TEXT    NOT NULL,
    definition         TEXT    NOT NULL,
    customer_count     INTEGER NOT NULL DEFAULT 0,
    last_calculated_at INTEGER,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX audiences_app ON audiences(app_id, status, id);

CREATE TABLE campaigns (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id          INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    name            TEXT    NOT NULL,
    description     TEXT    NOT NULL DEFAULT '',
    status          TEXT    NOT NULL,
    archived_from   TEXT,
    start_at        INTEGER,
    end_at          INTEGER,
    timezone        TEXT    NOT NULL DEFAULT 'UTC',
    goal_event_id   TEXT,
    audience_id     INTEGER REFERENCES audiences(id),
    assignment_type TEXT    NOT NULL DEFAULT 'weighted',
    rr_next         INTEGER NOT NULL DEFAULT 0,
    started_at      INTEGER,
    completed_at    INTEGER,
    created_by      INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
, stats_engine TEXT NOT NULL DEFAULT 'frequentist'
    CHECK (stats_engine IN ('frequentist','sequential','bayesian')), namespace_id TEXT, namespace_start REAL, namespace_end REAL, cuped_lookback_days INTEGER NOT NULL DEFAULT 14
    CHECK (cuped_lookback_days BETWEEN 0 AND 90), key TEXT, guardrail_action TEXT NOT NULL DEFAULT 'alert'
    CHECK (guardrail_action IN ('alert','pause')));
CREATE INDEX campaigns_app ON campaigns(app_id, status, id);
CREATE INDEX campaigns_status ON campaigns(status, start_at, end_at);
CREATE INDEX campaigns_namespace ON campaigns(app_id, namespace_id) WHERE namespace_id IS NOT NULL;
CREATE UNIQUE INDEX campaigns_app_key ON campaigns(app_id, key);

CREATE TABLE campaign_variants (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_id        INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    name               TEXT    NOT NULL,
    content_view_id    INTEGER NOT NULL,
    traffic_allocation REAL    NOT NULL,
    is_control         INTEGER NOT NULL DEFAULT 0,
    impressions        INTEGER NOT NULL DEFAULT 0,
    conversions        INTEGER NOT NULL DEFAULT 0
, cuped_sum_x INTEGER NOT NULL DEFAULT 0, cuped_sum_xx INTEGER NOT NULL DEFAULT 0, cuped_sum_xy INTEGER NOT NULL DEFAULT 0);
CREATE INDEX campaign_variants_campaign ON campaign_variants(campaign_id, id);
CREATE INDEX campaign_variants_content ON campaign_variants(content_view_id);

CREATE TABLE assignments (
    campaign_id  INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    user_key     TEXT    NOT NULL,
    variant_id   INTEGER NOT NULL,
    assigned_at  INTEGER NOT NULL,
    converted_at INTEGER, covariate INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, user_key)
) WITHOUT ROWID;

CREATE TABLE users (
    app_id      INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    user_id     TEXT    NOT NULL,
    attributes  TEXT    NOT NULL DEFAULT '{}',
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    PRIMARY KEY (app_id, user_id)
) WITHOUT ROWID;

CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id      INTEGER NOT NULL,
    event_id    TEXT    NOT NULL,
    user_id     TEXT,
    session_id  TEXT,
    metadata    TEXT,
    log_id      TEXT,
    ts          INTEGER NOT NULL
);
CREATE INDEX events_app_ts ON events(app_id, ts);
CREATE INDEX events_app_event_ts ON events(app_id, event_id, ts);
CREATE UNIQUE INDEX events_app_log ON events(app_id, log_id) WHERE log_id IS NOT NULL;
CREATE TRIGGER events_delete_event_index AFTER DELETE ON events WHEN coalesce(old.user_id, old.session_id) IS NOT NULL BEGIN
    INSERT OR REPLACE INTO event_users (app_id, user_id, event_id, ts, id, run)
        SELECT app_id, user_id, event_id,
            CASE WHEN id = old.id THEN run->>'$[#-2][0]' ELSE ts END,
            CASE WHEN id = old.id THEN run->>'$[#-2][1]' ELSE id END,
            CASE WHEN json_array_length(run) > 2 THEN json_remove(run, '$[' || pos || ']') END
        FROM (SELECT *, (SELECT key FROM json_each(c.run) WHERE value->>1 = old.id) AS pos
            FROM (SELECT * FROM event_users
                WHERE app_id = CASE WHEN old.user_id IS NULL THEN -old.app_id ELSE old.app_id END
                    AND user_id = coalesce(old.user_id, old.session_id) AND event_id = old.event_id
                    AND (ts, id) >= (old.ts, old.id)
                ORDER BY ts, id LIMIT 1) AS c
            WHERE instr(c.run, ',' || old.id || ']') > 0)
        WHERE pos IS NOT NULL;
    DELETE FROM event_users WHERE app_id = CASE WHEN old.user_id IS NULL THEN -old.app_id ELSE old.app_id END
        AND user_id = coalesce(old.user_id, old.session_id)
        AND event_id = old.event_id AND ts = old.ts AND id = old.id;
END;

CREATE TABLE webhooks (
    id                   INTEGER PRIMARY KEY,
    app_id               INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    url                  TEXT    NOT NULL,
    events               TEXT    NOT NULL,
    secret               TEXT    NOT NULL DEFAULT '',
    headers              TEXT    NOT NULL DEFAULT '{}',
    max_retries          INTEGER NOT NULL,
    timeout_seconds      INTEGER NOT NULL,
    description          TEXT    NOT NULL DEFAULT '',
    status               TEXT    NOT NULL DEFAULT 'ACTIVE',
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    total_successes      INTEGER NOT NULL DEFAULT 0,
    total_failures       INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
, previous_secret TEXT NOT NULL DEFAULT '', previous_secret_expires_at INTEGER, secret_rotated_at INTEGER);
CREATE INDEX webhooks_app ON webhooks(app_id, id);

CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event           TEXT    NOT NULL,
    payload         BLOB    NOT NULL,
    created_at      INTEGER NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    claimed_until   INTEGER
, claimed_by INTEGER, redacted_at INTEGER);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries(webhook_id, id);

CREATE TABLE webhook_attempts (
    id              INTEGER PRIMARY KEY,
    delivery_id     INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    at              INTEGER NOT NULL,
    response_status INTEGER,
    error           TEXT,
    duration_ms     INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, id);

CREATE TABLE form_submissions (
    id              INTEGER PRIMARY KEY,
    app_id          INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    content_view_id INTEGER NOT NULL REFERENCES content_views(id) ON DELETE CASCADE,
    data            TEXT    NOT NULL,
    user_id         TEXT,
    session_id      TEXT,
    environment     TEXT,
    submitted_at    INTEGER NOT NULL
);
CREATE INDEX form_submissions_app ON form_submissions(app_id, content_view_id, id);
CREATE INDEX form_submissions_user ON form_submissions(app_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX form_submissions_session ON form_submissions(app_id, session_id) WHERE session_id IS NOT NULL;

CREATE TABLE dashboard_users (
    id            INTEGER PRIMARY KEY,
    email         TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
, owner INTEGER NOT NULL DEFAULT 0);

CREATE TABLE dashboard_sessions (
    token_hash BLOB    PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    csrf_token TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX dashboard_sessions_expires ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id);

CREATE TABLE campaign_variant_hours (
    variant_id  INTEGER NOT NULL REFERENCES campaign_variants(id) ON DELETE CASCADE,
    hour        INTEGER NOT NULL,
    impressions INTEGER NOT NULL DEFAULT 0,
    conversions INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (variant_id, hour)
) WITHOUT ROWID;

CREATE TABLE event_users (
    app_id   INTEGER NOT NULL,
    user_id  TEXT    NOT NULL,
    event_id TEXT    NOT NULL,
    ts       INTEGER NOT NULL,
    id       INTEGER NOT NULL, run TEXT,
    PRIMARY KEY (app_id, user_id, event_id, ts, id)
) WITHOUT ROWID;

CREATE TABLE event_users_upto (upto INTEGER NOT NULL);

CREATE TABLE app_members (
    app_id     INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    role       TEXT    NOT NULL CHECK (role IN ('viewer','editor','admin')),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, user_id)
);
CREATE INDEX app_members_user ON app_members (user_id);

CREATE TABLE dashboard_invitations (
    id          INTEGER PRIMARY KEY,
    token_hash  BLOB    NOT NULL UNIQUE,
    email       TEXT    NOT NULL COLLATE NOCASE,
    app_id      INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('viewer','editor','admin')),
    invited_by  INTEGER REFERENCES dashboard_users(id) ON DELETE SET NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    accepted_at INTEGER
);
CREATE INDEX dashboard_invitations_app ON dashboard_invitations (app_id, id);

CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY,
    at           INTEGER NOT NULL,
    app_id       INTEGER,
    instance     INTEGER NOT NULL DEFAULT 0,
    actor_type   TEXT    NOT NULL,
    actor_id     INTEGER,
    actor_name   TEXT    NOT NULL DEFAULT '',
    actor_prefix TEXT    NOT NULL DEFAULT '',
    action       TEXT    NOT NULL,
    object_type  TEXT    NOT NULL,
    object_id    INTEGER,
    object_name  TEXT    NOT NULL DEFAULT '',
    request_id   TEXT    NOT NULL DEFAULT '',
    client_addr  TEXT    NOT NULL DEFAULT '',
    changes      TEXT
);
CREATE INDEX audit_log_app ON audit_log (app_id, id);
CREATE INDEX audit_log_object ON audit_log (app_id, object_type, object_id, id);
CREATE INDEX audit_log_instance ON audit_log (instance, id);
CREATE INDEX audit_log_at ON audit_log (at);

CREATE TABLE dashboard_setup (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    token      TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE TABLE dashboard_signin_failures (
    key      TEXT    PRIMARY KEY,
    first_at INTEGER NOT NULL,
    failures INTEGER NOT NULL
);
CREATE INDEX dashboard_signin_failures_first ON dashboard_signin_failures (first_at);

CREATE TABLE dashboard_password_resets (
    id         INTEGER PRIMARY KEY,
    token_hash BLOB    NOT NULL UNIQUE,
    user_id    INTEGER NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    created_by INTEGER REFERENCES dashboard_users(id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX dashboard_password_resets_user ON dashboard_password_resets (user_id);

CREATE TABLE instance_settings (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    default_plan TEXT    NOT NULL
);

CREATE TABLE "api_keys" (
    id          INTEGER PRIMARY KEY,
    app_id      INTEGER REFERENCES apps(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('admin','read','client','instance')),
    name        TEXT    NOT NULL DEFAULT '',
    key_hash    BLOB    NOT NULL UNIQUE,
    key_prefix  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER,
    CHECK ((role = 'instance') = (app_id IS NULL))
);
CREATE INDEX api_keys_app ON api_keys(app_id);

CREATE TABLE metrics (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id       INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    key          TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    description  TEXT    NOT NULL DEFAULT '',
    type         TEXT    NOT NULL CHECK (type IN ('conversion','count','sum')),
    event_id     TEXT    NOT NULL,
    property     TEXT,
    window_hours REAL,
    direction    TEXT    NOT NULL DEFAULT 'increase' CHECK (direction IN ('increase','decrease')),
    cap          REAL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (app_id, key)
);

CREATE TABLE campaign_metrics (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    metric_id   INTEGER NOT NULL REFERENCES metrics(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('secondary','guardrail')),
    position    INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, metric_id)
) WITHOUT ROWID;
CREATE INDEX campaign_metrics_metric ON campaign_metrics(metric_id, campaign_id);

CREATE TABLE metric_values (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    metric_id   INTEGER NOT NULL REFERENCES metrics(id) ON DELETE CASCADE,
    user_key    TEXT    NOT NULL,
    variant_id  INTEGER NOT NULL,
    value       REAL    NOT NULL,
    PRIMARY KEY (campaign_id, metric_id, user_key)
) WITHOUT ROWID;
CREATE INDEX metric_values_metric ON metric_values(metric_id);

CREATE TABLE metric_sums (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    metric_id   INTEGER NOT NULL REFERENCES metrics(id) ON DELETE CASCADE,
    variant_id  INTEGER NOT NULL,
    sum         REAL    NOT NULL DEFAULT 0,
    sum_sq      REAL    NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, metric_id, variant_id)
) WITHOUT ROWID;
CREATE INDEX metric_sums_metric ON metric_sums(metric_id);

CREATE TABLE guardrail_regressions (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    metric_id   INTEGER NOT NULL REFERENCES metrics(id) ON DELETE CASCADE,
    variant_id  INTEGER NOT NULL REFERENCES campaign_variants(id) ON DELETE CASCADE,
    action      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, metric_id, variant_id)
) WITHOUT ROWID;
CREATE INDEX guardrail_regressions_metric ON guardrail_regressions(metric_id);
CREATE INDEX guardrail_regressions_variant ON guardrail_regressions(variant_id);

CREATE TABLE session_links (
    app_id     INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    session_id TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    linked_at  INTEGER NOT NULL,
    PRIMARY KEY (app_id, session_id)
) WITHOUT ROWID;
CREATE INDEX session_links_user ON session_links(app_id, user_id);

CREATE TABLE erasure_state (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    salt  BLOB    NOT NULL,
    count INTEGER NOT NULL
);

CREATE TABLE erasure_scrubs (
    id           INTEGER PRIMARY KEY,
    requested_at INTEGER NOT NULL
);

CREATE TABLE metric_moves (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    moves  TEXT NOT NULL,
    merged INTEGER NOT NULL DEFAULT 0
);
