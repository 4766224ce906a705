-- Metrics: what an app measures beyond a campaign's goal. A campaign names
-- some of them as secondary metrics or guardrails (campaign_metrics).
-- AUTOINCREMENT: a deleted metric's id is never given to a new one, so an
-- old link to it answers 404 rather than another metric.
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

-- A campaign's secondary metrics and guardrails, in the order given.
-- Deleting a metric that a draft, active or paused campaign uses is
-- refused by the store; completed and archived ones lose it with it.
CREATE TABLE campaign_metrics (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    metric_id   INTEGER NOT NULL REFERENCES metrics(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('secondary','guardrail')),
    position    INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, metric_id)
) WITHOUT ROWID;
CREATE INDEX campaign_metrics_metric ON campaign_metrics(metric_id, campaign_id);

-- What a regressed guardrail does besides the webhook.
ALTER TABLE campaigns ADD COLUMN guardrail_action TEXT NOT NULL DEFAULT 'alert'
    CHECK (guardrail_action IN ('alert','pause'));

-- Each assigned user's running value of each metric of a campaign, before
-- the metric's cap (so a new event moves the capped value exactly), and
-- per variant the sums of the capped values and of their squares. With the
-- variant's impressions as n, they make a metric's mean and variance
-- without reading any user: users without an event add 0 to both.
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

-- The guardrail regressions already reported: one row per campaign, metric
-- and variant, written in the transaction that queues the webhook, so the
-- scheduler reports each once whichever replica runs it, and after a
-- restart.
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
