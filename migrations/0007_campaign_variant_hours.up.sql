-- Per-variant impressions and conversions per hour, written in the same
-- transaction as the variant's running counters, so the results page draws
-- its daily charts from a few hundred rows instead of the assignments. Hours
-- rather than days, so days can be cut in each campaign's own timezone.
-- hour is the Unix time in milliseconds divided by 3,600,000.
CREATE TABLE campaign_variant_hours (
    variant_id  INTEGER NOT NULL REFERENCES campaign_variants(id) ON DELETE CASCADE,
    hour        INTEGER NOT NULL,
    impressions INTEGER NOT NULL DEFAULT 0,
    conversions INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (variant_id, hour)
) WITHOUT ROWID;

-- Campaigns that already ran get their history from the assignments.
INSERT INTO campaign_variant_hours (variant_id, hour, impressions)
    SELECT variant_id, assigned_at / 3600000, COUNT(*) FROM assignments
    WHERE variant_id IN (SELECT id FROM campaign_variants)
    GROUP BY 1, 2;

INSERT INTO campaign_variant_hours (variant_id, hour, conversions)
    SELECT variant_id, converted_at / 3600000, COUNT(*) FROM assignments
    WHERE converted_at IS NOT NULL AND variant_id IN (SELECT id FROM campaign_variants)
    GROUP BY 1, 2
    ON CONFLICT (variant_id, hour) DO UPDATE SET conversions = excluded.conversions;
