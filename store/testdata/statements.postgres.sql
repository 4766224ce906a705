-- Every SQL text the store runs on postgres, by the function that runs it
-- (store/statements_test.go; go test ./store -run TestStatementRegistry -update).

-- DB.CampaignAnalytics#1 (analytics.go)
SELECT status, stats_engine, cuped_lookback_days FROM campaigns WHERE id = $1 AND app_id = $2;

-- DB.SetDefaultPlan#1 (apps.go)
INSERT INTO instance_settings (id, default_plan) VALUES (1, $1)
			ON CONFLICT (id) DO UPDATE SET default_plan = excluded.default_plan
			WHERE instance_settings.default_plan <> excluded.default_plan;

-- DB.FindDefaultPlan#1 (apps.go)
SELECT default_plan FROM instance_settings WHERE id = 1;

-- DB.createApp#1 (apps.go)
SELECT default_plan FROM instance_settings WHERE id = 1;

-- DB.createApp#2 (apps.go)
INSERT INTO apps (name, plan, rate_limit, created_at, allowed_origins, event_retention_days, form_retention_days) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- DB.FindAppByID#1 (apps.go)
SELECT name, plan, rate_limit FROM apps WHERE id = $1;

-- DB.createKey#1 (apps.go)
SELECT 1 FROM apps WHERE id = $1;

-- DB.createKey#2 (apps.go)
INSERT INTO api_keys (app_id, role, name, key_hash, key_prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id;

-- DB.findKeys#1 (apps.go)
SELECT id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE app_id = $1 ORDER BY id;

-- DB.revokeKey#1 (apps.go)
SELECT id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE id = $1;

-- DB.revokeKey#2 (apps.go)
UPDATE api_keys SET revoked_at = $1 WHERE id = $2;

-- DB.revokeKey#3 (apps.go)
SELECT id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE id = $1;

-- DB.loadKey#1 (apps.go)
SELECT k.id, COALESCE(k.app_id, 0), k.role, k.name, k.key_prefix, k.created_at, k.revoked_at, COALESCE(a.rate_limit, 0)
		FROM api_keys k LEFT JOIN apps a ON a.id = k.app_id WHERE k.key_hash = $1;

-- DB.FindApps#1 (apps_admin.go)
SELECT id, name, plan, rate_limit FROM apps ORDER BY id;

-- Tx.appFields#1 (apps_admin.go)
SELECT name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps WHERE id = $1;

-- DB.UpdateApp#1 (apps_admin.go)
UPDATE apps SET name = $1, plan = $2, rate_limit = $3 WHERE id = $4;

-- DB.UpdateApp#2 (apps_admin.go)
UPDATE apps SET allowed_origins = $1 WHERE id = $2;

-- DB.UpdateApp#3 (apps_admin.go)
UPDATE apps SET event_retention_days = $1 WHERE id = $2;

-- DB.UpdateApp#4 (apps_admin.go)
UPDATE apps SET form_retention_days = $1 WHERE id = $2;

-- DB.DeleteApp#1 [1/8] (apps_admin.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = $1;

-- DB.DeleteApp#1 [2/8] (apps_admin.go)
SELECT COUNT(*) FROM content_views WHERE app_id = $1;

-- DB.DeleteApp#1 [3/8] (apps_admin.go)
SELECT COUNT(*) FROM audiences WHERE app_id = $1;

-- DB.DeleteApp#1 [4/8] (apps_admin.go)
SELECT COUNT(*) FROM metrics WHERE app_id = $1;

-- DB.DeleteApp#1 [5/8] (apps_admin.go)
SELECT COUNT(*) FROM users WHERE app_id = $1;

-- DB.DeleteApp#1 [6/8] (apps_admin.go)
SELECT COUNT(*) FROM events WHERE app_id = $1;

-- DB.DeleteApp#1 [7/8] (apps_admin.go)
SELECT COUNT(*) FROM webhooks WHERE app_id = $1;

-- DB.DeleteApp#1 [8/8] (apps_admin.go)
SELECT COUNT(*) FROM form_submissions WHERE app_id = $1;

-- DB.DeleteApp#2 [1/5] (apps_admin.go)
DELETE FROM events WHERE app_id = $1;

-- DB.DeleteApp#2 [2/5] (apps_admin.go)
DELETE FROM users WHERE app_id = $1;

-- DB.DeleteApp#2 [3/5] (apps_admin.go)
DELETE FROM assignments WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = $1);

-- DB.DeleteApp#2 [4/5] (apps_admin.go)
DELETE FROM campaigns WHERE app_id = $1;

-- DB.DeleteApp#2 [5/5] (apps_admin.go)
DELETE FROM apps WHERE id = $1;

-- DB.FindAppSettings#1 (apps_admin.go)
SELECT id, name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps WHERE id = $1;

-- DB.FindAllAppSettings#1 (apps_admin.go)
SELECT id, name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps ORDER BY id;

-- DB.loadAudienceUser#1 (audience_eval.go)
SELECT a.status, a.updated_at, u.attributes FROM audiences AS a
		LEFT JOIN users AS u ON u.app_id = a.app_id AND u.user_id = $1 WHERE a.id = $2 AND a.app_id = $3;

-- DB.loadAudienceUser#2 (audience_eval.go)
SELECT definition, updated_at FROM audiences WHERE id = $1;

-- userFacts#1 [1/4] (audience_eval.go)
SELECT event_id, ts, id, NULL FROM events WHERE app_id = $1 AND user_id = $2 AND event_id IN ($3, $4);

-- userFacts#1 [2/4] (audience_eval.go)
SELECT event_id, ts, id, NULL FROM events WHERE app_id = $1 AND user_id = $2 AND event_id IN ($3, $4);

-- userFacts#1 [3/4] (audience_eval.go)
SELECT event_id, ts, id, NULL FROM events WHERE app_id = $1 AND user_id = $2 AND event_id IN ($3, $4) AND ts >= $5;

-- userFacts#1 [4/4] (audience_eval.go)
SELECT event_id, ts, id, NULL FROM events WHERE app_id = $1 AND user_id = $2 AND event_id IN ($3, $4) AND ts >= $5;

-- DB.recountApp#1 (audience_eval.go)
UPDATE audiences SET customer_count = $1, last_calculated_at = $2 WHERE id = $3 AND app_id = $4 AND updated_at = $5;

-- DB.scanAudienceUsers#1 [1/2] (audience_eval.go)
SELECT user_id FROM users WHERE app_id = $1 AND user_id > $2 ORDER BY user_id LIMIT $3;

-- DB.scanAudienceUsers#1 [2/2] (audience_eval.go)
SELECT user_id, attributes FROM users WHERE app_id = $1 AND user_id > $2 ORDER BY user_id LIMIT $3;

-- DB.scanAudienceUsers#2 [1/2] (audience_eval.go)
SELECT u.key * $1 + CASE e.event_id WHEN $2 THEN 0 WHEN $3 THEN 1 END, e.ts, e.id, NULL FROM (SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST($4 AS JSONB)) WITH ORDINALITY) AS u CROSS JOIN LATERAL (SELECT e.event_id, e.ts, e.id FROM events AS e WHERE e.app_id = $5 AND e.user_id = u.value AND e.event_id IN ($6,$7) OFFSET 0) AS e;

-- DB.scanAudienceUsers#2 [2/2] (audience_eval.go)
SELECT u.key * $1 + CASE e.event_id WHEN $2 THEN 0 WHEN $3 THEN 1 END, e.ts, e.id, NULL FROM (SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST($4 AS JSONB)) WITH ORDINALITY) AS u CROSS JOIN LATERAL (SELECT e.event_id, e.ts, e.id FROM events AS e WHERE e.app_id = $5 AND e.user_id = u.value AND e.event_id IN ($6,$7) AND e.ts >= $8 OFFSET 0) AS e;

