DROP TABLE campaign_variant_hours;
