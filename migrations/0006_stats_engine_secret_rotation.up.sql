-- Which statistics decide a campaign's significance and winner:
-- 'frequentist' (fixed-horizon z-test), 'sequential' (always-valid mSPRT)
-- or 'bayesian' (chance to beat the control).
ALTER TABLE campaigns ADD COLUMN stats_engine TEXT NOT NULL DEFAULT 'frequentist'
    CHECK (stats_engine IN ('frequentist','sequential','bayesian'));

-- Secret rotation: the secret replaced by the last rotation keeps signing
-- beside the new one until previous_secret_expires_at (milliseconds), so
-- receivers can switch without dropping deliveries.
ALTER TABLE webhooks ADD COLUMN previous_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at INTEGER;
ALTER TABLE webhooks ADD COLUMN secret_rotated_at INTEGER;