-- DB.CreateAudience#1 (audiences.go)
INSERT INTO audiences (app_id, name, description, status, definition, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- DB.FindAudienceByID#1 (audiences.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE id = $1 AND app_id = $2;

-- DB.UpdateAudience#1 (audiences.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE id = $1 AND app_id = $2;

-- DB.UpdateAudience#2 (audiences.go)
UPDATE audiences SET name = $1, description = $2, status = $3, definition = $4, updated_at = GREATEST($5, updated_at + 1) WHERE id = $6;

-- DB.DeleteAudience#1 (audiences.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE id = $1 AND app_id = $2;

-- DB.DeleteAudience#2 (audiences.go)
SELECT id FROM campaigns WHERE audience_id = $1 AND status IN ('draft','active','paused') ORDER BY id;

-- DB.DeleteAudience#3 (audiences.go)
UPDATE campaigns SET audience_id = NULL WHERE audience_id = $1;

-- DB.DeleteAudience#4 (audiences.go)
DELETE FROM audiences WHERE id = $1;

-- DB.RecountAudiences#1 (audiences.go)
SELECT id, app_id, definition, updated_at FROM audiences WHERE status = 'active' ORDER BY app_id, id;

-- Tx.audit#1 (audit.go)
INSERT INTO audit_log (at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14);

-- DB.FindAuditLog#1 [1/4] (audit.go)
SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE 1 = 1 ORDER BY id DESC LIMIT $1;

-- DB.FindAuditLog#1 [2/4] (audit.go)
SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE 1 = 1 AND app_id = $1 AND instance = $2 AND object_type = $3 AND object_id = $4 AND actor_type = $5 AND action = $6 AND at >= $7 AND at <= $8 AND id < $9 ORDER BY id DESC LIMIT $10;

-- DB.FindAuditLog#1 [3/4] (audit.go)
SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE 1 = 1 AND app_id = $1 AND instance = $2 AND object_type = $3 AND object_id = $4 AND actor_type = $5 AND actor_id = $6 AND action = $7 AND at >= $8 AND at <= $9 AND id < $10 ORDER BY id DESC LIMIT $11;

-- DB.FindAuditLog#1 [4/4] (audit.go)
SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE 1 = 1 AND app_id = $1 AND instance = $2 AND object_type = $3 AND object_id = $4 AND actor_type = $5 AND lower(actor_name) = lower($6) AND action = $7 AND at >= $8 AND at <= $9 AND id < $10 ORDER BY id DESC LIMIT $11;

-- DB.DeleteAuditBefore#1 (audit.go)
DELETE FROM audit_log WHERE at < $1;

-- DB.DeleteAuditBefore#2 (audit.go)
DELETE FROM dashboard_invitations WHERE expires_at < $1;

-- DB.DeleteAuditBefore#3 (audit.go)
DELETE FROM dashboard_password_resets WHERE expires_at < $1;

-- DB.activeWithMetrics#1 (cache.go)
SELECT id FROM campaigns WHERE app_id = $1 AND status = 'active' ORDER BY id;

-- DB.loadLive#1 (cache.go)
SELECT app_id, status, start_at, end_at, audience_id, assignment_type, goal_event_id,
		namespace_id, namespace_start, namespace_end, cuped_lookback_days, key FROM campaigns WHERE id = $1;

-- DB.loadLive#2 (cache.go)
SELECT v.id, v.name, v.traffic_allocation, c.id, c.name, c.status, c.items
		FROM campaign_variants v LEFT JOIN content_views c ON c.id = v.content_view_id
		WHERE v.campaign_id = $1 ORDER BY v.id;

-- DB.loadLiveMetrics#1 (cache.go)
SELECT m.id, m.event_id, m.type, m.property, m.window_hours, m.cap
		FROM campaign_metrics cm JOIN metrics m ON m.id = cm.metric_id WHERE cm.campaign_id = $1 ORDER BY m.id;

-- Tx.checkRefs#1 (campaign_input.go)
SELECT status FROM content_views WHERE id = $1 AND app_id = $2;

-- Tx.checkRefs#2 (campaign_input.go)
SELECT 1 FROM metrics WHERE id = $1 AND app_id = $2;

-- Tx.checkRefs#3 (campaign_input.go)
SELECT status FROM audiences WHERE id = $1 AND app_id = $2;

-- Tx.campaignKeyTaken#1 (campaign_keys.go)
SELECT id FROM campaigns WHERE app_id = $1 AND key = $2;

-- DB.backfillCampaignKeys#1 (campaign_keys.go)
SELECT id, app_id, name FROM campaigns WHERE key IS NULL ORDER BY id;

-- DB.backfillCampaignKeys#2 (campaign_keys.go)
UPDATE campaigns SET key = $1 WHERE id = $2 AND key IS NULL;

-- DB.CampaignIDByKey#1 (campaign_keys.go)
SELECT id FROM campaigns WHERE app_id = $1 AND key = $2;

-- DB.CreateCampaign#1 (campaigns.go)
INSERT INTO campaigns (app_id, name, key, description, status, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
				namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 'draft', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING id;

-- Tx.insertCampaignMetrics#1 (campaigns.go)
INSERT INTO campaign_metrics (campaign_id, metric_id, role, position) VALUES ($1, $2, $3, $4);

-- attachMetrics#1 (campaigns.go)
SELECT campaign_id, metric_id, role FROM campaign_metrics
		WHERE campaign_id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS JSONB))) ORDER BY campaign_id, position;

-- Tx.insertVariants#1 (campaigns.go)
INSERT INTO campaign_variants (campaign_id, name, content_view_id, traffic_allocation, is_control) VALUES ($1, $2, $3, $4, $5);

-- findCampaign#1 (campaigns.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE id = $1 AND app_id = $2;

-- findVariants#1 (campaigns.go)
SELECT campaign_id, id, name, content_view_id, traffic_allocation, is_control, impressions, conversions, cuped_sum_x, cuped_sum_xx, cuped_sum_xy FROM campaign_variants WHERE campaign_id = $1 ORDER BY id;

-- DB.attachVariants#1 (campaigns.go)
SELECT campaign_id, id, name, content_view_id, traffic_allocation, is_control, impressions, conversions, cuped_sum_x, cuped_sum_xx, cuped_sum_xy FROM campaign_variants
		WHERE campaign_id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS JSONB))) ORDER BY campaign_id, id;

-- DB.UpdateCampaign#1 [1/2] (campaigns.go)
UPDATE campaigns SET updated_at = $1 WHERE id = $2;

-- DB.UpdateCampaign#1 [2/2] (campaigns.go)
UPDATE campaigns SET updated_at = $1, name = $2, key = $3, description = $4, start_at = $5, end_at = $6, timezone = $7, goal_event_id = $8, audience_id = $9, assignment_type = $10, stats_engine = $11, namespace_id = $12, namespace_start = $13, namespace_end = $14, cuped_lookback_days = $15, guardrail_action = $16 WHERE id = $17;

-- DB.UpdateCampaign#2 (campaigns.go)
DELETE FROM campaign_variants WHERE campaign_id = $1;

-- DB.UpdateCampaign#3 (campaigns.go)
DELETE FROM campaign_metrics WHERE campaign_id = $1;

-- DB.UnarchiveCampaign#1 (campaigns.go)
UPDATE campaigns SET status = $1, archived_from = NULL, updated_at = $2 WHERE id = $3 AND status = 'archived';

-- DB.DeleteCampaign#1 (campaigns.go)
DELETE FROM assignments WHERE campaign_id = $1;

-- DB.DeleteCampaign#2 (campaigns.go)
DELETE FROM campaigns WHERE id = $1 AND status = $2;

-- DB.CreateContent#1 (content.go)
INSERT INTO content_views (app_id, name, status, items, published_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- DB.FindContentByID#1 (content.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE id = $1 AND app_id = $2;

-- Tx.usedByLiveCampaign#1 (content.go)
SELECT COUNT(*) FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE v.content_view_id = $1 AND c.status IN ('draft','active','paused');

-- Tx.runningCampaignsShowing#1 (content.go)
SELECT DISTINCT c.id FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE v.content_view_id = $1 AND c.status IN ('active','paused') ORDER BY c.id;

-- DB.UpdateContent#1 (content.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE id = $1 AND app_id = $2;

-- DB.UpdateContent#2 (content.go)
UPDATE content_views SET name = $1, status = $2, items = $3, published_at = $4, updated_at = $5 WHERE id = $6;

-- DB.DeleteContent#1 (content.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE id = $1 AND app_id = $2;

-- DB.DeleteContent#2 (content.go)
DELETE FROM content_views WHERE id = $1;

-- Tx.recordCovariates#1 (cuped.go)
UPDATE assignments SET covariate = $1 WHERE campaign_id = $2 AND user_key = $3;

-- Tx.countCovariates#1 [1/2] (cuped.go)
SELECT u.key, e.ts, e.id, NULL FROM (SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST($1 AS JSONB)) WITH ORDINALITY) AS u CROSS JOIN LATERAL (SELECT e.event_id, e.ts, e.id FROM events AS e WHERE e.app_id = $2 AND e.user_id = u.value AND e.event_id = $3 AND e.ts >= $4 OFFSET 0) AS e UNION ALL SELECT u.key, e.ts, e.id, NULL FROM (SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST($5 AS JSONB)) WITH ORDINALITY) AS u CROSS JOIN LATERAL (SELECT l.app_id, l.session_id FROM session_links AS l WHERE l.app_id = $6 AND l.user_id = u.value OFFSET 0) AS l CROSS JOIN LATERAL (SELECT e.event_id, e.ts, e.id FROM events AS e WHERE e.app_id = l.app_id AND e.session_id = l.session_id AND e.user_id IS NULL AND e.event_id = $7 AND e.ts >= $8 OFFSET 0) AS e;

-- Tx.countCovariates#1 [2/2] (cuped.go)
SELECT u.key, e.ts, e.id, NULL FROM (SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST($1 AS JSONB)) WITH ORDINALITY) AS u CROSS JOIN LATERAL (SELECT e.event_id, e.ts, e.id FROM events AS e WHERE e.app_id = $2 AND e.session_id = u.value AND e.user_id IS NULL AND e.event_id = $3 AND e.ts >= $4 OFFSET 0) AS e;

-- DB.CampaignsUsingAudience#1 (dashboard_reads.go)
SELECT id, name, status FROM campaigns WHERE app_id = $1 AND audience_id = $2 ORDER BY id DESC;

-- DB.EventCounts#1 (dashboard_reads.go)
SELECT event_id, SUM(CASE WHEN ts >= $1 THEN 1 ELSE 0 END), SUM(CASE WHEN ts >= $2 THEN 1 ELSE 0 END), COUNT(*)
		FROM events WHERE app_id = $3 AND ts >= $4
		GROUP BY event_id ORDER BY COUNT(*) DESC, event_id LIMIT 200;

-- DB.FindUserAssignments#1 (dashboard_reads.go)
SELECT c.id, c.name, c.status, a.variant_id, COALESCE(v.name, ''), a.assigned_at, a.converted_at
		FROM campaigns AS c JOIN assignments AS a ON a.campaign_id = c.id AND a.user_key = $1
		LEFT JOIN campaign_variants AS v ON v.id = a.variant_id
		WHERE c.app_id = $2 ORDER BY a.assigned_at DESC, c.id DESC;

