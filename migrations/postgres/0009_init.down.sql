DROP TABLE IF EXISTS campaign_variant_hours, dashboard_setup, dashboard_sessions, dashboard_users,
    form_submissions, webhook_attempts, webhook_deliveries, webhooks, events, users, assignments,
    campaign_variants, campaigns, audiences, content_views, api_keys, apps;
