-- Every SQL text the store runs on sqlite, by the function that runs it
-- (store/statements_test.go; go test ./store -run TestStatementRegistry -update).

-- DB.CampaignAnalytics#1 (analytics.go)
SELECT status, stats_engine, cuped_lookback_days FROM campaigns WHERE id = ? AND app_id = ?;

-- DB.SetDefaultPlan#1 (apps.go)
INSERT INTO instance_settings (id, default_plan) VALUES (1, ?)
			ON CONFLICT (id) DO UPDATE SET default_plan = excluded.default_plan
			WHERE instance_settings.default_plan <> excluded.default_plan;

-- DB.FindDefaultPlan#1 (apps.go)
SELECT default_plan FROM instance_settings WHERE id = 1;

-- DB.createApp#1 (apps.go)
SELECT default_plan FROM instance_settings WHERE id = 1;

-- DB.createApp#2 (apps.go)
INSERT INTO apps (name, plan, rate_limit, created_at, allowed_origins, event_retention_days, form_retention_days) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- DB.FindAppByID#1 (apps.go)
SELECT name, plan, rate_limit FROM apps WHERE id = ?;

-- DB.createKey#1 (apps.go)
SELECT 1 FROM apps WHERE id = ?;

-- DB.createKey#2 (apps.go)
INSERT INTO api_keys (app_id, role, name, key_hash, key_prefix, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id;

-- DB.findKeys#1 (apps.go)
SELECT id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE app_id = ? ORDER BY id;

-- DB.revokeKey#1 (apps.go)
SELECT id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE id = ?;

-- DB.revokeKey#2 (apps.go)
UPDATE api_keys SET revoked_at = ? WHERE id = ?;

-- DB.revokeKey#3 (apps.go)
SELECT id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE id = ?;

-- DB.loadKey#1 (apps.go)
SELECT k.id, COALESCE(k.app_id, 0), k.role, k.name, k.key_prefix, k.created_at, k.revoked_at, COALESCE(a.rate_limit, 0)
		FROM api_keys k LEFT JOIN apps a ON a.id = k.app_id WHERE k.key_hash = ?;

-- DB.FindApps#1 (apps_admin.go)
SELECT id, name, plan, rate_limit FROM apps ORDER BY id;

-- Tx.appFields#1 (apps_admin.go)
SELECT name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps WHERE id = ?;

-- DB.UpdateApp#1 (apps_admin.go)
UPDATE apps SET name = ?, plan = ?, rate_limit = ? WHERE id = ?;

-- DB.UpdateApp#2 (apps_admin.go)
UPDATE apps SET allowed_origins = ? WHERE id = ?;

-- DB.UpdateApp#3 (apps_admin.go)
UPDATE apps SET event_retention_days = ? WHERE id = ?;

-- DB.UpdateApp#4 (apps_admin.go)
UPDATE apps SET form_retention_days = ? WHERE id = ?;

-- DB.DeleteApp#1 [1/8] (apps_admin.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = ?;

-- DB.DeleteApp#1 [2/8] (apps_admin.go)
SELECT COUNT(*) FROM content_views WHERE app_id = ?;

-- DB.DeleteApp#1 [3/8] (apps_admin.go)
SELECT COUNT(*) FROM audiences WHERE app_id = ?;

-- DB.DeleteApp#1 [4/8] (apps_admin.go)
SELECT COUNT(*) FROM metrics WHERE app_id = ?;

-- DB.DeleteApp#1 [5/8] (apps_admin.go)
SELECT COUNT(*) FROM users WHERE app_id = ?;

-- DB.DeleteApp#1 [6/8] (apps_admin.go)
SELECT COUNT(*) FROM events WHERE app_id = ?;

-- DB.DeleteApp#1 [7/8] (apps_admin.go)
SELECT COUNT(*) FROM webhooks WHERE app_id = ?;

-- DB.DeleteApp#1 [8/8] (apps_admin.go)
SELECT COUNT(*) FROM form_submissions WHERE app_id = ?;

-- DB.DeleteApp#2 [1/5] (apps_admin.go)
DELETE FROM events WHERE app_id = ?;

-- DB.DeleteApp#2 [2/5] (apps_admin.go)
DELETE FROM users WHERE app_id = ?;

-- DB.DeleteApp#2 [3/5] (apps_admin.go)
DELETE FROM assignments WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?);

-- DB.DeleteApp#2 [4/5] (apps_admin.go)
DELETE FROM campaigns WHERE app_id = ?;

-- DB.DeleteApp#2 [5/5] (apps_admin.go)
DELETE FROM apps WHERE id = ?;

-- DB.FindAppSettings#1 (apps_admin.go)
SELECT id, name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps WHERE id = ?;

-- DB.FindAllAppSettings#1 (apps_admin.go)
SELECT id, name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps ORDER BY id;

-- DB.loadAudienceUser#1 (audience_eval.go)
SELECT a.status, a.updated_at, u.attributes FROM audiences AS a
		LEFT JOIN users AS u ON u.app_id = a.app_id AND u.user_id = ? WHERE a.id = ? AND a.app_id = ?;

-- DB.loadAudienceUser#2 (audience_eval.go)
SELECT definition, updated_at FROM audiences WHERE id = ?;

-- userFacts#1 [1/4] (audience_eval.go)
SELECT event_id, ts, id, run FROM event_users WHERE app_id = ? AND user_id = ? AND event_id IN (?, ?);

-- userFacts#1 [2/4] (audience_eval.go)
SELECT event_id, ts, id, run FROM event_users WHERE app_id = ? AND user_id = ? AND event_id IN (?, ?) AND id <= (SELECT upto FROM event_users_upto)
		UNION ALL SELECT event_id, ts, id, NULL FROM events NOT INDEXED WHERE app_id = ? AND user_id = ? AND event_id IN (?, ?) AND id > (SELECT upto FROM event_users_upto);

-- userFacts#1 [3/4] (audience_eval.go)
SELECT event_id, ts, id, run FROM event_users WHERE app_id = ? AND user_id = ? AND event_id IN (?, ?) AND ts >= ?;

-- userFacts#1 [4/4] (audience_eval.go)
SELECT event_id, ts, id, run FROM event_users WHERE app_id = ? AND user_id = ? AND event_id IN (?, ?) AND ts >= ? AND id <= (SELECT upto FROM event_users_upto)
		UNION ALL SELECT event_id, ts, id, NULL FROM events NOT INDEXED WHERE app_id = ? AND user_id = ? AND event_id IN (?, ?) AND ts >= ? AND id > (SELECT upto FROM event_users_upto);

-- DB.recountApp#1 (audience_eval.go)
UPDATE audiences SET customer_count = ?, last_calculated_at = ? WHERE id = ? AND app_id = ? AND updated_at = ?;

-- DB.scanAudienceUsers#1 [1/2] (audience_eval.go)
SELECT user_id FROM users WHERE app_id = ? AND user_id > ? ORDER BY user_id LIMIT ?;

-- DB.scanAudienceUsers#1 [2/2] (audience_eval.go)
SELECT user_id, attributes FROM users WHERE app_id = ? AND user_id > ? ORDER BY user_id LIMIT ?;

-- DB.scanAudienceUsers#2 [1/2] (audience_eval.go)
SELECT u.key * ? + CASE e.event_id WHEN ? THEN 0 WHEN ? THEN 1 END, e.ts, e.id, e.run FROM json_each(?) AS u CROSS JOIN event_users AS e ON e.app_id = ? AND e.user_id = u.value AND e.event_id IN (?,?) AND e.id <= ?;

-- DB.scanAudienceUsers#2 [2/2] (audience_eval.go)
SELECT u.key * ? + CASE e.event_id WHEN ? THEN 0 WHEN ? THEN 1 END, e.ts, e.id, e.run FROM json_each(?) AS u CROSS JOIN event_users AS e ON e.app_id = ? AND e.user_id = u.value AND e.event_id IN (?,?) AND e.ts >= ? AND e.id <= ?;