-- Tx.insertDashboardUser#1 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users WHERE email = $1;

-- Tx.insertDashboardUser#2 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users;

-- Tx.insertDashboardUser#3 (dashboard_users.go)
INSERT INTO dashboard_users (email, password_hash, owner, created_at) VALUES ($1, $2, $3, $4) RETURNING id;

-- DB.CreateDashboardUser#1 (dashboard_users.go)
DELETE FROM dashboard_setup;

-- DB.FindDashboardUsers#1 (dashboard_users.go)
SELECT id, email, owner, created_at FROM dashboard_users ORDER BY id;

-- DB.FindDashboardUsers#2 (dashboard_users.go)
SELECT m.user_id, m.app_id, a.name, m.role FROM app_members m JOIN apps a ON a.id = m.app_id ORDER BY m.app_id;

-- Tx.findUserByEmail#1 (dashboard_users.go)
SELECT id, email, owner, created_at FROM dashboard_users WHERE email = $1;

-- Tx.keepsAnOwner#1 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users WHERE owner = $1;

-- Tx.keepsAnOwner#2 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users;

-- DB.DeleteDashboardUser#1 (dashboard_users.go)
DELETE FROM dashboard_users WHERE id = $1;

-- DB.SetDashboardOwner#1 (dashboard_users.go)
UPDATE dashboard_users SET owner = $1 WHERE id = $2;

-- DB.AuthenticateDashboardUser#1 (dashboard_users.go)
SELECT id, email, owner, password_hash, created_at FROM dashboard_users WHERE email = $1;

-- DB.CreateSetupToken#1 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users;

-- DB.CreateSetupToken#2 (dashboard_users.go)
DELETE FROM dashboard_setup;

