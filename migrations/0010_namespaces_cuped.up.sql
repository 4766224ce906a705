-- Namespaces: a campaign may take the users of one range [start, end) of a
-- namespace, so that campaigns in one namespace whose ranges do not overlap
-- never share a user. NULL namespace_id: no namespace.
ALTER TABLE campaigns ADD COLUMN namespace_id TEXT;
ALTER TABLE campaigns ADD COLUMN namespace_start REAL;
ALTER TABLE campaigns ADD COLUMN namespace_end REAL;
CREATE INDEX campaigns_namespace ON campaigns(app_id, namespace_id) WHERE namespace_id IS NOT NULL;

-- CUPED: each assignment keeps its covariate (the user's goal events in
-- the lookback days before the first assignment), and each variant the
-- sums that analytics needs beside impressions (n) and conversions (the
-- sum of Y): the sums of X, X² and X·Y. Campaigns that already assigned
-- users have no covariates for them, so they start with CUPED off; drafts
-- take the default.
ALTER TABLE campaigns ADD COLUMN cuped_lookback_days INTEGER NOT NULL DEFAULT 14
    CHECK (cuped_lookback_days BETWEEN 0 AND 90);
UPDATE campaigns SET cuped_lookback_days = 0 WHERE status <> 'draft';
ALTER TABLE assignments ADD COLUMN covariate INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaign_variants ADD COLUMN cuped_sum_x INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaign_variants ADD COLUMN cuped_sum_xx INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaign_variants ADD COLUMN cuped_sum_xy INTEGER NOT NULL DEFAULT 0;
