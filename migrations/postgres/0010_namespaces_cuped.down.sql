ALTER TABLE campaign_variants DROP COLUMN cuped_sum_xy;
ALTER TABLE campaign_variants DROP COLUMN cuped_sum_xx;
ALTER TABLE campaign_variants DROP COLUMN cuped_sum_x;
ALTER TABLE assignments DROP COLUMN covariate;
ALTER TABLE campaigns DROP COLUMN cuped_lookback_days;
DROP INDEX campaigns_namespace;
ALTER TABLE campaigns DROP COLUMN namespace_end;
ALTER TABLE campaigns DROP COLUMN namespace_start;
ALTER TABLE campaigns DROP COLUMN namespace_id;