-- DB.CreateSetupToken#3 (dashboard_users.go)
INSERT INTO dashboard_setup (id, token, created_at, expires_at) VALUES (1, $1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET token = excluded.token, created_at = excluded.created_at, expires_at = excluded.expires_at
			WHERE dashboard_setup.expires_at <= excluded.created_at;

-- DB.CreateSetupToken#4 (dashboard_users.go)
SELECT token FROM dashboard_setup WHERE id = 1;

-- DB.CheckSetupToken#1 (dashboard_users.go)
SELECT token FROM dashboard_setup WHERE id = 1 AND expires_at > $1;

-- DB.CompleteSetup#1 (dashboard_users.go)
DELETE FROM dashboard_setup WHERE id = 1 AND token = $1 AND expires_at > $2;

-- DB.CompleteSetup#2 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users;

-- DB.CreateDashboardSession#1 (dashboard_users.go)
SELECT id, email, owner, created_at FROM dashboard_users WHERE id = $1;

-- DB.CreateDashboardSession#2 (dashboard_users.go)
DELETE FROM dashboard_sessions WHERE expires_at <= $1;

-- DB.CreateDashboardSession#3 (dashboard_users.go)
INSERT INTO dashboard_sessions (token_hash, user_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5);

-- DB.FindDashboardSession#1 (dashboard_users.go)
SELECT u.id, u.email, u.owner, u.created_at, s.csrf_token, s.expires_at
		FROM dashboard_sessions s JOIN dashboard_users u ON u.id = s.user_id
		WHERE s.token_hash = $1 AND s.expires_at > $2;

-- DB.DeleteDashboardSession#1 (dashboard_users.go)
DELETE FROM dashboard_sessions WHERE token_hash = $1;

-- DB.FindAllApps#1 (dashboard_users.go)
SELECT id, name, plan, rate_limit FROM apps ORDER BY id;

-- DB.EachFormSubmission#1 (dashboard_users.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at
		FROM form_submissions WHERE app_id = $1 AND content_view_id = $2 ORDER BY id;

-- Tx.insertID#1 [1/12] (db.go)
INSERT INTO apps (name, plan, rate_limit, created_at, allowed_origins, event_retention_days, form_retention_days) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- Tx.insertID#1 [2/12] (db.go)
INSERT INTO api_keys (app_id, role, name, key_hash, key_prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id;

-- Tx.insertID#1 [3/12] (db.go)
INSERT INTO audiences (app_id, name, description, status, definition, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- Tx.insertID#1 [4/12] (db.go)
INSERT INTO campaigns (app_id, name, key, description, status, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
				namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 'draft', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING id;

-- Tx.insertID#1 [5/12] (db.go)
INSERT INTO content_views (app_id, name, status, items, published_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- Tx.insertID#1 [6/12] (db.go)
INSERT INTO dashboard_users (email, password_hash, owner, created_at) VALUES ($1, $2, $3, $4) RETURNING id;

-- Tx.insertID#1 [7/12] (db.go)
INSERT INTO form_submissions (app_id, content_view_id, data, user_id, session_id, environment, submitted_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- Tx.insertID#1 [8/12] (db.go)
INSERT INTO dashboard_invitations (token_hash, email, app_id, role, invited_by, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- Tx.insertID#1 [9/12] (db.go)
INSERT INTO metrics (app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id;

-- Tx.insertID#1 [10/12] (db.go)
INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5) RETURNING id;

-- Tx.insertID#1 [11/12] (db.go)
INSERT INTO dashboard_password_resets (token_hash, user_id, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING id;

-- Tx.insertID#1 [12/12] (db.go)
INSERT INTO webhooks (app_id, url, events, secret, headers, max_retries, timeout_seconds,
			description, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id;

-- Tx.eraseUser#1 (erasure.go)
SELECT 1 FROM apps WHERE id = $1;

-- Tx.eraseUser#2 (erasure.go)
DELETE FROM form_submissions WHERE app_id = $1 AND session_id = $2;

-- Tx.eraseUser#3 (erasure.go)
DELETE FROM assignments
			WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = $1) AND user_key = $2;

-- Tx.eraseUser#4 (erasure.go)
DELETE FROM metric_values
			WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = $1)
				AND metric_id IN (SELECT id FROM metrics WHERE app_id = $2) AND user_key = $3;

-- Tx.eraseUser#5 (erasure.go)
DELETE FROM form_submissions WHERE app_id = $1 AND user_id = $2;

-- Tx.eraseUser#6 (erasure.go)
DELETE FROM users WHERE app_id = $1 AND user_id = $2;

-- Tx.eraseUser#7 (erasure.go)
DELETE FROM session_links WHERE app_id = $1 AND user_id = $2;

-- linkedSessions#1 (erasure.go)
SELECT session_id FROM session_links WHERE app_id = $1 AND user_id = $2 ORDER BY session_id;

-- Tx.redactDeliveries#1 (erasure.go)
SELECT d.id, d.payload FROM webhook_deliveries d
			WHERE d.webhook_id IN (SELECT id FROM webhooks WHERE app_id = $1) AND d.redacted_at IS NULL AND position($2 IN d.payload) > 0;

-- Tx.redactDeliveries#2 (erasure.go)
UPDATE webhook_deliveries SET payload = $1, redacted_at = $2 WHERE id = $3;

-- Tx.recordErasure#1 (erasure.go)
INSERT INTO erasure_state (id, salt, count) VALUES (1, $1, 1)
		ON CONFLICT (id) DO UPDATE SET count = erasure_state.count + 1 RETURNING salt, count;

-- Tx.recordErasure#2 (erasure.go)
INSERT INTO erasure_scrubs (requested_at) VALUES ($1);

-- DB.noticeErasures#1 (erasure.go)
SELECT count FROM erasure_state WHERE id = 1;

-- DB.ScrubErasures#1 (erasure.go)
SELECT COALESCE(MAX(id), 0), COUNT(*) FROM erasure_scrubs;

-- DB.ScrubErasures#2 (erasure.go)
DELETE FROM erasure_scrubs WHERE id <= $1;

-- Tx.logEvent#1 (events.go)
SELECT id, event_id, ts FROM events WHERE app_id = $1 AND log_id = $2;

-- Tx.convertEach#1 (events.go)
UPDATE assignments SET converted_at = $1 WHERE campaign_id = $2 AND user_key = $3 AND converted_at IS NULL AND assigned_at <= $4 RETURNING variant_id, covariate;

-- Tx.convertEach#2 [1/2] (events.go)
UPDATE assignments SET converted_at = $1 WHERE campaign_id = $2 AND NOT EXISTS (SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = $3 AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = $4 AND l.session_id = $5)
		AND user_key = $6 AND converted_at IS NULL AND assigned_at <= $7 RETURNING variant_id, covariate;

-- Tx.convertEach#2 [2/2] (events.go)
UPDATE assignments SET converted_at = $1 WHERE campaign_id = $2 AND user_key = coalesce((SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = $3 AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = $4 AND l.session_id = $5), $6)
		AND converted_at IS NULL AND assigned_at <= $7 RETURNING variant_id, covariate;

-- DB.FindEvents#1 [1/3] (events.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events WHERE app_id = $1 ORDER BY ts DESC, id DESC LIMIT $2;

-- DB.FindEvents#1 [2/3] (events.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events WHERE app_id = $1 AND user_id = $2 ORDER BY ts DESC, id DESC LIMIT $3;

-- DB.FindEvents#1 [3/3] (events.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events WHERE app_id = $1 AND event_id = $2 AND user_id = $3 AND ts >= $4 AND ts <= $5 AND (ts, id) < (SELECT ts, id FROM events WHERE id = $6) ORDER BY ts DESC, id DESC LIMIT $7;

-- Tx.expireBatch#1 (events.go)
SELECT id, user_id, session_id, event_id, ts FROM events WHERE app_id = $1 AND ts < $2 ORDER BY ts LIMIT $3;

-- Tx.expireBatch#2 (events.go)
DELETE FROM events WHERE id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS JSONB)));

-- DB.DeleteExpiredFormSubmissions#1 (events.go)
DELETE FROM form_submissions WHERE id IN
					(SELECT id FROM form_submissions WHERE app_id = $1 AND submitted_at < $2 ORDER BY id LIMIT $3);

-- DB.appRetentions#1 (events.go)
SELECT id, event_retention_days, form_retention_days FROM apps ORDER BY id;

-- DB.ExportUser#1 (export.go)
SELECT 1 FROM apps WHERE id = $1;

-- DB.ExportUser#2 (export.go)
SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = $1 AND user_id = $2;

-- DB.ExportUser#3 (export.go)
SELECT c.id, c.name, c.key, v.id, v.name, a.assigned_at, a.converted_at, a.covariate
				FROM campaigns c JOIN assignments a ON a.campaign_id = c.id AND a.user_key = $1
				JOIN campaign_variants v ON v.id = a.variant_id
				WHERE c.app_id = $2 ORDER BY c.id;

-- DB.ExportUser#4 (export.go)
SELECT mv.campaign_id, m.id, m.key, mv.value FROM metric_values mv JOIN metrics m ON m.id = mv.metric_id
					WHERE mv.campaign_id IN (SELECT id FROM campaigns WHERE app_id = $1)
						AND mv.metric_id IN (SELECT id FROM metrics WHERE app_id = $2) AND mv.user_key = $3
					ORDER BY mv.campaign_id, m.id;

-- DB.ExportUser#5 [1/2] (export.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at
				FROM form_submissions WHERE app_id = $1 AND (user_id = $2) ORDER BY id;

-- DB.ExportUser#5 [2/2] (export.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at
				FROM form_submissions WHERE app_id = $1 AND (user_id = $2 OR session_id = $3) ORDER BY id;

-- DB.ExportUser#6 [1/2] (export.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events
		WHERE app_id = $1 AND user_id = $2 ORDER BY id;

-- DB.ExportUser#6 [2/2] (export.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events
		WHERE app_id = $1 AND session_id = $2 AND user_id IS NULL ORDER BY id;

-- DB.SubmitForm#1 (forms.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE id = $1 AND app_id = $2;

-- DB.SubmitForm#2 (forms.go)
INSERT INTO form_submissions (app_id, content_view_id, data, user_id, session_id, environment, submitted_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- DB.CheckGuardrails#1 (guardrails.go)
SELECT c.app_id, c.id FROM campaigns c WHERE c.status = 'active'
		AND EXISTS (SELECT 1 FROM campaign_metrics cm WHERE cm.campaign_id = c.id AND cm.role = 'guardrail') ORDER BY c.id;

-- DB.newRegressions#1 (guardrails.go)
SELECT COUNT(*) FROM guardrail_regressions WHERE campaign_id = $1 AND metric_id = $2 AND variant_id = $3;

-- Tx.reportRegressions#1 (guardrails.go)
UPDATE campaigns SET status = status WHERE id = $1;

-- Tx.reportRegressions#2 (guardrails.go)
INSERT INTO guardrail_regressions (campaign_id, metric_id, variant_id, action, created_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (campaign_id, metric_id, variant_id) DO NOTHING;

-- Tx.linkSession#1 (links.go)
SELECT user_id FROM session_links WHERE app_id = $1 AND session_id = $2;

-- Tx.insertLinkEach#1 (links.go)
INSERT INTO session_links (app_id, session_id, user_id, linked_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (app_id, session_id) DO NOTHING;

-- Tx.insertLinkEach#2 (links.go)
SELECT c.id FROM campaigns AS c JOIN assignments AS a ON a.campaign_id = c.id AND a.user_key = $1
		WHERE c.app_id = $2 AND NOT EXISTS (SELECT 1 FROM assignments AS b WHERE b.campaign_id = c.id AND b.user_key = $3)
		ORDER BY c.id;

-- Tx.takeSession#1 (links.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at, converted_at, covariate)
		SELECT campaign_id, $1, variant_id, assigned_at, converted_at, covariate FROM assignments WHERE campaign_id = $2 AND user_key = $3
		ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING variant_id, assigned_at, converted_at;

-- DB.FindSessionLink#1 (links.go)
SELECT user_id, linked_at FROM session_links WHERE app_id = $1 AND session_id = $2;

-- findPage#1 [1/16] (list.go)
SELECT COUNT(*) FROM api_keys WHERE app_id = $1;

-- findPage#1 [2/16] (list.go)
SELECT COUNT(*) FROM apps WHERE 1 = 1;

-- findPage#1 [3/16] (list.go)
SELECT COUNT(*) FROM audiences WHERE app_id = $1;

-- findPage#1 [4/16] (list.go)
SELECT COUNT(*) FROM audiences WHERE app_id = $1 AND status = $2;

-- findPage#1 [5/16] (list.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = $1 AND status != 'archived';

-- findPage#1 [6/16] (list.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = $1 AND status = $2;

-- findPage#1 [7/16] (list.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = $1 AND status != 'archived' AND strpos(lower(name), lower($2)) > 0;

-- findPage#1 [8/16] (list.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = $1 AND status = $2 AND strpos(lower(name), lower($3)) > 0;

-- findPage#1 [9/16] (list.go)
SELECT COUNT(*) FROM content_views WHERE app_id = $1;

-- findPage#1 [10/16] (list.go)
SELECT COUNT(*) FROM content_views WHERE app_id = $1 AND status = $2;

-- findPage#1 [11/16] (list.go)
SELECT COUNT(*) FROM form_submissions WHERE app_id = $1;

-- findPage#1 [12/16] (list.go)
SELECT COUNT(*) FROM form_submissions WHERE app_id = $1 AND content_view_id = $2;

-- findPage#1 [13/16] (list.go)
SELECT COUNT(*) FROM metrics WHERE app_id = $1;

-- findPage#1 [14/16] (list.go)
SELECT COUNT(*) FROM webhooks WHERE app_id = $1;

-- findPage#1 [15/16] (list.go)
SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = $1;

-- findPage#1 [16/16] (list.go)
SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = $1 AND d.status = $2;

-- findPage#2 [1/16] (list.go)
SELECT id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE app_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3;

-- findPage#2 [2/16] (list.go)
SELECT id, name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps WHERE 1 = 1 ORDER BY id DESC LIMIT $1 OFFSET $2;

-- findPage#2 [3/16] (list.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE app_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3;

-- findPage#2 [4/16] (list.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE app_id = $1 AND status = $2 ORDER BY id DESC LIMIT $3 OFFSET $4;

-- findPage#2 [5/16] (list.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE app_id = $1 AND status != 'archived' ORDER BY id DESC LIMIT $2 OFFSET $3;

-- findPage#2 [6/16] (list.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE app_id = $1 AND status = $2 ORDER BY id DESC LIMIT $3 OFFSET $4;

-- findPage#2 [7/16] (list.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE app_id = $1 AND status != 'archived' AND strpos(lower(name), lower($2)) > 0 ORDER BY id DESC LIMIT $3 OFFSET $4;

-- findPage#2 [8/16] (list.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE app_id = $1 AND status = $2 AND strpos(lower(name), lower($3)) > 0 ORDER BY id DESC LIMIT $4 OFFSET $5;

-- findPage#2 [9/16] (list.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE app_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3;

-- findPage#2 [10/16] (list.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE app_id = $1 AND status = $2 ORDER BY id DESC LIMIT $3 OFFSET $4;

-- findPage#2 [11/16] (list.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at FROM form_submissions WHERE app_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3;

-- findPage#2 [12/16] (list.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at FROM form_submissions WHERE app_id = $1 AND content_view_id = $2 ORDER BY id DESC LIMIT $3 OFFSET $4;

-- findPage#2 [13/16] (list.go)
SELECT id, app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at FROM metrics WHERE app_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3;

-- findPage#2 [14/16] (list.go)
SELECT id, app_id, url, events, secret, headers, max_retries, timeout_seconds, description,
	status, consecutive_failures, total_successes, total_failures, created_at, updated_at,
	secret_rotated_at, previous_secret_expires_at FROM webhooks WHERE app_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3;

-- findPage#2 [15/16] (list.go)
SELECT d.id, d.webhook_id, d.event, d.payload, d.status, d.next_attempt_at, d.created_at,
	(SELECT COUNT(*) FROM webhook_attempts a WHERE a.delivery_id = d.id), d.redacted_at FROM webhook_deliveries d WHERE d.webhook_id = $1 ORDER BY d.id DESC LIMIT $2 OFFSET $3;

-- findPage#2 [16/16] (list.go)
SELECT d.id, d.webhook_id, d.event, d.payload, d.status, d.next_attempt_at, d.created_at,
	(SELECT COUNT(*) FROM webhook_attempts a WHERE a.delivery_id = d.id), d.redacted_at FROM webhook_deliveries d WHERE d.webhook_id = $1 AND d.status = $2 ORDER BY d.id DESC LIMIT $3 OFFSET $4;

-- DB.FindAppRole#1 (members.go)
SELECT role FROM app_members WHERE user_id = $1 AND app_id = $2;

-- DB.FindUserApps#1 (members.go)
SELECT a.id, a.name, a.plan, a.rate_limit, m.role
		FROM app_members m JOIN apps a ON a.id = m.app_id WHERE m.user_id = $1 ORDER BY a.id;

-- DB.FindAppMembers#1 (members.go)
SELECT u.id, u.email, m.role, m.created_at
		FROM app_members m JOIN dashboard_users u ON u.id = m.user_id WHERE m.app_id = $1 ORDER BY lower(u.email), u.id;

-- Tx.appName#1 (members.go)
SELECT name FROM apps WHERE id = $1;

-- Tx.grant#1 (members.go)
INSERT INTO app_members (app_id, user_id, role, created_at) VALUES ($1, $2, $3, $4);

-- Tx.grant#2 (members.go)
UPDATE app_members SET role = $1 WHERE app_id = $2 AND user_id = $3;

-- DB.GrantRole#1 (members.go)
SELECT created_at FROM app_members WHERE app_id = $1 AND user_id = $2;

-- DB.RevokeRole#1 (members.go)
DELETE FROM app_members WHERE app_id = $1 AND user_id = $2;

-- DB.CreateInvitation#1 (members.go)
INSERT INTO dashboard_invitations (token_hash, email, app_id, role, invited_by, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id;

-- DB.FindInvitations#1 (members.go)
SELECT i.id, i.email, i.app_id, a.name, i.role, i.created_at, i.expires_at, i.accepted_at,
	EXISTS (SELECT 1 FROM dashboard_users u WHERE u.email = i.email) FROM dashboard_invitations i JOIN apps a ON a.id = i.app_id
		WHERE i.app_id = $1 AND i.accepted_at IS NULL AND i.expires_at > $2 ORDER BY i.id DESC;

-- findInvitation#1 (members.go)
SELECT i.id, i.email, i.app_id, a.name, i.role, i.created_at, i.expires_at, i.accepted_at,
	EXISTS (SELECT 1 FROM dashboard_users u WHERE u.email = i.email) FROM dashboard_invitations i JOIN apps a ON a.id = i.app_id
		WHERE i.token_hash = $1;

-- DB.AcceptInvitation#1 (members.go)
UPDATE dashboard_invitations SET accepted_at = $1 WHERE id = $2 AND accepted_at IS NULL;

-- Tx.roleIn#1 (members.go)
SELECT role FROM app_members WHERE user_id = $1 AND app_id = $2;

-- DB.RevokeInvitation#1 (members.go)
SELECT email, role, expires_at FROM dashboard_invitations WHERE id = $1 AND app_id = $2 AND accepted_at IS NULL;

-- DB.RevokeInvitation#2 (members.go)
DELETE FROM dashboard_invitations WHERE id = $1;

-- Tx.flushJournal#1 (metricmoves.go)
INSERT INTO metric_moves (moves) VALUES ($1);

-- DB.applyMoves#1 (metricmoves.go)
SELECT max(id) FROM metric_moves;

-- Tx.applyMerged#1 (metricmoves.go)
DELETE FROM metric_moves WHERE id = (SELECT min(id) FROM metric_moves WHERE merged) RETURNING id, moves;

-- DB.mergeStep#1 (metricmoves.go)
SELECT EXISTS (SELECT 1 FROM metric_moves WHERE merged);

-- DB.mergeStep#2 (metricmoves.go)
DELETE FROM metric_moves WHERE id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS JSONB))) AND NOT merged;

-- DB.mergeStep#3 (metricmoves.go)
INSERT INTO metric_moves (moves, merged) VALUES ($1, $2);

-- DB.mergeStep#4 (metricmoves.go)
SELECT EXISTS (SELECT 1 FROM metric_moves WHERE merged);

-- readJournal#1 (metricmoves.go)
SELECT id, moves FROM metric_moves WHERE id <= $1 AND NOT merged ORDER BY id;

-- Tx.applyMetricMoves#1 (metricmoves.go)
DELETE FROM metric_moves RETURNING id, moves;

-- Tx.moveSessions#1 (metricmoves.go)
UPDATE metric_values SET user_key = $1 WHERE campaign_id = $2
			AND metric_id IN (SELECT id FROM metrics WHERE app_id = $3) AND user_key = $4
			AND NOT EXISTS (SELECT 1 FROM metric_values AS o WHERE o.campaign_id = metric_values.campaign_id
				AND o.metric_id = metric_values.metric_id AND o.user_key = $5);

-- Tx.liveMoves#1 (metricmoves.go)
SELECT EXISTS (SELECT 1 FROM campaigns WHERE id = $1);

-- Tx.liveMoves#2 (metricmoves.go)
SELECT type, cap FROM metrics WHERE id = $1;

-- Tx.checkMetricKeyFree#1 (metrics.go)
SELECT id FROM metrics WHERE app_id = $1 AND key = $2 AND id <> $3;

-- DB.CreateMetric#1 (metrics.go)
INSERT INTO metrics (app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id;

-- findMetric#1 (metrics.go)
SELECT id, app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at FROM metrics WHERE id = $1 AND app_id = $2;

-- metricCampaigns#1 [1/2] (metrics.go)
SELECT c.id, c.name, c.status, cm.role FROM campaign_metrics cm JOIN campaigns c ON c.id = cm.campaign_id
		WHERE cm.metric_id = $1 ORDER BY c.id;

-- metricCampaigns#1 [2/2] (metrics.go)
SELECT c.id, c.name, c.status, cm.role FROM campaign_metrics cm JOIN campaigns c ON c.id = cm.campaign_id
		WHERE cm.metric_id = $1 AND c.status IN ($2, $3) ORDER BY c.id;

-- DB.UpdateMetric#1 (metrics.go)
UPDATE metrics SET key = $1, name = $2, description = $3, type = $4, event_id = $5, property = $6, window_hours = $7, direction = $8, cap = $9, updated_at = $10 WHERE id = $11;

-- DB.DeleteMetric#1 (metrics.go)
DELETE FROM campaign_metrics WHERE metric_id = $1;

-- DB.DeleteMetric#2 (metrics.go)
DELETE FROM metrics WHERE id = $1;

-- Tx.flushMetrics#1 [1/2] (metricvalues.go)
SELECT user_key, variant_id, assigned_at FROM assignments WHERE campaign_id = $1 AND NOT EXISTS (SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = $2 AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = $3 AND l.session_id = $4)
		AND user_key = $5 AND assigned_at <= $6;

-- Tx.flushMetrics#1 [2/2] (metricvalues.go)
SELECT user_key, variant_id, assigned_at FROM assignments WHERE campaign_id = $1 AND user_key = coalesce((SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = $2 AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = $3 AND l.session_id = $4), $5)
		AND assigned_at <= $6;

-- Tx.writeMetricMoves#1 (metricvalues.go)
INSERT INTO metric_sums (campaign_id, metric_id, variant_id, sum, sum_sq)
		SELECT CAST(j.value ->> 0 AS BIGINT), CAST(j.value ->> 1 AS BIGINT), CAST(j.value ->> 2 AS BIGINT),
			CAST(j.value ->> 3 AS DOUBLE PRECISION), CAST(j.value ->> 4 AS DOUBLE PRECISION)
		FROM jsonb_array_elements(CAST($1 AS JSONB)) WITH ORDINALITY AS j(value, key) WHERE true ORDER BY j.key
		ON CONFLICT (campaign_id, metric_id, variant_id) DO UPDATE SET sum = metric_sums.sum + excluded.sum, sum_sq = metric_sums.sum_sq + excluded.sum_sq;

-- Tx.metricUsers#1 (metricvalues.go)
SELECT u.value, a.variant_id, a.assigned_at FROM (SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST($1 AS JSONB)) WITH ORDINALITY) AS u CROSS JOIN LATERAL (SELECT a.variant_id, a.assigned_at FROM assignments AS a WHERE a.campaign_id = $2 AND a.user_key = u.value OFFSET 0) AS a;

-- campaignMetricResults#1 (metricvalues.go)
SELECT m.id, m.key, m.name, m.type, m.direction, cm.role FROM campaign_metrics cm JOIN metrics m ON m.id = cm.metric_id
		WHERE cm.campaign_id = $1 ORDER BY CASE cm.role WHEN 'secondary' THEN 0 ELSE 1 END, cm.position;

-- campaignMetricResults#2 (metricvalues.go)
SELECT metric_id, variant_id, sum, sum_sq FROM metric_sums WHERE campaign_id = $1;

-- Tx.move#1 (moves.go)
SELECT status, name, start_at, end_at, namespace_id, namespace_start, namespace_end FROM campaigns WHERE id = $1 AND app_id = $2;

-- Tx.move#2 [1/2] (moves.go)
UPDATE campaigns SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4;

-- Tx.move#2 [2/2] (moves.go)
UPDATE campaigns SET status = $1, updated_at = $2, start_at = $3, started_at = $4, completed_at = $5, archived_from = $6 WHERE id = $7 AND status = $8;

-- blockProblems#1 (moves.go)
SELECT v.content_view_id, c.status FROM campaign_variants v LEFT JOIN content_views c ON c.id = v.content_view_id
		WHERE v.campaign_id = $1 ORDER BY v.id;

-- DB.CampaignBlockProblems#1 (moves.go)
SELECT COUNT(*) FROM campaigns WHERE id = $1 AND app_id = $2;

-- Tx.checkNamespaceFree#1 (moves.go)
SELECT id, name, status, namespace_start, namespace_end FROM campaigns
		WHERE app_id = $1 AND namespace_id = $2 AND id <> $3 AND status IN ('active','paused')
			AND namespace_start < $4 AND namespace_end > $5 ORDER BY id;

-- Tx.emitCompleted#1 (moves.go)
SELECT stats_engine FROM campaigns WHERE id = $1;

-- DB.RunSchedule#1 (moves.go)
SELECT app_id, id, 'active' FROM campaigns WHERE status = 'draft' AND start_at IS NOT NULL AND start_at <= $1 AND end_at > $2
		UNION ALL
		SELECT app_id, id, 'completed' FROM campaigns WHERE status IN ('active','paused') AND end_at IS NOT NULL AND end_at <= $3;

-- DB.RunSchedule#2 (moves.go)
SELECT start_at, end_at FROM campaigns WHERE id = $1;

-- DB.FindNamespaces#1 (namespaces.go)
SELECT namespace_id, id, name, status, namespace_start, namespace_end FROM campaigns
		WHERE app_id = $1 AND namespace_id IS NOT NULL AND status <> 'archived'
		ORDER BY namespace_id, namespace_start, namespace_end, id;

-- DB.DeliveryBacklog#1 (observe.go)
SELECT count(*), min(created_at) FROM webhook_deliveries WHERE status = 'pending';

-- DB.SetAppAllowedOrigins#1 (origins.go)
UPDATE apps SET allowed_origins = $1 WHERE id = $2;

-- DB.loadOrigins#1 (origins.go)
SELECT allowed_origins FROM apps WHERE id = $1;

-- Tx.emit#1 (outbox.go)
SELECT id, events FROM webhooks WHERE app_id = $1 AND status = 'ACTIVE';

-- Tx.emit#2 (outbox.go)
INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5);

-- Tx.parkDeliveries#1 (outbox.go)
UPDATE webhook_deliveries SET next_attempt_at = NULL
		WHERE webhook_id = $1 AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= $2);

-- DB.RedeliverDelivery#1 (outbox.go)
UPDATE webhook_deliveries SET status = 'pending', attempts = 0,
				next_attempt_at = CASE WHEN (SELECT status FROM webhooks WHERE id = $1) = 'ACTIVE' THEN CAST($2 AS BIGINT) END
			WHERE id = $3 AND webhook_id = $4 AND webhook_id IN (SELECT id FROM webhooks WHERE app_id = $5);

-- DB.RedeliverDelivery#2 (outbox.go)
SELECT event FROM webhook_deliveries WHERE id = $1;

-- DB.SendTestDelivery#1 (outbox.go)
INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5) RETURNING id;

-- DB.ClaimDueDeliveries#1 (outbox.go)
UPDATE webhook_deliveries
			SET claimed_until = CAST($1 AS BIGINT) + CAST($2 AS BIGINT) + (SELECT w.timeout_seconds * 1000 FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id),
				claimed_by = $3
			WHERE id IN (SELECT d.id FROM webhook_deliveries d
					WHERE d.id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($4 AS JSONB))) AND d.status = 'pending' AND d.next_attempt_at <= $5
						AND (d.claimed_until IS NULL OR d.claimed_until <= $6) FOR UPDATE SKIP LOCKED)
				AND (SELECT w.status FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id) = 'ACTIVE'
			RETURNING id, webhook_id, event, payload, created_at, attempts, claimed_until;

