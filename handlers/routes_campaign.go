package handlers

func (s *Server) campaignRoutes(add route) {
	add("GET", "/apps/:appId/campaigns", manage, s.handleCampaignList)
	add("POST", "/apps/:appId/campaigns", manage, s.handleCampaignCreate)
	add("GET", "/campaigns/:id", manage, s.handleCampaignGet)
	add("PATCH", "/campaigns/:id", manage, s.handleCampaignUpdate)
	add("PATCH", "/campaigns/:id/status", manage, s.handleCampaignStatus)
	add("POST", "/campaigns/:id/unarchive", manage, s.handleCampaignUnarchive)
	add("DELETE", "/campaigns/:id", manage, s.handleCampaignDelete)
	add("GET", "/campaigns/:id/analytics", manage, s.handleCampaignAnalytics)

	add("POST", "/apps-external/:appId/campaigns/:campaignId/variant", sdk, s.handleVariant)
	add("POST", "/apps-external/:appId/variants", sdk, s.handleVariants)
}