-- DB.CreateAudience#1 (audiences.go)
INSERT INTO audiences (app_id, name, description, status, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- DB.FindAudienceByID#1 (audiences.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE id = ? AND app_id = ?;

-- DB.UpdateAudience#1 (audiences.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE id = ? AND app_id = ?;

-- DB.UpdateAudience#2 (audiences.go)
UPDATE audiences SET name = ?, description = ?, status = ?, definition = ?, updated_at = MAX(?, updated_at + 1) WHERE id = ?;

-- DB.DeleteAudience#1 (audiences.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE id = ? AND app_id = ?;

-- DB.DeleteAudience#2 (audiences.go)
SELECT id FROM campaigns WHERE audience_id = ? AND status IN ('draft','active','paused') ORDER BY id;

-- DB.DeleteAudience#3 (audiences.go)
UPDATE campaigns SET audience_id = NULL WHERE audience_id = ?;

-- DB.DeleteAudience#4 (audiences.go)
DELETE FROM audiences WHERE id = ?;

-- DB.RecountAudiences#1 (audiences.go)
SELECT id, app_id, definition, updated_at FROM audiences WHERE status = 'active' ORDER BY app_id, id;

-- Tx.audit#1 (audit.go)
INSERT INTO audit_log (at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- DB.FindAuditLog#1 [1/4] (audit.go)
SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE 1 = 1 ORDER BY id DESC LIMIT ?;

-- DB.FindAuditLog#1 [2/4] (audit.go)
SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE 1 = 1 AND app_id = ? AND instance = ? AND object_type = ? AND object_id = ? AND actor_type = ? AND action = ? AND at >= ? AND at <= ? AND id < ? ORDER BY id DESC LIMIT ?;

-- DB.FindAuditLog#1 [3/4] (audit.go)
SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE 1 = 1 AND app_id = ? AND instance = ? AND object_type = ? AND object_id = ? AND actor_type = ? AND actor_id = ? AND action = ? AND at >= ? AND at <= ? AND id < ? ORDER BY id DESC LIMIT ?;

-- DB.FindAuditLog#1 [4/4] (audit.go)
SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE 1 = 1 AND app_id = ? AND instance = ? AND object_type = ? AND object_id = ? AND actor_type = ? AND lower(actor_name) = lower(?) AND action = ? AND at >= ? AND at <= ? AND id < ? ORDER BY id DESC LIMIT ?;

-- DB.DeleteAuditBefore#1 (audit.go)
DELETE FROM audit_log WHERE at < ?;

-- DB.DeleteAuditBefore#2 (audit.go)
DELETE FROM dashboard_invitations WHERE expires_at < ?;

-- DB.DeleteAuditBefore#3 (audit.go)
DELETE FROM dashboard_password_resets WHERE expires_at < ?;

-- DB.activeWithMetrics#1 (cache.go)
SELECT id FROM campaigns WHERE app_id = ? AND status = 'active' ORDER BY id;

-- DB.loadLive#1 (cache.go)
SELECT app_id, status, start_at, end_at, audience_id, assignment_type, goal_event_id,
		namespace_id, namespace_start, namespace_end, cuped_lookback_days, key FROM campaigns WHERE id = ?;

-- DB.loadLive#2 (cache.go)
SELECT v.id, v.name, v.traffic_allocation, c.id, c.name, c.status, c.items
		FROM campaign_variants v LEFT JOIN content_views c ON c.id = v.content_view_id
		WHERE v.campaign_id = ? ORDER BY v.id;

-- DB.loadLiveMetrics#1 (cache.go)
SELECT m.id, m.event_id, m.type, m.property, m.window_hours, m.cap
		FROM campaign_metrics cm JOIN metrics m ON m.id = cm.metric_id WHERE cm.campaign_id = ? ORDER BY m.id;

-- Tx.checkRefs#1 (campaign_input.go)
SELECT status FROM content_views WHERE id = ? AND app_id = ?;

-- Tx.checkRefs#2 (campaign_input.go)
SELECT 1 FROM metrics WHERE id = ? AND app_id = ?;

-- Tx.checkRefs#3 (campaign_input.go)
SELECT status FROM audiences WHERE id = ? AND app_id = ?;

-- Tx.campaignKeyTaken#1 (campaign_keys.go)
SELECT id FROM campaigns WHERE app_id = ? AND key = ?;

-- DB.backfillCampaignKeys#1 (campaign_keys.go)
SELECT id, app_id, name FROM campaigns WHERE key IS NULL ORDER BY id;

-- DB.backfillCampaignKeys#2 (campaign_keys.go)
UPDATE campaigns SET key = ? WHERE id = ? AND key IS NULL;

-- DB.CampaignIDByKey#1 (campaign_keys.go)
SELECT id FROM campaigns WHERE app_id = ? AND key = ?;

-- DB.CreateCampaign#1 (campaigns.go)
INSERT INTO campaigns (app_id, name, key, description, status, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
				namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertCampaignMetrics#1 (campaigns.go)
INSERT INTO campaign_metrics (campaign_id, metric_id, role, position) VALUES (?, ?, ?, ?);

-- attachMetrics#1 (campaigns.go)
SELECT campaign_id, metric_id, role FROM campaign_metrics
		WHERE campaign_id IN (SELECT value FROM json_each(?)) ORDER BY campaign_id, position;

-- Tx.insertVariants#1 (campaigns.go)
INSERT INTO campaign_variants (campaign_id, name, content_view_id, traffic_allocation, is_control) VALUES (?, ?, ?, ?, ?);

-- findCampaign#1 (campaigns.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE id = ? AND app_id = ?;

-- findVariants#1 (campaigns.go)
SELECT campaign_id, id, name, content_view_id, traffic_allocation, is_control, impressions, conversions, cuped_sum_x, cuped_sum_xx, cuped_sum_xy FROM campaign_variants WHERE campaign_id = ? ORDER BY id;

-- DB.attachVariants#1 (campaigns.go)
SELECT campaign_id, id, name, content_view_id, traffic_allocation, is_control, impressions, conversions, cuped_sum_x, cuped_sum_xx, cuped_sum_xy FROM campaign_variants
		WHERE campaign_id IN (SELECT value FROM json_each(?)) ORDER BY campaign_id, id;

-- DB.UpdateCampaign#1 [1/2] (campaigns.go)
UPDATE campaigns SET updated_at = ? WHERE id = ?;

-- DB.UpdateCampaign#1 [2/2] (campaigns.go)
UPDATE campaigns SET updated_at = ?, name = ?, key = ?, description = ?, start_at = ?, end_at = ?, timezone = ?, goal_event_id = ?, audience_id = ?, assignment_type = ?, stats_engine = ?, namespace_id = ?, namespace_start = ?, namespace_end = ?, cuped_lookback_days = ?, guardrail_action = ? WHERE id = ?;

-- DB.UpdateCampaign#2 (campaigns.go)
DELETE FROM campaign_variants WHERE campaign_id = ?;

-- DB.UpdateCampaign#3 (campaigns.go)
DELETE FROM campaign_metrics WHERE campaign_id = ?;

-- DB.UnarchiveCampaign#1 (campaigns.go)
UPDATE campaigns SET status = ?, archived_from = NULL, updated_at = ? WHERE id = ? AND status = 'archived';

-- DB.DeleteCampaign#1 (campaigns.go)
DELETE FROM assignments WHERE campaign_id = ?;

-- DB.DeleteCampaign#2 (campaigns.go)
DELETE FROM campaigns WHERE id = ? AND status = ?;

-- DB.CreateContent#1 (content.go)
INSERT INTO content_views (app_id, name, status, items, published_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- DB.FindContentByID#1 (content.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE id = ? AND app_id = ?;

-- Tx.usedByLiveCampaign#1 (content.go)
SELECT COUNT(*) FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE v.content_view_id = ? AND c.status IN ('draft','active','paused');

-- Tx.runningCampaignsShowing#1 (content.go)
SELECT DISTINCT c.id FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE v.content_view_id = ? AND c.status IN ('active','paused') ORDER BY c.id;

-- DB.UpdateContent#1 (content.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE id = ? AND app_id = ?;

-- DB.UpdateContent#2 (content.go)
UPDATE content_views SET name = ?, status = ?, items = ?, published_at = ?, updated_at = ? WHERE id = ?;

-- DB.DeleteContent#1 (content.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE id = ? AND app_id = ?;

-- DB.DeleteContent#2 (content.go)
DELETE FROM content_views WHERE id = ?;

-- Tx.recordCovariates#1 (cuped.go)
UPDATE assignments SET covariate = ? WHERE campaign_id = ? AND user_key = ?;

-- Tx.countCovariates#1 [1/2] (cuped.go)
SELECT u.key, e.ts, e.id, e.run FROM json_each(?) AS u CROSS JOIN event_users AS e ON e.app_id = ? AND e.user_id = u.value AND e.event_id = ? AND e.ts >= ? UNION ALL SELECT u.key, e.ts, e.id, e.run FROM json_each(?) AS u CROSS JOIN session_links AS l ON l.app_id = ? AND l.user_id = u.value CROSS JOIN event_users AS e ON e.app_id = -l.app_id AND e.user_id = l.session_id AND e.event_id = ? AND e.ts >= ?;

-- Tx.countCovariates#1 [2/2] (cuped.go)
SELECT u.key, e.ts, e.id, e.run FROM json_each(?) AS u CROSS JOIN event_users AS e ON e.app_id = -? AND e.user_id = u.value AND e.event_id = ? AND e.ts >= ?;

-- DB.CampaignsUsingAudience#1 (dashboard_reads.go)
SELECT id, name, status FROM campaigns WHERE app_id = ? AND audience_id = ? ORDER BY id DESC;

-- DB.EventCounts#1 (dashboard_reads.go)
SELECT event_id, SUM(CASE WHEN ts >= ? THEN 1 ELSE 0 END), SUM(CASE WHEN ts >= ? THEN 1 ELSE 0 END), COUNT(*)
		FROM events INDEXED BY events_app_event_ts WHERE app_id = ? AND ts >= ?
		GROUP BY event_id ORDER BY COUNT(*) DESC, event_id LIMIT 200;

-- DB.FindUserAssignments#1 (dashboard_reads.go)
SELECT c.id, c.name, c.status, a.variant_id, COALESCE(v.name, ''), a.assigned_at, a.converted_at
		FROM campaigns AS c JOIN assignments AS a ON a.campaign_id = c.id AND a.user_key = ?
		LEFT JOIN campaign_variants AS v ON v.id = a.variant_id
		WHERE c.app_id = ? ORDER BY a.assigned_at DESC, c.id DESC;

-- Tx.insertDashboardUser#1 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users WHERE email = ?;

-- Tx.insertDashboardUser#2 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users;

-- Tx.insertDashboardUser#3 (dashboard_users.go)
INSERT INTO dashboard_users (email, password_hash, owner, created_at) VALUES (?, ?, ?, ?) RETURNING id;

-- DB.CreateDashboardUser#1 (dashboard_users.go)
DELETE FROM dashboard_setup;

-- DB.FindDashboardUsers#1 (dashboard_users.go)
SELECT id, email, owner, created_at FROM dashboard_users ORDER BY id;

-- DB.FindDashboardUsers#2 (dashboard_users.go)
SELECT m.user_id, m.app_id, a.name, m.role FROM app_members m JOIN apps a ON a.id = m.app_id ORDER BY m.app_id;

-- Tx.findUserByEmail#1 (dashboard_users.go)
SELECT id, email, owner, created_at FROM dashboard_users WHERE email = ?;

-- Tx.keepsAnOwner#1 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users WHERE owner = ?;

-- Tx.keepsAnOwner#2 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users;

-- DB.DeleteDashboardUser#1 (dashboard_users.go)
DELETE FROM dashboard_users WHERE id = ?;

-- DB.SetDashboardOwner#1 (dashboard_users.go)
UPDATE dashboard_users SET owner = ? WHERE id = ?;

-- DB.AuthenticateDashboardUser#1 (dashboard_users.go)
SELECT id, email, owner, password_hash, created_at FROM dashboard_users WHERE email = ?;

-- DB.CreateSetupToken#1 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users;

-- DB.CreateSetupToken#2 (dashboard_users.go)
DELETE FROM dashboard_setup;

-- DB.CreateSetupToken#3 (dashboard_users.go)
INSERT INTO dashboard_setup (id, token, created_at, expires_at) VALUES (1, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET token = excluded.token, created_at = excluded.created_at, expires_at = excluded.expires_at
			WHERE dashboard_setup.expires_at <= excluded.created_at;

-- DB.CreateSetupToken#4 (dashboard_users.go)
SELECT token FROM dashboard_setup WHERE id = 1;

-- DB.CheckSetupToken#1 (dashboard_users.go)
SELECT token FROM dashboard_setup WHERE id = 1 AND expires_at > ?;

-- DB.CompleteSetup#1 (dashboard_users.go)
DELETE FROM dashboard_setup WHERE id = 1 AND token = ? AND expires_at > ?;

-- DB.CompleteSetup#2 (dashboard_users.go)
SELECT COUNT(*) FROM dashboard_users;

-- DB.CreateDashboardSession#1 (dashboard_users.go)
SELECT id, email, owner, created_at FROM dashboard_users WHERE id = ?;

-- DB.CreateDashboardSession#2 (dashboard_users.go)
DELETE FROM dashboard_sessions WHERE expires_at <= ?;

-- DB.CreateDashboardSession#3 (dashboard_users.go)
INSERT INTO dashboard_sessions (token_hash, user_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?);

-- DB.FindDashboardSession#1 (dashboard_users.go)
SELECT u.id, u.email, u.owner, u.created_at, s.csrf_token, s.expires_at
		FROM dashboard_sessions s JOIN dashboard_users u ON u.id = s.user_id
		WHERE s.token_hash = ? AND s.expires_at > ?;

-- DB.DeleteDashboardSession#1 (dashboard_users.go)
DELETE FROM dashboard_sessions WHERE token_hash = ?;

-- DB.FindAllApps#1 (dashboard_users.go)
SELECT id, name, plan, rate_limit FROM apps ORDER BY id;

-- DB.EachFormSubmission#1 (dashboard_users.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at
		FROM form_submissions WHERE app_id = ? AND content_view_id = ? ORDER BY id;

-- Tx.insertID#1 [1/12] (db.go)
INSERT INTO apps (name, plan, rate_limit, created_at, allowed_origins, event_retention_days, form_retention_days) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [2/12] (db.go)
INSERT INTO api_keys (app_id, role, name, key_hash, key_prefix, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [3/12] (db.go)
INSERT INTO audiences (app_id, name, description, status, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [4/12] (db.go)
INSERT INTO campaigns (app_id, name, key, description, status, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
				namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [5/12] (db.go)
INSERT INTO content_views (app_id, name, status, items, published_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [6/12] (db.go)
INSERT INTO dashboard_users (email, password_hash, owner, created_at) VALUES (?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [7/12] (db.go)
INSERT INTO form_submissions (app_id, content_view_id, data, user_id, session_id, environment, submitted_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [8/12] (db.go)
INSERT INTO dashboard_invitations (token_hash, email, app_id, role, invited_by, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [9/12] (db.go)
INSERT INTO metrics (app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [10/12] (db.go)
INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [11/12] (db.go)
INSERT INTO dashboard_password_resets (token_hash, user_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING id;

-- Tx.insertID#1 [12/12] (db.go)
INSERT INTO webhooks (app_id, url, events, secret, headers, max_retries, timeout_seconds,
			description, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- Tx.eraseUser#1 (erasure.go)
SELECT 1 FROM apps WHERE id = ?;

-- Tx.eraseUser#2 (erasure.go)
DELETE FROM form_submissions WHERE app_id = ? AND session_id = ?;

-- Tx.eraseUser#3 (erasure.go)
DELETE FROM assignments
			WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?) AND user_key = ?;

-- Tx.eraseUser#4 (erasure.go)
DELETE FROM metric_values
			WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?)
				AND metric_id IN (SELECT id FROM metrics WHERE app_id = ?) AND user_key = ?;

-- Tx.eraseUser#5 (erasure.go)
DELETE FROM form_submissions WHERE app_id = ? AND user_id = ?;

-- Tx.eraseUser#6 (erasure.go)
DELETE FROM users WHERE app_id = ? AND user_id = ?;

-- Tx.eraseUser#7 (erasure.go)
DELETE FROM session_links WHERE app_id = ? AND user_id = ?;

-- linkedSessions#1 (erasure.go)
SELECT session_id FROM session_links WHERE app_id = ? AND user_id = ? ORDER BY session_id;

-- Tx.redactDeliveries#1 (erasure.go)
SELECT d.id, d.payload FROM webhook_deliveries d
			WHERE d.webhook_id IN (SELECT id FROM webhooks WHERE app_id = ?) AND d.redacted_at IS NULL AND instr(d.payload, ?) > 0;

-- Tx.redactDeliveries#2 (erasure.go)
UPDATE webhook_deliveries SET payload = ?, redacted_at = ? WHERE id = ?;

-- Tx.recordErasure#1 (erasure.go)
INSERT INTO erasure_state (id, salt, count) VALUES (1, ?, 1)
		ON CONFLICT (id) DO UPDATE SET count = erasure_state.count + 1 RETURNING salt, count;

-- Tx.recordErasure#2 (erasure.go)
INSERT INTO erasure_scrubs (requested_at) VALUES (?);

-- DB.noticeErasures#1 (erasure.go)
SELECT count FROM erasure_state WHERE id = 1;

-- DB.ScrubErasures#1 (erasure.go)
SELECT COALESCE(MAX(id), 0), COUNT(*) FROM erasure_scrubs;

-- DB.ScrubErasures#2 (erasure.go)
DELETE FROM erasure_scrubs WHERE id <= ?;

-- Tx.logEvent#1 (events.go)
SELECT id, event_id, ts FROM events WHERE app_id = ? AND log_id = ?;

-- Tx.convertEach#1 (events.go)
UPDATE assignments SET converted_at = ? WHERE campaign_id = ? AND user_key = ? AND converted_at IS NULL AND assigned_at <= ? RETURNING variant_id, covariate;

-- Tx.convertEach#2 [1/2] (events.go)
UPDATE assignments SET converted_at = ? WHERE campaign_id = ? AND NOT EXISTS (SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = ? AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = ? AND l.session_id = ?)
		AND user_key = ? AND converted_at IS NULL AND assigned_at <= ? RETURNING variant_id, covariate;

-- Tx.convertEach#2 [2/2] (events.go)
UPDATE assignments SET converted_at = ? WHERE campaign_id = ? AND user_key = coalesce((SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = ? AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = ? AND l.session_id = ?), ?)
		AND converted_at IS NULL AND assigned_at <= ? RETURNING variant_id, covariate;

-- DB.FindEvents#1 [1/3] (events.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events WHERE app_id = ? ORDER BY ts DESC, id DESC LIMIT ?;

-- DB.FindEvents#1 [2/3] (events.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events NOT INDEXED WHERE app_id = ? AND user_id = ? AND id IN (SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
			WHERE e.app_id = ? AND e.user_id = ? AND e.id <= (SELECT upto FROM event_users_upto)
			UNION ALL SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND user_id = ?) ORDER BY ts DESC, id DESC LIMIT ?;

-- DB.FindEvents#1 [3/3] (events.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events NOT INDEXED WHERE app_id = ? AND event_id = ? AND user_id = ? AND id IN (SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
			WHERE e.app_id = ? AND e.user_id = ? AND e.event_id = ? AND e.id <= (SELECT upto FROM event_users_upto)
			UNION ALL SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND user_id = ?) AND ts >= ? AND ts <= ? AND (ts, id) < (SELECT ts, id FROM events WHERE id = ?) ORDER BY ts DESC, id DESC LIMIT ?;

-- Tx.expireBatch#1 (events.go)
SELECT id, user_id, session_id, event_id, ts FROM events WHERE app_id = ? AND ts < ? ORDER BY ts LIMIT ?;

-- Tx.expireBatch#2 (events.go)
DELETE FROM events WHERE id IN (SELECT value FROM json_each(?));

-- DB.DeleteExpiredFormSubmissions#1 (events.go)
DELETE FROM form_submissions WHERE id IN
					(SELECT id FROM form_submissions WHERE app_id = ? AND submitted_at < ? ORDER BY id LIMIT ?);

-- DB.appRetentions#1 (events.go)
SELECT id, event_retention_days, form_retention_days FROM apps ORDER BY id;

-- DB.ExportUser#1 (export.go)
SELECT 1 FROM apps WHERE id = ?;

-- DB.ExportUser#2 (export.go)
SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = ? AND user_id = ?;

-- DB.ExportUser#3 (export.go)
SELECT c.id, c.name, c.key, v.id, v.name, a.assigned_at, a.converted_at, a.covariate
				FROM campaigns c JOIN assignments a ON a.campaign_id = c.id AND a.user_key = ?
				JOIN campaign_variants v ON v.id = a.variant_id
				WHERE c.app_id = ? ORDER BY c.id;

-- DB.ExportUser#4 (export.go)
SELECT mv.campaign_id, m.id, m.key, mv.value FROM metric_values mv JOIN metrics m ON m.id = mv.metric_id
					WHERE mv.campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?)
						AND mv.metric_id IN (SELECT id FROM metrics WHERE app_id = ?) AND mv.user_key = ?
					ORDER BY mv.campaign_id, m.id;

-- DB.ExportUser#5 [1/2] (export.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at
				FROM form_submissions WHERE app_id = ? AND (user_id = ?) ORDER BY id;

-- DB.ExportUser#5 [2/2] (export.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at
				FROM form_submissions WHERE app_id = ? AND (user_id = ? OR session_id = ?) ORDER BY id;

-- DB.ExportUser#6 [1/2] (export.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events NOT INDEXED
		WHERE app_id = ? AND user_id = ? AND id IN (
			SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
				WHERE e.app_id = ? AND e.user_id = ? AND e.id <= (SELECT upto FROM event_users_upto)
			UNION ALL SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND user_id = ?)
		ORDER BY id;

-- DB.ExportUser#6 [2/2] (export.go)
SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events NOT INDEXED
		WHERE app_id = ? AND session_id = ? AND user_id IS NULL AND id IN (
			SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
				WHERE e.app_id = ? AND e.user_id = ? AND e.id <= (SELECT upto FROM event_users_upto)
			UNION ALL SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND session_id = ? AND user_id IS NULL)
		ORDER BY id;

-- DB.SubmitForm#1 (forms.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE id = ? AND app_id = ?;

-- DB.SubmitForm#2 (forms.go)
INSERT INTO form_submissions (app_id, content_view_id, data, user_id, session_id, environment, submitted_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- DB.CheckGuardrails#1 (guardrails.go)
SELECT c.app_id, c.id FROM campaigns c WHERE c.status = 'active'
		AND EXISTS (SELECT 1 FROM campaign_metrics cm WHERE cm.campaign_id = c.id AND cm.role = 'guardrail') ORDER BY c.id;

-- DB.newRegressions#1 (guardrails.go)
SELECT COUNT(*) FROM guardrail_regressions WHERE campaign_id = ? AND metric_id = ? AND variant_id = ?;

-- Tx.reportRegressions#1 (guardrails.go)
UPDATE campaigns SET status = status WHERE id = ?;

-- Tx.reportRegressions#2 (guardrails.go)
INSERT INTO guardrail_regressions (campaign_id, metric_id, variant_id, action, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (campaign_id, metric_id, variant_id) DO NOTHING;

-- Tx.linkSession#1 (links.go)
SELECT user_id FROM session_links WHERE app_id = ? AND session_id = ?;

-- Tx.insertLinkEach#1 (links.go)
INSERT INTO session_links (app_id, session_id, user_id, linked_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (app_id, session_id) DO NOTHING;

-- Tx.insertLinkEach#2 (links.go)
SELECT c.id FROM campaigns AS c JOIN assignments AS a ON a.campaign_id = c.id AND a.user_key = ?
		WHERE c.app_id = ? AND NOT EXISTS (SELECT 1 FROM assignments AS b WHERE b.campaign_id = c.id AND b.user_key = ?)
		ORDER BY c.id;

-- Tx.takeSession#1 (links.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at, converted_at, covariate)
		SELECT campaign_id, ?, variant_id, assigned_at, converted_at, covariate FROM assignments WHERE campaign_id = ? AND user_key = ?
		ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING variant_id, assigned_at, converted_at;

-- DB.FindSessionLink#1 (links.go)
SELECT user_id, linked_at FROM session_links WHERE app_id = ? AND session_id = ?;

-- findPage#1 [1/16] (list.go)
SELECT COUNT(*) FROM api_keys WHERE app_id = ?;

-- findPage#1 [2/16] (list.go)
SELECT COUNT(*) FROM apps WHERE 1 = 1;

-- findPage#1 [3/16] (list.go)
SELECT COUNT(*) FROM audiences WHERE app_id = ?;

-- findPage#1 [4/16] (list.go)
SELECT COUNT(*) FROM audiences WHERE app_id = ? AND status = ?;

-- findPage#1 [5/16] (list.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = ? AND status != 'archived';

-- findPage#1 [6/16] (list.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = ? AND status = ?;

-- findPage#1 [7/16] (list.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = ? AND status != 'archived' AND instr(lower(name), lower(?)) > 0;

-- findPage#1 [8/16] (list.go)
SELECT COUNT(*) FROM campaigns WHERE app_id = ? AND status = ? AND instr(lower(name), lower(?)) > 0;

-- findPage#1 [9/16] (list.go)
SELECT COUNT(*) FROM content_views WHERE app_id = ?;

-- findPage#1 [10/16] (list.go)
SELECT COUNT(*) FROM content_views WHERE app_id = ? AND status = ?;

-- findPage#1 [11/16] (list.go)
SELECT COUNT(*) FROM form_submissions WHERE app_id = ?;

-- findPage#1 [12/16] (list.go)
SELECT COUNT(*) FROM form_submissions WHERE app_id = ? AND content_view_id = ?;

-- findPage#1 [13/16] (list.go)
SELECT COUNT(*) FROM metrics WHERE app_id = ?;

-- findPage#1 [14/16] (list.go)
SELECT COUNT(*) FROM webhooks WHERE app_id = ?;

-- findPage#1 [15/16] (list.go)
SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = ?;

-- findPage#1 [16/16] (list.go)
SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = ? AND d.status = ?;

-- findPage#2 [1/16] (list.go)
SELECT id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE app_id = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [2/16] (list.go)
SELECT id, name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps WHERE 1 = 1 ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [3/16] (list.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE app_id = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [4/16] (list.go)
SELECT id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at FROM audiences WHERE app_id = ? AND status = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [5/16] (list.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE app_id = ? AND status != 'archived' ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [6/16] (list.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE app_id = ? AND status = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [7/16] (list.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE app_id = ? AND status != 'archived' AND instr(lower(name), lower(?)) > 0 ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [8/16] (list.go)
SELECT id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at FROM campaigns WHERE app_id = ? AND status = ? AND instr(lower(name), lower(?)) > 0 ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [9/16] (list.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE app_id = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [10/16] (list.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views WHERE app_id = ? AND status = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [11/16] (list.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at FROM form_submissions WHERE app_id = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [12/16] (list.go)
SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at FROM form_submissions WHERE app_id = ? AND content_view_id = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [13/16] (list.go)
SELECT id, app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at FROM metrics WHERE app_id = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [14/16] (list.go)
SELECT id, app_id, url, events, secret, headers, max_retries, timeout_seconds, description,
	status, consecutive_failures, total_successes, total_failures, created_at, updated_at,
	secret_rotated_at, previous_secret_expires_at FROM webhooks WHERE app_id = ? ORDER BY id DESC LIMIT ? OFFSET ?;

-- findPage#2 [15/16] (list.go)
SELECT d.id, d.webhook_id, d.event, d.payload, d.status, d.next_attempt_at, d.created_at,
	(SELECT COUNT(*) FROM webhook_attempts a WHERE a.delivery_id = d.id), d.redacted_at FROM webhook_deliveries d WHERE d.webhook_id = ? ORDER BY d.id DESC LIMIT ? OFFSET ?;

-- findPage#2 [16/16] (list.go)
SELECT d.id, d.webhook_id, d.event, d.payload, d.status, d.next_attempt_at, d.created_at,
	(SELECT COUNT(*) FROM webhook_attempts a WHERE a.delivery_id = d.id), d.redacted_at FROM webhook_deliveries d WHERE d.webhook_id = ? AND d.status = ? ORDER BY d.id DESC LIMIT ? OFFSET ?;

-- DB.FindAppRole#1 (members.go)
SELECT role FROM app_members WHERE user_id = ? AND app_id = ?;

-- DB.FindUserApps#1 (members.go)
SELECT a.id, a.name, a.plan, a.rate_limit, m.role
		FROM app_members m JOIN apps a ON a.id = m.app_id WHERE m.user_id = ? ORDER BY a.id;

-- DB.FindAppMembers#1 (members.go)
SELECT u.id, u.email, m.role, m.created_at
		FROM app_members m JOIN dashboard_users u ON u.id = m.user_id WHERE m.app_id = ? ORDER BY lower(u.email), u.id;

-- Tx.appName#1 (members.go)
SELECT name FROM apps WHERE id = ?;

-- Tx.grant#1 (members.go)
INSERT INTO app_members (app_id, user_id, role, created_at) VALUES (?, ?, ?, ?);

-- Tx.grant#2 (members.go)
UPDATE app_members SET role = ? WHERE app_id = ? AND user_id = ?;

-- DB.GrantRole#1 (members.go)
SELECT created_at FROM app_members WHERE app_id = ? AND user_id = ?;

-- DB.RevokeRole#1 (members.go)
DELETE FROM app_members WHERE app_id = ? AND user_id = ?;

-- DB.CreateInvitation#1 (members.go)
INSERT INTO dashboard_invitations (token_hash, email, app_id, role, invited_by, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- DB.FindInvitations#1 (members.go)
SELECT i.id, i.email, i.app_id, a.name, i.role, i.created_at, i.expires_at, i.accepted_at,
	EXISTS (SELECT 1 FROM dashboard_users u WHERE u.email = i.email) FROM dashboard_invitations i JOIN apps a ON a.id = i.app_id
		WHERE i.app_id = ? AND i.accepted_at IS NULL AND i.expires_at > ? ORDER BY i.id DESC;

-- findInvitation#1 (members.go)
SELECT i.id, i.email, i.app_id, a.name, i.role, i.created_at, i.expires_at, i.accepted_at,
	EXISTS (SELECT 1 FROM dashboard_users u WHERE u.email = i.email) FROM dashboard_invitations i JOIN apps a ON a.id = i.app_id
		WHERE i.token_hash = ?;

-- DB.AcceptInvitation#1 (members.go)
UPDATE dashboard_invitations SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL;

-- Tx.roleIn#1 (members.go)
SELECT role FROM app_members WHERE user_id = ? AND app_id = ?;

-- DB.RevokeInvitation#1 (members.go)
SELECT email, role, expires_at FROM dashboard_invitations WHERE id = ? AND app_id = ? AND accepted_at IS NULL;

-- DB.RevokeInvitation#2 (members.go)
DELETE FROM dashboard_invitations WHERE id = ?;

-- Tx.flushJournal#1 (metricmoves.go)
INSERT INTO metric_moves (moves) VALUES (?);

-- DB.applyMoves#1 (metricmoves.go)
SELECT max(id) FROM metric_moves;

-- Tx.applyMerged#1 (metricmoves.go)
DELETE FROM metric_moves WHERE id = (SELECT min(id) FROM metric_moves WHERE merged) RETURNING id, moves;

-- DB.mergeStep#1 (metricmoves.go)
SELECT EXISTS (SELECT 1 FROM metric_moves WHERE merged);

-- DB.mergeStep#2 (metricmoves.go)
DELETE FROM metric_moves WHERE id IN (SELECT value FROM json_each(?)) AND NOT merged;

-- DB.mergeStep#3 (metricmoves.go)
INSERT INTO metric_moves (moves, merged) VALUES (?, ?);

-- DB.mergeStep#4 (metricmoves.go)
SELECT EXISTS (SELECT 1 FROM metric_moves WHERE merged);

-- readJournal#1 (metricmoves.go)
SELECT id, moves FROM metric_moves WHERE id <= ? AND NOT merged ORDER BY id;

-- Tx.applyMetricMoves#1 (metricmoves.go)
DELETE FROM metric_moves RETURNING id, moves;

-- Tx.moveSessions#1 (metricmoves.go)
UPDATE metric_values SET user_key = ? WHERE campaign_id = ?
			AND metric_id IN (SELECT id FROM metrics WHERE app_id = ?) AND user_key = ?
			AND NOT EXISTS (SELECT 1 FROM metric_values AS o WHERE o.campaign_id = metric_values.campaign_id
				AND o.metric_id = metric_values.metric_id AND o.user_key = ?);

-- Tx.liveMoves#1 (metricmoves.go)
SELECT EXISTS (SELECT 1 FROM campaigns WHERE id = ?);

-- Tx.liveMoves#2 (metricmoves.go)
SELECT type, cap FROM metrics WHERE id = ?;

-- Tx.checkMetricKeyFree#1 (metrics.go)
SELECT id FROM metrics WHERE app_id = ? AND key = ? AND id <> ?;

-- DB.CreateMetric#1 (metrics.go)
INSERT INTO metrics (app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- findMetric#1 (metrics.go)
SELECT id, app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at FROM metrics WHERE id = ? AND app_id = ?;

-- metricCampaigns#1 [1/2] (metrics.go)
SELECT c.id, c.name, c.status, cm.role FROM campaign_metrics cm JOIN campaigns c ON c.id = cm.campaign_id
		WHERE cm.metric_id = ? ORDER BY c.id;

-- metricCampaigns#1 [2/2] (metrics.go)
SELECT c.id, c.name, c.status, cm.role FROM campaign_metrics cm JOIN campaigns c ON c.id = cm.campaign_id
		WHERE cm.metric_id = ? AND c.status IN (?, ?) ORDER BY c.id;

-- DB.UpdateMetric#1 (metrics.go)
UPDATE metrics SET key = ?, name = ?, description = ?, type = ?, event_id = ?, property = ?, window_hours = ?, direction = ?, cap = ?, updated_at = ? WHERE id = ?;

-- DB.DeleteMetric#1 (metrics.go)
DELETE FROM campaign_metrics WHERE metric_id = ?;

-- DB.DeleteMetric#2 (metrics.go)
DELETE FROM metrics WHERE id = ?;

-- Tx.flushMetrics#1 [1/2] (metricvalues.go)
SELECT user_key, variant_id, assigned_at FROM assignments WHERE campaign_id = ? AND NOT EXISTS (SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = ? AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = ? AND l.session_id = ?)
		AND user_key = ? AND assigned_at <= ?;

-- Tx.flushMetrics#1 [2/2] (metricvalues.go)
SELECT user_key, variant_id, assigned_at FROM assignments WHERE campaign_id = ? AND user_key = coalesce((SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = ? AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = ? AND l.session_id = ?), ?)
		AND assigned_at <= ?;

-- Tx.writeMetricMoves#1 (metricvalues.go)
INSERT INTO metric_sums (campaign_id, metric_id, variant_id, sum, sum_sq)
		SELECT CAST(j.value ->> 0 AS BIGINT), CAST(j.value ->> 1 AS BIGINT), CAST(j.value ->> 2 AS BIGINT),
			CAST(j.value ->> 3 AS DOUBLE PRECISION), CAST(j.value ->> 4 AS DOUBLE PRECISION)
		FROM json_each(?) AS j WHERE true ORDER BY j.key
		ON CONFLICT (campaign_id, metric_id, variant_id) DO UPDATE SET sum = metric_sums.sum + excluded.sum, sum_sq = metric_sums.sum_sq + excluded.sum_sq;

-- Tx.metricUsers#1 (metricvalues.go)
SELECT u.value, a.variant_id, a.assigned_at FROM json_each(?) AS u CROSS JOIN assignments AS a ON a.campaign_id = ? AND a.user_key = u.value;

-- campaignMetricResults#1 (metricvalues.go)
SELECT m.id, m.key, m.name, m.type, m.direction, cm.role FROM campaign_metrics cm JOIN metrics m ON m.id = cm.metric_id
		WHERE cm.campaign_id = ? ORDER BY CASE cm.role WHEN 'secondary' THEN 0 ELSE 1 END, cm.position;

-- campaignMetricResults#2 (metricvalues.go)
SELECT metric_id, variant_id, sum, sum_sq FROM metric_sums WHERE campaign_id = ?;

-- Tx.move#1 (moves.go)
SELECT status, name, start_at, end_at, namespace_id, namespace_start, namespace_end FROM campaigns WHERE id = ? AND app_id = ?;

-- Tx.move#2 [1/2] (moves.go)
UPDATE campaigns SET status = ?, updated_at = ? WHERE id = ? AND status = ?;

-- Tx.move#2 [2/2] (moves.go)
UPDATE campaigns SET status = ?, updated_at = ?, start_at = ?, started_at = ?, completed_at = ?, archived_from = ? WHERE id = ? AND status = ?;

-- blockProblems#1 (moves.go)
SELECT v.content_view_id, c.status FROM campaign_variants v LEFT JOIN content_views c ON c.id = v.content_view_id
		WHERE v.campaign_id = ? ORDER BY v.id;

-- DB.CampaignBlockProblems#1 (moves.go)
SELECT COUNT(*) FROM campaigns WHERE id = ? AND app_id = ?;

-- Tx.checkNamespaceFree#1 (moves.go)
SELECT id, name, status, namespace_start, namespace_end FROM campaigns
		WHERE app_id = ? AND namespace_id = ? AND id <> ? AND status IN ('active','paused')
			AND namespace_start < ? AND namespace_end > ? ORDER BY id;

-- Tx.emitCompleted#1 (moves.go)
SELECT stats_engine FROM campaigns WHERE id = ?;

-- DB.RunSchedule#1 (moves.go)
SELECT app_id, id, 'active' FROM campaigns WHERE status = 'draft' AND start_at IS NOT NULL AND start_at <= ? AND end_at > ?
		UNION ALL
		SELECT app_id, id, 'completed' FROM campaigns WHERE status IN ('active','paused') AND end_at IS NOT NULL AND end_at <= ?;

-- DB.RunSchedule#2 (moves.go)
SELECT start_at, end_at FROM campaigns WHERE id = ?;

-- DB.FindNamespaces#1 (namespaces.go)
SELECT namespace_id, id, name, status, namespace_start, namespace_end FROM campaigns
		WHERE app_id = ? AND namespace_id IS NOT NULL AND status <> 'archived'
		ORDER BY namespace_id, namespace_start, namespace_end, id;

-- DB.DeliveryBacklog#1 (observe.go)
SELECT count(*), min(created_at) FROM webhook_deliveries WHERE status = 'pending';

-- DB.SetAppAllowedOrigins#1 (origins.go)
UPDATE apps SET allowed_origins = ? WHERE id = ?;

-- DB.loadOrigins#1 (origins.go)
SELECT allowed_origins FROM apps WHERE id = ?;

-- Tx.emit#1 (outbox.go)
SELECT id, events FROM webhooks WHERE app_id = ? AND status = 'ACTIVE';

-- Tx.emit#2 (outbox.go)
INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?);

-- Tx.parkDeliveries#1 (outbox.go)
UPDATE webhook_deliveries SET next_attempt_at = NULL
		WHERE webhook_id = ? AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= ?);

-- DB.RedeliverDelivery#1 (outbox.go)
UPDATE webhook_deliveries SET status = 'pending', attempts = 0,
				next_attempt_at = CASE WHEN (SELECT status FROM webhooks WHERE id = ?) = 'ACTIVE' THEN CAST(? AS BIGINT) END
			WHERE id = ? AND webhook_id = ? AND webhook_id IN (SELECT id FROM webhooks WHERE app_id = ?);

-- DB.RedeliverDelivery#2 (outbox.go)
SELECT event FROM webhook_deliveries WHERE id = ?;

-- DB.SendTestDelivery#1 (outbox.go)
INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?) RETURNING id;

-- DB.ClaimDueDeliveries#1 (outbox.go)
UPDATE webhook_deliveries
			SET claimed_until = CAST(? AS BIGINT) + CAST(? AS BIGINT) + (SELECT w.timeout_seconds * 1000 FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id),
				claimed_by = ?
			WHERE id IN (SELECT d.id FROM webhook_deliveries d
					WHERE d.id IN (SELECT value FROM json_each(?)) AND +d.status = 'pending' AND +d.next_attempt_at <= ?
						AND (d.claimed_until IS NULL OR d.claimed_until <= ?))
				AND (SELECT w.status FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id) = 'ACTIVE'
			RETURNING id, webhook_id, event, payload, created_at, attempts, claimed_until;

-- DB.ClaimDueDeliveries#2 (outbox.go)
SELECT id, url, secret, headers, timeout_seconds, max_retries,
				CASE WHEN previous_secret_expires_at > ? THEN previous_secret ELSE '' END
			FROM webhooks WHERE id IN (SELECT value FROM json_each(?));

-- DB.dueDeliveries#1 (outbox.go)
SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
			JOIN webhooks w ON w.id = d.webhook_id
			WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.next_attempt_at, d.id) > (?, ?)
				AND (d.claimed_until IS NULL OR d.claimed_until <= ?) AND w.status = 'ACTIVE'
				AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
			ORDER BY d.next_attempt_at, d.id LIMIT 512;

-- DB.ReleaseDeliveries#1 (outbox.go)
UPDATE webhook_deliveries SET claimed_until = NULL, claimed_by = NULL
				WHERE id = ? AND claimed_until = ? AND COALESCE(claimed_by, 0) = ?;

-- DB.NextDeliveryDue#1 (outbox.go)
SELECT MIN(next_attempt_at) FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at > ?;

-- DB.RecordAttempts#1 (outbox.go)
INSERT INTO webhook_attempts (delivery_id, at, response_status, error, duration_ms)
			SELECT CAST(j.value ->> 0 AS BIGINT), CAST(j.value ->> 1 AS BIGINT), CAST(j.value ->> 2 AS BIGINT), j.value ->> 3, CAST(j.value ->> 4 AS BIGINT)
			FROM json_each(?) AS j
			WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = CAST(j.value ->> 0 AS BIGINT)) ORDER BY j.key
			RETURNING delivery_id;

-- DB.RecordAttempts#2 (outbox.go)
UPDATE webhook_deliveries AS d SET status = 'succeeded', attempts = d.attempts + 1,
					next_attempt_at = NULL, claimed_until = NULL, claimed_by = NULL
				FROM (SELECT CAST(j.value ->> 0 AS BIGINT) AS id, CAST(j.value ->> 1 AS BIGINT) AS claim, CAST(j.value ->> 2 AS BIGINT) AS holder FROM json_each(?) AS j) AS s
				WHERE d.id = s.id AND d.claimed_until = s.claim AND COALESCE(d.claimed_by, 0) = s.holder;

-- DB.RecordAttempts#3 (outbox.go)
UPDATE webhooks SET
					consecutive_failures = CASE WHEN ? THEN 0 ELSE consecutive_failures END + ?,
					total_successes = total_successes + ?, total_failures = total_failures + ?,
					status = CASE WHEN consecutive_failures + CAST(? AS BIGINT) >= CAST(? AS BIGINT) OR CAST(? AS BIGINT) >= CAST(? AS BIGINT) THEN 'FAILED' ELSE status END
				WHERE id = ? RETURNING status, max_retries;

-- DB.RecordAttempts#4 (outbox.go)
UPDATE webhook_deliveries SET attempts = attempts + 1
				WHERE id = ? AND claimed_until = ? AND COALESCE(claimed_by, 0) = ? RETURNING attempts;

-- DB.RecordAttempts#5 (outbox.go)
UPDATE webhook_deliveries SET next_attempt_at = ?, claimed_until = NULL, claimed_by = NULL WHERE id = ?;

-- DB.RecordAttempts#6 (outbox.go)
UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, claimed_until = NULL, claimed_by = NULL WHERE id = ?;

-- Tx.setPassword#1 (passwords.go)
UPDATE dashboard_users SET password_hash = ? WHERE id = ?;

-- Tx.setPassword#2 (passwords.go)
DELETE FROM dashboard_sessions WHERE user_id = ? AND expires_at <= ?;

-- Tx.setPassword#3 (passwords.go)
DELETE FROM dashboard_sessions WHERE user_id = ?;

-- Tx.setPassword#4 (passwords.go)
DELETE FROM dashboard_sessions WHERE user_id = ? AND token_hash <> ?;

-- Tx.setPassword#5 (passwords.go)
DELETE FROM dashboard_password_resets WHERE user_id = ? AND used_at IS NULL;

-- DB.ChangeDashboardPassword#1 (passwords.go)
SELECT id, email, password_hash FROM dashboard_users WHERE id = ?;

-- DB.ChangeDashboardPassword#2 (passwords.go)
SELECT password_hash FROM dashboard_users WHERE id = ?;

-- DB.CreatePasswordReset#1 (passwords.go)
DELETE FROM dashboard_password_resets WHERE user_id = ? AND used_at IS NULL;

-- DB.CreatePasswordReset#2 (passwords.go)
INSERT INTO dashboard_password_resets (token_hash, user_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING id;

-- findPasswordReset#1 (passwords.go)
SELECT r.id, r.user_id, u.email, r.created_at, r.expires_at, r.used_at
		FROM dashboard_password_resets r JOIN dashboard_users u ON u.id = r.user_id WHERE r.token_hash = ?;

-- DB.ResetDashboardPassword#1 (passwords.go)
UPDATE dashboard_password_resets SET used_at = ? WHERE id = ? AND used_at IS NULL;

-- DB.ResetDashboardPassword#2 (passwords.go)
SELECT id, email, owner, created_at FROM dashboard_users WHERE id = ?;

-- Tx.flushHours#1 (results.go)
INSERT INTO campaign_variant_hours (variant_id, hour, impressions, conversions) VALUES (?, ?, ?, ?)
			ON CONFLICT (variant_id, hour) DO UPDATE SET impressions = campaign_variant_hours.impressions + excluded.impressions,
				conversions = campaign_variant_hours.conversions + excluded.conversions;

-- DB.CampaignDailySeries#1 (results.go)
SELECT timezone, status, start_at, end_at FROM campaigns WHERE id = ? AND app_id = ?;

-- DB.CampaignDailySeries#2 (results.go)
SELECT id, name FROM campaign_variants WHERE campaign_id = ? ORDER BY id;

-- DB.CampaignDailySeries#3 (results.go)
SELECT h.variant_id, h.hour, h.impressions, h.conversions FROM campaign_variant_hours AS h
		JOIN campaign_variants AS v ON v.id = h.variant_id WHERE v.campaign_id = ?;

-- DB.RotateWebhookSecret#1 (rotation.go)
UPDATE webhooks SET
				previous_secret = secret,
				previous_secret_expires_at = CASE WHEN secret = '' THEN NULL ELSE CAST(? AS BIGINT) END,
				secret = ?, secret_rotated_at = ?, updated_at = ?
			WHERE id = ? AND app_id = ?;

-- Tx.flushAssignments#1 (rows.go)
SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?;

-- Tx.roundRobin#1 (rows.go)
SELECT rr_next FROM campaigns WHERE id = ?;

-- Tx.roundRobin#2 (rows.go)
UPDATE campaigns SET rr_next = rr_next + ? WHERE id = ?;

-- Tx.storedAssignments#1 (rows.go)
SELECT u.value, a.variant_id, a.assigned_at FROM json_each(?) AS u CROSS JOIN assignments AS a ON a.campaign_id = ? AND a.user_key = u.value;

-- DB.loadRuleset#1 (ruleset.go)
SELECT c.id, c.key, c.assignment_type, c.namespace_id, c.namespace_start, c.namespace_end,
		a.id, a.status, a.definition
		FROM campaigns c LEFT JOIN audiences a ON a.id = c.audience_id
		WHERE c.app_id = ? AND c.status = 'active' ORDER BY c.id;

-- DB.loadRuleset#2 (ruleset.go)
SELECT MAX(m) FROM (
		SELECT MAX(updated_at) AS m FROM campaigns WHERE app_id = ?
		UNION ALL SELECT MAX(updated_at) FROM content_views WHERE app_id = ?
		UNION ALL SELECT MAX(updated_at) FROM audiences WHERE app_id = ?) t;

-- DB.rulesetVariants#1 (ruleset.go)
SELECT v.campaign_id, v.id, v.name, v.traffic_allocation, v.content_view_id, v.is_control
		FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE c.app_id = ? AND c.status = 'active' ORDER BY v.campaign_id, v.id;

-- DB.rulesetContent#1 (ruleset.go)
SELECT id, app_id, name, status, items, published_at, created_at, updated_at FROM content_views
		WHERE app_id = ? AND status = 'published' AND id IN (
			SELECT v.content_view_id FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
			WHERE c.app_id = ? AND c.status = 'active')
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
UPDATE webhooks SET secret = ? WHERE id = ?;

-- DB.SetSecretKeys#2 [2/2] (secrets.go)
UPDATE webhooks SET previous_secret = ? WHERE id = ?;

-- DB.SignInLockout#1 (signin_throttle.go)
SELECT key, first_at, failures FROM dashboard_signin_failures
		WHERE first_at > ? AND key IN (?, ?);

-- DB.RecordSignInFailure#1 (signin_throttle.go)
INSERT INTO dashboard_signin_failures (key, first_at, failures) VALUES (?, ?, 1)
				ON CONFLICT (key) DO UPDATE SET
					failures = CASE WHEN dashboard_signin_failures.first_at <= ? THEN 1 ELSE dashboard_signin_failures.failures + 1 END,
					first_at = CASE WHEN dashboard_signin_failures.first_at <= ? THEN excluded.first_at ELSE dashboard_signin_failures.first_at END;

-- DB.RecordSignInFailure#2 (signin_throttle.go)
DELETE FROM dashboard_signin_failures WHERE key IN (
			SELECT key FROM dashboard_signin_failures WHERE first_at <= ? ORDER BY first_at LIMIT ?);

-- DB.ResetSignInFailures#1 (signin_throttle.go)
DELETE FROM dashboard_signin_failures WHERE key = ?;

-- sqlite.Backup#1 (sqlite/backup.go)
VACUUM INTO ?;

-- sqlite.CheckIntegrity#1 (sqlite/backup.go)
PRAGMA integrity_check;

-- sqlite.InUse#1 (sqlite/backup.go)
BEGIN EXCLUSIVE;

-- sqlite.InUse#2 (sqlite/backup.go)
ROLLBACK;

-- sqlite.ReadWatermark#1 (sqlite/backup.go)
SELECT version FROM schema_migrations LIMIT 1;

-- sqlite.ReadWatermark#2 (sqlite/backup.go)
SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' AND sql NOT LIKE '%WITHOUT ROWID%';

-- sqlite.ReadWatermark#3 (sqlite/backup.go)
SELECT max(rowid) FROM "events";

-- sqlite.ReadWatermark#4 (sqlite/backup.go)
SELECT name, seq FROM sqlite_sequence;

-- sqlite.checkpointer.run#1 [1/2] (sqlite/checkpoint.go)
PRAGMA wal_checkpoint(PASSIVE);

-- sqlite.checkpointer.run#1 [2/2] (sqlite/checkpoint.go)
PRAGMA wal_checkpoint(RESTART);

-- sqlite.Checkpoints.Truncate#1 (sqlite/checkpoints.go)
PRAGMA wal_checkpoint(TRUNCATE);

-- sqlite.DataVersion#1 (sqlite/watch.go)
PRAGMA data_version;

-- sqliteEngine.audienceTail#1 (sqlite_engine.go)
SELECT upto FROM event_users_upto;

-- loadEventTail#1 [1/2] (sqlite_engine.go)
SELECT user_id, event_id, ts FROM events NOT INDEXED WHERE id > ? AND app_id = ? AND user_id IS NOT NULL;

-- loadEventTail#1 [2/2] (sqlite_engine.go)
SELECT user_id, event_id, ts FROM events NOT INDEXED WHERE id > ? AND app_id = ? AND user_id IS NOT NULL AND ts >= ?;

-- sqliteEngine.unindexedLinked#1 (sqlite_engine.go)
SELECT u.key, l.session_id FROM json_each(?) AS u CROSS JOIN session_links AS l
		WHERE l.app_id = ? AND l.user_id = u.value;

-- sqliteEngine.purgeApp#1 (sqlite_engine.go)
DELETE FROM event_users WHERE app_id IN (?, -?);

-- sqliteEraser.events#1 [1/2] (sqlite_erasure.go)
SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
			WHERE e.app_id = ? AND e.user_id = ?
		UNION SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND user_id = ?;

-- sqliteEraser.events#1 [2/2] (sqlite_erasure.go)
SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
			WHERE e.app_id = ? AND e.user_id = ?
		UNION SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND session_id = ? AND user_id IS NULL;

-- sqliteEraser.events#2 (sqlite_erasure.go)
DELETE FROM event_users WHERE app_id = ? AND user_id = ?;

-- sqliteEraser.events#3 [1/2] (sqlite_erasure.go)
DELETE FROM events WHERE id IN (SELECT value FROM json_each(?)) AND app_id = ? AND user_id = ?;

-- sqliteEraser.events#3 [2/2] (sqlite_erasure.go)
DELETE FROM events WHERE id IN (SELECT value FROM json_each(?)) AND app_id = ? AND session_id = ? AND user_id IS NULL;

-- sqliteEraser.scrub#1 (sqlite_erasure.go)
PRAGMA wal_checkpoint(TRUNCATE);

-- Tx.indexChunk#1 (sqlite_eventindex.go)
UPDATE event_users_upto SET upto = ? WHERE upto < ?;

-- Tx.foreignSinceCheck#1 (sqlite_eventindex.go)
PRAGMA data_version;

-- Tx.indexEverything#1 (sqlite_eventindex.go)
DELETE FROM event_users
		WHERE (app_id, user_id, event_id) IN (SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id FROM events
			WHERE id > (SELECT upto FROM event_users_upto) AND coalesce(user_id, session_id) IS NOT NULL)
		AND ts >= (SELECT min(ts) FROM events WHERE id > (SELECT upto FROM event_users_upto))
		AND id > (SELECT upto FROM event_users_upto) AND run IS NOT NULL;

-- Tx.indexEverything#2 (sqlite_eventindex.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
		SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id, ts, id FROM events
		WHERE id > (SELECT upto FROM event_users_upto) AND coalesce(user_id, session_id) IS NOT NULL
		ORDER BY 1, 2, event_id, ts, id;

-- Tx.indexEverything#3 (sqlite_eventindex.go)
UPDATE event_users_upto SET upto = max(upto, (SELECT COALESCE(MAX(id), 0) FROM events));

-- Tx.expireFromRuns#1 (sqlite_eventruns.go)
SELECT ts, id, run FROM event_users
			WHERE app_id = ? AND user_id = ? AND event_id = ? AND (ts, id) >= (?, ?) ORDER BY ts, id;

-- Tx.expireFromRuns#2 (sqlite_eventruns.go)
DELETE FROM event_users WHERE app_id = ? AND user_id = ? AND event_id = ? AND ts = ? AND id = ?;

-- Tx.expireFromRuns#3 (sqlite_eventruns.go)
INSERT INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [1/56] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- rowStmts.prepare#1 [2/56] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- rowStmts.prepare#1 [3/56] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- rowStmts.prepare#1 [4/56] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- rowStmts.prepare#1 [5/56] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- rowStmts.prepare#1 [6/56] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- rowStmts.prepare#1 [7/56] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- rowStmts.prepare#1 [8/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- rowStmts.prepare#1 [9/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- rowStmts.prepare#1 [10/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- rowStmts.prepare#1 [11/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- rowStmts.prepare#1 [12/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- rowStmts.prepare#1 [13/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- rowStmts.prepare#1 [14/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- rowStmts.prepare#1 [15/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- rowStmts.prepare#1 [16/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- rowStmts.prepare#1 [17/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- rowStmts.prepare#1 [18/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- rowStmts.prepare#1 [19/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- rowStmts.prepare#1 [20/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- rowStmts.prepare#1 [21/56] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- rowStmts.prepare#1 [22/56] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [23/56] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [24/56] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [25/56] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [26/56] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [27/56] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [28/56] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [29/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [30/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [31/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [32/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [33/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [34/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [35/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [36/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [37/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [38/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [39/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [40/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [41/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [42/56] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- rowStmts.prepare#1 [43/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [44/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [45/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [46/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [47/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [48/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [49/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [50/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
	SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id, ts, id FROM events WHERE coalesce(user_id, session_id) IS NOT NULL AND id IN (?);

-- rowStmts.prepare#1 [51/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
	SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id, ts, id FROM events WHERE coalesce(user_id, session_id) IS NOT NULL AND id IN (?, ?);

-- rowStmts.prepare#1 [52/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
	SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id, ts, id FROM events WHERE coalesce(user_id, session_id) IS NOT NULL AND id IN (?, ?, ?, ?);

-- rowStmts.prepare#1 [53/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
	SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id, ts, id FROM events WHERE coalesce(user_id, session_id) IS NOT NULL AND id IN (?, ?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [54/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
	SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id, ts, id FROM events WHERE coalesce(user_id, session_id) IS NOT NULL AND id IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [55/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
	SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id, ts, id FROM events WHERE coalesce(user_id, session_id) IS NOT NULL AND id IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- rowStmts.prepare#1 [56/56] (sqlite_rawrows.go)
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
	SELECT CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id), event_id, ts, id FROM events WHERE coalesce(user_id, session_id) IS NOT NULL AND id IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- Tx.queryRows#1 [1/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [2/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [3/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [4/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [5/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [6/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [7/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1), (?, ?, ?, ?, 1) ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [8/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [9/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [10/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [11/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [12/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [13/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- Tx.queryRows#1 [14/14] (sqlite_rawrows.go)
INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value;

-- Tx.execRows#1 [1/21] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- Tx.execRows#1 [2/21] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- Tx.execRows#1 [3/21] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- Tx.execRows#1 [4/21] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- Tx.execRows#1 [5/21] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- Tx.execRows#1 [6/21] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- Tx.execRows#1 [7/21] (sqlite_rawrows.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?), (?, ?, '{}', ?, ?) ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - 60000;

-- Tx.execRows#1 [8/21] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- Tx.execRows#1 [9/21] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- Tx.execRows#1 [10/21] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- Tx.execRows#1 [11/21] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- Tx.execRows#1 [12/21] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- Tx.execRows#1 [13/21] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- Tx.execRows#1 [14/21] (sqlite_rawrows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING;

-- Tx.execRows#1 [15/21] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?);

-- Tx.execRows#1 [16/21] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- Tx.execRows#1 [17/21] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- Tx.execRows#1 [18/21] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- Tx.execRows#1 [19/21] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- Tx.execRows#1 [20/21] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- Tx.execRows#1 [21/21] (sqlite_rawrows.go)
INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?);

-- Tx.insertAssignmentsSQLite#1 (sqlite_rows.go)
SAVEPOINT assignments;

-- Tx.insertAssignmentsSQLite#2 (sqlite_rows.go)
ROLLBACK TO assignments;

-- Tx.insertAssignmentsSQLite#3 (sqlite_rows.go)
RELEASE assignments;

-- Tx.insertAssignments#1 [1/7] (sqlite_rows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- Tx.insertAssignments#1 [2/7] (sqlite_rows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- Tx.insertAssignments#1 [3/7] (sqlite_rows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- Tx.insertAssignments#1 [4/7] (sqlite_rows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- Tx.insertAssignments#1 [5/7] (sqlite_rows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- Tx.insertAssignments#1 [6/7] (sqlite_rows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- Tx.insertAssignments#1 [7/7] (sqlite_rows.go)
INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?) ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING campaign_id, user_key;

-- Tx.flushCountsEach#1 (stmt.go)
UPDATE campaign_variants SET impressions = impressions + ?, conversions = conversions + ?,
				cuped_sum_x = cuped_sum_x + ?, cuped_sum_xx = cuped_sum_xx + ?, cuped_sum_xy = cuped_sum_xy + ? WHERE id = ?;

-- Tx.flushCountsEach#2 (stmt.go)
UPDATE campaign_variants SET impressions = impressions + ?, conversions = conversions + ? WHERE id = ?;

-- Tx.touchUser#1 (users.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?)
			ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
			WHERE users.last_seen <= excluded.last_seen - ?;

-- Tx.mergeUser#1 (users.go)
SELECT attributes, last_seen FROM users WHERE app_id = ? AND user_id = ?;

-- Tx.mergeUser#2 (users.go)
INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (app_id, user_id) DO UPDATE SET attributes = excluded.attributes, last_seen = MAX(users.last_seen, excluded.last_seen);

-- DB.IdentifySession#1 (users.go)
SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = ? AND user_id = ?;

-- DB.FindUserByID#1 (users.go)
SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = ? AND user_id = ?;

-- Tx.assign#1 (variant.go)
SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?;

-- Tx.mismatched#1 (variant.go)
SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?;

-- Tx.stillRunning#1 (variant.go)
SELECT status, start_at, end_at FROM campaigns WHERE id = ?;

-- Tx.findWebhook#1 (webhooks.go)
SELECT id, app_id, url, events, secret, headers, max_retries, timeout_seconds, description,
	status, consecutive_failures, total_successes, total_failures, created_at, updated_at,
	secret_rotated_at, previous_secret_expires_at FROM webhooks WHERE id = ? AND app_id = ?;

-- DB.CreateWebhook#1 (webhooks.go)
INSERT INTO webhooks (app_id, url, events, secret, headers, max_retries, timeout_seconds,
			description, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id;

-- DB.FindWebhookByID#1 (webhooks.go)
SELECT id, app_id, url, events, secret, headers, max_retries, timeout_seconds, description,
	status, consecutive_failures, total_successes, total_failures, created_at, updated_at,
	secret_rotated_at, previous_secret_expires_at FROM webhooks WHERE id = ? AND app_id = ?;

-- DB.UpdateWebhook#1 [1/2] (webhooks.go)
UPDATE webhooks SET updated_at = ? WHERE id = ?;

-- DB.UpdateWebhook#1 [2/2] (webhooks.go)
UPDATE webhooks SET updated_at = ?, url = ?, events = ?, secret = ?, previous_secret = ?, previous_secret_expires_at = ?, headers = ?, max_retries = ?, timeout_seconds = ?, description = ?, status = ?, consecutive_failures = ? WHERE id = ?;

-- DB.UpdateWebhook#2 (webhooks.go)
UPDATE webhook_deliveries SET next_attempt_at = ?
				WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at IS NULL;

-- DB.DeleteWebhook#1 (webhooks.go)
DELETE FROM webhooks WHERE id = ? AND app_id = ?;

-- deliveryAttempts#1 (webhooks.go)
SELECT delivery_id, at, response_status, error, duration_ms FROM webhook_attempts
		WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY id;

-- DB.FindDeliveryByID#1 (webhooks.go)
SELECT d.id, d.webhook_id, d.event, d.payload, d.status, d.next_attempt_at, d.created_at,
	(SELECT COUNT(*) FROM webhook_attempts a WHERE a.delivery_id = d.id), d.redacted_at FROM webhook_deliveries d
		JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ? AND d.webhook_id = ? AND w.app_id = ?;