-- DB.ClaimDueDeliveries#2 (outbox.go)
SELECT id, url, secret, headers, timeout_seconds, max_retries,
				CASE WHEN previous_secret_expires_at > $1 THEN previous_secret ELSE '' END
			FROM webhooks WHERE id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($2 AS JSONB)));

-- DB.dueDeliveries#1 (outbox.go)
SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
			JOIN webhooks w ON w.id = d.webhook_id
			WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.next_attempt_at, d.id) > ($2, $3)
				AND (d.claimed_until IS NULL OR d.claimed_until <= $4) AND w.status = 'ACTIVE'
				AND d.webhook_id NOT IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($5 AS JSONB)))
			ORDER BY d.next_attempt_at, d.id LIMIT 512;

-- DB.ReleaseDeliveries#1 (outbox.go)
UPDATE webhook_deliveries SET claimed_until = NULL, claimed_by = NULL
				WHERE id = $1 AND claimed_until = $2 AND COALESCE(claimed_by, 0) = $3;

-- DB.NextDeliveryDue#1 (outbox.go)
SELECT MIN(next_attempt_at) FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at > $1;

-- DB.RecordAttempts#1 (outbox.go)
INSERT INTO webhook_attempts (delivery_id, at, response_status, error, duration_ms)
			SELECT CAST(j.value ->> 0 AS BIGINT), CAST(j.value ->> 1 AS BIGINT), CAST(j.value ->> 2 AS BIGINT), j.value ->> 3, CAST(j.value ->> 4 AS BIGINT)
			FROM jsonb_array_elements(CAST($1 AS JSONB)) WITH ORDINALITY AS j(value, key)
			WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = CAST(j.value ->> 0 AS BIGINT)) ORDER BY j.key
			RETURNING delivery_id;

