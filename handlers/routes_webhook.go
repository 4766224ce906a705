package handlers

func (s *Server) webhookRoutes(add route) {
	add("GET", "/apps/:appId/webhooks", manage, s.handleWebhookList)
	add("POST", "/apps/:appId/webhooks", manage, s.handleWebhookCreate)
	add("GET", "/webhooks/:id", manage, s.handleWebhookGet)
	add("PATCH", "/webhooks/:id", manage, s.handleWebhookUpdate)
	add("DELETE", "/webhooks/:id", manage, s.handleWebhookDelete)
	add("POST", "/webhooks/:id/test", manage, s.handleWebhookTest)
	add("GET", "/webhooks/:id/deliveries", manage, s.handleDeliveryList)
	add("GET", "/webhooks/:id/deliveries/:deliveryId", manage, s.handleDeliveryGet)
	add("POST", "/webhooks/:id/deliveries/:deliveryId/redeliver", manage, s.handleDeliveryRedeliver)
}
