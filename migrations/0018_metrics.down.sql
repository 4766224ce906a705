DROP INDEX metric_sums_metric;
DROP TABLE metric_sums;
DROP INDEX metric_values_metric;
DROP TABLE metric_values;
ALTER TABLE campaigns DROP COLUMN guardrail_action;
DROP INDEX campaign_metrics_metric;
DROP TABLE campaign_metrics;
DROP TABLE metrics;