-- DB.RecordAttempts#2 (outbox.go)
UPDATE webhook_deliveries AS d SET status = 'succeeded', attempts = d.attempts + 1,
					next_attempt_at = NULL, claimed_until = NULL, claimed_by = NULL
				FROM (SELECT CAST(j.value ->> 0 AS BIGINT) AS id, CAST(j.value ->> 1 AS BIGINT) AS claim, CAST(j.value ->> 2 AS BIGINT) AS holder FROM jsonb_array_elements(CAST($1 AS JSONB)) WITH ORDINALITY AS j(value, key)) AS s
				WHERE d.id = s.id AND d.claimed_until = s.claim AND COALESCE(d.claimed_by, 0) = s.holder;

-- DB.RecordAttempts#3 (outbox.go)
UPDATE webhooks SET
					consecutive_failures = CASE WHEN $1 THEN 0 ELSE consecutive_failures END + $2,
					total_successes = total_successes + $3, total_failures = total_failures + $4,
					status = CASE WHEN consecutive_failures + CAST($5 AS BIGINT) >= CAST($6 AS BIGINT) OR CAST($7 AS BIGINT) >= CAST($8 AS BIGINT) THEN 'FAILED' ELSE status END
				WHERE id = $9 RETURNING status, max_retries;

-- DB.RecordAttempts#4 (outbox.go)
UPDATE webhook_deliveries SET attempts = attempts + 1
				WHERE id = $1 AND claimed_until = $2 AND COALESCE(claimed_by, 0) = $3 RETURNING attempts;

-- DB.RecordAttempts#5 (outbox.go)
UPDATE webhook_deliveries SET next_attempt_at = $1, claimed_until = NULL, claimed_by = NULL WHERE id = $2;

-- DB.RecordAttempts#6 (outbox.go)
UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, claimed_until = NULL, claimed_by = NULL WHERE id = $1;

-- Tx.setPassword#1 (passwords.go)
UPDATE dashboard_users SET password_hash = $1 WHERE id = $2;

-- Tx.setPassword#2 (passwords.go)
DELETE FROM dashboard_sessions WHERE user_id = $1 AND expires_at <= $2;

-- Tx.setPassword#3 (passwords.go)
DELETE FROM dashboard_sessions WHERE user_id = $1;

-- Tx.setPassword#4 (passwords.go)
DELETE FROM dashboard_sessions WHERE user_id = $1 AND token_hash <> $2;

-- Tx.setPassword#5 (passwords.go)
DELETE FROM dashboard_password_resets WHERE user_id = $1 AND used_at IS NULL;

-- DB.ChangeDashboardPassword#1 (passwords.go)
SELECT id, email, password_hash FROM dashboard_users WHERE id = $1;

-- DB.ChangeDashboardPassword#2 (passwords.go)
SELECT password_hash FROM dashboard_users WHERE id = $1;

-- DB.CreatePasswordReset#1 (passwords.go)
DELETE FROM dashboard_password_resets WHERE user_id = $1 AND used_at IS NULL;

