package handlers

// audienceRoutes registers audiences, their members and checks, and the
// user profiles their rules read.
func (s *Server) audienceRoutes(add route) {
	add("GET", "/apps/:appId/audiences", manage, s.handleAudienceList)
	add("POST", "/apps/:appId/audiences", manage, s.handleAudienceCreate)
	add("GET", "/audiences/:id", manage, s.handleAudienceGet)
	add("PATCH", "/audiences/:id", manage, s.handleAudienceUpdate)
	add("DELETE", "/audiences/:id", manage, s.handleAudienceDelete)
	add("GET", "/audiences/:id/members", manage, s.handleAudienceMembers)
	add("POST", "/audiences/:id/check", manage, s.handleAudienceCheck)

	add("PUT", "/apps/:appId/users/:userId", manage, s.handleUserPut)
	add("GET", "/apps/:appId/users/:userId", manage, s.handleUserGet)
	add("POST", "/apps-external/:appId/identify", sdk, s.handleIdentify)
}
