-- Version 17: campaign keys.
--
-- A key names a campaign the same way in every database (staging,
-- production), where ids differ: the SDK's variant route and the
-- OpenFeature flag evaluations take it. The column is NULL only between
-- this file and the store's backfill, which gives every existing campaign
-- a key made from its name right after the migrations ran (store
-- backfillCampaignKeys): deduplicating per app ("-2", "-3"…) is the same
-- code that keys a new campaign, so the two can never disagree. NULLs are
-- distinct in a unique index, so the index holds before the backfill too.
ALTER TABLE campaigns ADD COLUMN key TEXT;
CREATE UNIQUE INDEX campaigns_app_key ON campaigns(app_id, key);