-- DB.CreatePasswordReset#2 (passwords.go)
INSERT INTO dashboard_password_resets (token_hash, user_id, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING id;

-- findPasswordReset#1 (passwords.go)
SELECT r.id, r.user_id, u.email, r.created_at, r.expires_at, r.used_at
		FROM dashboard_password_resets r JOIN dashboard_users u ON u.id = r.user_id WHERE r.token_hash = $1;

-- DB.ResetDashboardPassword#1 (passwords.go)
UPDATE dashboard_password_resets SET used_at = $1 WHERE id = $2 AND used_at IS NULL;

-- DB.ResetDashboardPassword#2 (passwords.go)
SELECT id, email, owner, created_at FROM dashboard_users WHERE id = $1;

-- DB.compactSecrets#1 (postgres.go)
VACUUM (FULL) webhooks;

-- DB.awaitOlderSnapshots#1 (postgres.go)
SELECT CAST(pg_snapshot_xmax(pg_current_snapshot()) AS TEXT);

-- DB.awaitOlderSnapshots#2 (postgres.go)
SELECT (NOT CAST($1 AS BOOLEAN) OR pg_snapshot_xmin(pg_current_snapshot()) >= CAST(CAST($2 AS TEXT) AS xid8))
			AND NOT EXISTS (SELECT 1 FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()
					AND (age(backend_xmin) > age(CAST(CAST(CAST($3 AS TEXT) AS xid8) AS xid))
						OR age(backend_xid) > age(CAST(CAST(CAST($4 AS TEXT) AS xid8) AS xid))));

-- postgres.TryAdvisoryLock#1 (postgres/session.go)
SELECT pg_try_advisory_lock($1);

-- postgres.Listen#1 (postgres/session.go)
LISTEN service_changes;

-- postgres.TablesWithoutStatistics#1 (postgres/stats.go)
SELECT t.relname FROM pg_stat_user_tables t
		WHERE t.schemaname = current_schema() AND t.n_live_tup >= $1
			AND NOT EXISTS (SELECT 1 FROM pg_stats s WHERE s.schemaname = t.schemaname AND s.tablename = t.relname)
		ORDER BY t.relname;

-- postgres.Analyze#1 (postgres/stats.go)
ANALYZE "events";

-- postgres.lazyTx.Commit#1 (postgres/tx.go)
rollback;

-- postgres.lazyTx.Rollback#1 (postgres/tx.go)
rollback;

-- Tx.commitCountsPG#1 (postgres_counts.go)
WITH d (id, i, c, x, xx, xy) AS (
		SELECT * FROM unnest(CAST($1 AS BIGINT[]), CAST($2 AS BIGINT[]), CAST($3 AS BIGINT[]), CAST($4 AS BIGINT[]), CAST($5 AS BIGINT[]), CAST($6 AS BIGINT[]))
	), l AS (
		SELECT id FROM campaign_variants WHERE id IN (SELECT id FROM d) ORDER BY id FOR UPDATE
	), v AS (
		UPDATE campaign_variants AS v SET impressions = v.impressions + d.i, conversions = v.conversions + d.c,
			cuped_sum_x = v.cuped_sum_x + d.x, cuped_sum_xx = v.cuped_sum_xx + d.xx, cuped_sum_xy = v.cuped_sum_xy + d.xy
		FROM l JOIN d ON d.id = l.id WHERE v.id = l.id
	)
	INSERT INTO campaign_variant_hours (variant_id, hour, impressions, conversions)
	SELECT id, $7, i, c FROM d ORDER BY id
	ON CONFLICT (variant_id, hour) DO UPDATE SET impressions = campaign_variant_hours.impressions + excluded.impressions,
		conversions = campaign_variant_hours.conversions + excluded.conversions;

-- Tx.convertUsersPG#1 (postgres_counts.go)
WITH d AS (
		SELECT * FROM unnest(CAST($1 AS BIGINT[]), CAST($2 AS TEXT[]), CAST($3 AS BIGINT[])) WITH ORDINALITY AS d(campaign_id, user_key, ts, n)
	), l AS (
		SELECT a.campaign_id, a.user_key, d.ts FROM d JOIN assignments AS a ON a.campaign_id = d.campaign_id AND a.user_key = d.user_key
		WHERE a.converted_at IS NULL AND a.assigned_at <= d.ts ORDER BY d.n FOR UPDATE OF a
	)
	UPDATE assignments AS a SET converted_at = l.ts FROM l WHERE a.campaign_id = l.campaign_id AND a.user_key = l.user_key
	RETURNING a.campaign_id, a.user_key, a.variant_id, a.covariate;

-- postgresEngine.insertLink#1 (postgres_engine.go)
WITH l AS (INSERT INTO session_links (app_id, session_id, user_id, linked_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (app_id, session_id) DO NOTHING RETURNING app_id)
	SELECT 0 FROM l
	UNION ALL
	SELECT c.id FROM l CROSS JOIN campaigns AS c JOIN assignments AS a ON a.campaign_id = c.id AND a.user_key = $5
	WHERE c.app_id = $6 AND NOT EXISTS (SELECT 1 FROM assignments AS b WHERE b.campaign_id = c.id AND b.user_key = $7)
	ORDER BY 1;

-- postgresEngine.lockMetricMoves#1 (postgres_engine.go)
SELECT pg_advisory_xact_lock($1);

-- postgresEngine.capClaims#1 (postgres_engine.go)
SELECT id FROM webhooks WHERE id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS JSONB))) ORDER BY id FOR UPDATE;

-- postgresEngine.capClaims#2 (postgres_engine.go)
SELECT webhook_id, COUNT(*) FROM webhook_deliveries
		WHERE webhook_id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS JSONB))) AND claimed_until > $2 AND claimed_by <> $3
		GROUP BY webhook_id;

-- postgresEngine.claimRate#1 (postgres_engine.go)
INSERT INTO rate_limit_windows (app_id, class, minute, used) VALUES ($1, $2, $3, $4)
		ON CONFLICT (app_id, class, minute) DO UPDATE SET used = rate_limit_windows.used + excluded.used
		WHERE rate_limit_windows.used < $5
		RETURNING used;

-- postgresEngine.returnRate#1 (postgres_engine.go)
UPDATE rate_limit_windows SET used = CASE WHEN used > $1 THEN $2 ELSE used END - $3
		WHERE app_id = $4 AND class = $5 AND minute = $6;

-- postgresEngine.trimRateWindows#1 (postgres_engine.go)
DELETE FROM rate_limit_windows WHERE minute < $1;

-- postgresEngine.fileSizes#1 (postgres_engine.go)
SELECT pg_database_size(current_database());

-- pgEraser.begin#1 (postgres_erasure.go)
LOCK TABLE users, session_links, assignments, metric_values, events, metric_moves, form_submissions, webhook_deliveries IN SHARE ROW EXCLUSIVE MODE;

-- pgEraser.events#1 [1/2] (postgres_erasure.go)
DELETE FROM events WHERE app_id = $1 AND user_id = $2;

-- pgEraser.events#1 [2/2] (postgres_erasure.go)
DELETE FROM events WHERE app_id = $1 AND session_id = $2 AND user_id IS NULL;

-- pgEraser.scrub#1 (postgres_erasure.go)
VACUUM (ANALYZE) users, session_links, assignments, metric_values, events, metric_moves, form_submissions, webhook_deliveries;

-- Tx.checkLease#1 (postgres_leader.go)
SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = 0 AND objid = CAST(CAST($1 AS BIGINT) AS OID) AND objsubid = 1 AND pid = CAST($2 AS INTEGER) AND granted);

-- Tx.notifyChanged#1 (postgres_listen.go)
INSERT INTO change_version (id, version) VALUES (1, 1)
		ON CONFLICT (id) DO UPDATE SET version = change_version.version + 1 RETURNING version;

-- Tx.notifyChanged#2 (postgres_listen.go)
SELECT pg_notify('service_changes', $1);

-- DB.startOverIfMoved#1 (postgres_listen.go)
SELECT COALESCE(MAX(version), 0) FROM change_version;

-- DB.checkVersion#1 (postgres_listen.go)
SELECT COALESCE(MAX(version), 0) FROM change_version;

-- DB.reapClaims#1 (postgres_presence.go)
UPDATE webhook_deliveries SET claimed_until = NULL, claimed_by = NULL
		WHERE claimed_until > $1 AND claimed_by IS NOT NULL AND claimed_by <> $2
			AND claimed_by NOT IN (SELECT (CAST(l.classid AS BIGINT) << 32) | CAST(l.objid AS BIGINT) FROM pg_locks l
				WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
					AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()));

-- Tx.moveMetricValuesPG#1 [1/2] (postgres_rows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value)
	SELECT r.campaign_id, r.metric_id, r.user_key, r.variant_id, r.delta
	FROM unnest(CAST($1 AS BIGINT[]), CAST($2 AS BIGINT[]), CAST($3 AS TEXT[]), CAST($4 AS BIGINT[]), CAST($5 AS DOUBLE PRECISION[]))
		AS r(campaign_id, metric_id, user_key, variant_id, delta)
	ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value
	RETURNING campaign_id, metric_id, user_key, value;

-- Tx.moveMetricValuesPG#1 [2/2] (postgres_rows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value)
	SELECT r.campaign_id, r.metric_id, r.user_key, r.variant_id, 1
	FROM unnest(CAST($1 AS BIGINT[]), CAST($2 AS BIGINT[]), CAST($3 AS TEXT[]), CAST($4 AS BIGINT[])) AS r(campaign_id, metric_id, user_key, variant_id)
	ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- Tx.flushUsersPG#1 (postgres_rows.go)
WITH w AS (INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen)
	SELECT r.app_id, r.user_id, '{}', CAST($1 AS BIGINT), CAST($2 AS BIGINT)
	FROM unnest(CAST($3 AS BIGINT[]), CAST($4 AS TEXT[])) AS r(app_id, user_id) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000
	RETURNING first_seen)
	SELECT count(*) FROM w WHERE first_seen = CAST($5 AS BIGINT);

-- Tx.insertAssignmentsPG#1 (postgres_rows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at)
	SELECT r.campaign_id, r.user_key, r.variant_id, CAST($1 AS BIGINT)
	FROM unnest(CAST($2 AS BIGINT[]), CAST($3 AS TEXT[]), CAST($4 AS BIGINT[])) AS r(campaign_id, user_key, variant_id) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- Tx.insertEventsPG#1 [1/2] (postgres_rows.go)
WITH journal AS (INSERT INTO metric_moves (moves) VALUES ($1)) INSERT INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts)
	SELECT r.app_id, r.event_id, r.user_id, r.session_id, r.metadata, r.log_id, CAST($2 AS BIGINT)
	FROM unnest(CAST($3 AS BIGINT[]), CAST($4 AS TEXT[]), CAST($5 AS TEXT[]), CAST($6 AS TEXT[]), CAST($7 AS TEXT[]), CAST($8 AS TEXT[]))
		AS r(app_id, event_id, user_id, session_id, metadata, log_id)
	RETURNING id;

-- Tx.insertEventsPG#1 [2/2] (postgres_rows.go)
INSERT INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts)
	SELECT r.app_id, r.event_id, r.user_id, r.session_id, r.metadata, r.log_id, CAST($1 AS BIGINT)
	FROM unnest(CAST($2 AS BIGINT[]), CAST($3 AS TEXT[]), CAST($4 AS TEXT[]), CAST($5 AS TEXT[]), CAST($6 AS TEXT[]), CAST($7 AS TEXT[]))
		AS r(app_id, event_id, user_id, session_id, metadata, log_id)
	RETURNING id;

-- Tx.flushHours#1 (results.go)
INSERT INTO campaign_variant_hours (variant_id, hour, impressions, conversions) VALUES ($1, $2, $3, $4)
			ON CONFLICT (variant_id, hour) DO UPDATE SET impressions = campaign_variant_hours.impressions + excluded.impressions,
				conversions = campaign_variant_hours.conversions + excluded.conversions;

-- DB.CampaignDailySeries#1 (results.go)
SELECT timezone, status, start_at, end_at FROM campaigns WHERE id = $1 AND app_id = $2;

-- DB.CampaignDailySeries#2 (results.go)
SELECT id, name FROM campaign_variants WHERE campaign_id = $1 ORDER BY id;

-- DB.CampaignDailySeries#3 (results.go)
SELECT h.variant_id, h.hour, h.impressions, h.conversions FROM campaign_variant_hours AS h
		JOIN campaign_variants AS v ON v.id = h.variant_id WHERE v.campaign_id = $1;

-- DB.RotateWebhookSecret#1 (rotation.go)
UPDATE webhooks SET
				previous_secret = secret,
				previous_secret_expires_at = CASE WHEN secret = '' THEN NULL ELSE CAST($1 AS BIGINT) END,
				secret = $2, secret_rotated_at = $3, updated_at = $4
			WHERE id = $5 AND app_id = $6;

-- Tx.flushAssignments#1 (rows.go)
SELECT variant_id FROM assignments WHERE campaign_id = $1 AND user_key = $2;

-- Tx.roundRobin#1 (rows.go)
SELECT rr_next FROM campaigns WHERE id = $1 FOR UPDATE;

-- Tx.roundRobin#2 (rows.go)
UPDATE campaigns SET rr_next = rr_next + $1 WHERE id = $2;

-- Tx.storedAssignments#1 (rows.go)
SELECT u.value, a.variant_id, a.assigned_at FROM (SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST($1 AS JSONB)) WITH ORDINALITY) AS u CROSS JOIN LATERAL (SELECT a.variant_id, a.assigned_at FROM assignments AS a WHERE a.campaign_id = $2 AND a.user_key = u.value OFFSET 0) AS a;

-- DB.loadRuleset#1 (ruleset.go)
SELECT c.id, c.key, c.assignment_type, c.namespace_id, c.namespace_start, c.namespace_end,
		a.id, a.status, a.definition
		FROM campaigns c LEFT JOIN audiences a ON a.id = c.audience_id
		WHERE c.app_id = $1 AND c.status = 'active' ORDER BY c.id;

-- DB.loadRuleset#2 (ruleset.go)
SELECT MAX(m) FROM (
		SELECT MAX(updated_at) AS m FROM campaigns WHERE app_id = $1
		UNION ALL SELECT MAX(updated_at) FROM content_views WHERE app_id = $2
		UNION ALL SELECT MAX(updated_at) FROM audiences WHERE app_id = $3) t;

-- DB.rulesetVariants#1 (ruleset.go)
SELECT v.campaign_id, v.id, v.name, v.traffic_allocation, v.content_view_id, v.is_control
		FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE c.app_id = $1 AND c.status = 'active' ORDER BY v.campaign_id, v.id;

-- DB.rulesetContent#1 (ruleset.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views
		WHERE app_id = $1 AND status = 'published' AND id IN (
			SELECT v.content_view_id FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
			WHERE c.app_id = $2 AND c.status = 'active')
		ORDER BY id;

-- DB.SetSecretKeys#1 [1/4] (secrets.go)
SELECT id, secret FROM webhooks WHERE secret != '';

-- DB.SetSecretKeys#1 [2/4] (secrets.go)
SELECT id, secret FROM webhooks WHERE previous_secret != '';

-- DB.SetSecretKeys#1 [3/4] (secrets.go)
SELECT id, previous_secret FROM webhooks WHERE secret != '';

-- DB.SetSecretKeys#1 [4/4] (secrets.go)
SELECT id, previous_secret FROM webhooks WHERE previous_secret != '';

-- DB.SetSecretKeys#2 [1/2] (secrets.go)
UPDATE webhooks SET secret = $1 WHERE id = $2;

-- DB.SetSecretKeys#2 [2/2] (secrets.go)
UPDATE webhooks SET previous_secret = $1 WHERE id = $2;

-- DB.SignInLockout#1 (signin_throttle.go)
SELECT key, first_at, failures FROM dashboard_signin_failures
		WHERE first_at > $1 AND key IN ($2, $3);

-- DB.RecordSignInFailure#1 (signin_throttle.go)
INSERT INTO dashboard_signin_failures (key, first_at, failures) VALUES ($1, $2, 1)
				ON CONFLICT (key) DO UPDATE SET
					failures = CASE WHEN dashboard_signin_failures.first_at <= $3 THEN 1 ELSE dashboard_signin_failures.failures + 1 END,
					first_at = CASE WHEN dashboard_signin_failures.first_at <= $4 THEN excluded.first_at ELSE dashboard_signin_failures.first_at END;

-- DB.RecordSignInFailure#2 (signin_throttle.go)
DELETE FROM dashboard_signin_failures WHERE key IN (
			SELECT key FROM dashboard_signin_failures WHERE first_at <= $1 ORDER BY first_at LIMIT $2 FOR UPDATE SKIP LOCKED);

-- DB.ResetSignInFailures#1 (signin_throttle.go)
DELETE FROM dashboard_signin_failures WHERE key = $1;

-- Tx.flushCountsEach#1 (stmt.go)
UPDATE campaign_variants SET impressions = impressions + $1, conversions = conversions + $2,
				cuped_sum_x = cuped_sum_x + $3, cuped_sum_xx = cuped_sum_xx + $4, cuped_sum_xy = cuped_sum_xy + $5 WHERE id = $6;

-- Tx.flushCountsEach#2 (stmt.go)
UPDATE campaign_variants SET impressions = impressions + $1, conversions = conversions + $2 WHERE id = $3;

-- Tx.touchUser#1 (users.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES ($1, $2, '{}', $3, $4)
			ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
			WHERE users.last_seen <= excluded.last_seen - $5;

-- Tx.mergeUser#1 (users.go)
SELECT attributes, last_seen FROM users WHERE app_id = $1 AND user_id = $2;

-- Tx.mergeUser#2 (users.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (app_id, user_id) DO UPDATE SET attributes = excluded.attributes, last_seen = GREATEST(users.last_seen, excluded.last_seen);

-- DB.IdentifySession#1 (users.go)
SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = $1 AND user_id = $2;

-- DB.FindUserByID#1 (users.go)
SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = $1 AND user_id = $2;

-- Tx.assign#1 (variant.go)
SELECT variant_id FROM assignments WHERE campaign_id = $1 AND user_key = $2;

-- Tx.mismatched#1 (variant.go)
SELECT variant_id FROM assignments WHERE campaign_id = $1 AND user_key = $2;

-- Tx.stillRunning#1 (variant.go)
SELECT status, start_at, end_at FROM campaigns WHERE id = $1;

-- Tx.findWebhook#1 (webhooks.go)
SELECT id, app_id, url, events, secret, headers, max_retries, timeout_seconds, description,
	status, consecutive_failures, total_successes, total_failures, created_at, updated_at,
	secret_rotated_at, previous_secret_expires_at FROM webhooks WHERE id = $1 AND app_id = $2;

-- DB.CreateWebhook#1 (webhooks.go)
INSERT INTO webhooks (app_id, url, events, secret, headers, max_retries, timeout_seconds,
			description, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id;

-- DB.FindWebhookByID#1 (webhooks.go)
SELECT id, app_id, url, events, secret, headers, max_retries, timeout_seconds, description,
	status, consecutive_failures, total_successes, total_failures, created_at, updated_at,
	secret_rotated_at, previous_secret_expires_at FROM webhooks WHERE id = $1 AND app_id = $2;

-- DB.UpdateWebhook#1 [1/2] (webhooks.go)
UPDATE webhooks SET updated_at = $1 WHERE id = $2;

-- DB.UpdateWebhook#1 [2/2] (webhooks.go)
UPDATE webhooks SET updated_at = $1, url = $2, events = $3, secret = $4, previous_secret = $5, previous_secret_expires_at = $6, headers = $7, max_retries = $8, timeout_seconds = $9, description = $10, status = $11, consecutive_failures = $12 WHERE id = $13;

-- DB.UpdateWebhook#2 (webhooks.go)
UPDATE webhook_deliveries SET next_attempt_at = $1
				WHERE webhook_id = $2 AND status = 'pending' AND next_attempt_at IS NULL;

-- DB.DeleteWebhook#1 (webhooks.go)
DELETE FROM webhooks WHERE id = $1 AND app_id = $2;

-- deliveryAttempts#1 (webhooks.go)
SELECT delivery_id, at, response_status, error, duration_ms FROM webhook_attempts
		WHERE delivery_id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS JSONB))) ORDER BY id;

-- DB.FindDeliveryByID#1 (webhooks.go)
SELECT d.id, d.webhook_id, d.event, d.payload, d.status, d.next_attempt_at, d.created_at,
	(SELECT COUNT(*) FROM webhook_attempts a WHERE a.delivery_id = d.id), d.redacted_at FROM webhook_deliveries d
		JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = $1 AND d.webhook_id = $2 AND w.app_id = $3;
