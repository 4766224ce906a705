package handlers

func (s *Server) eventRoutes(add route) {
	add("POST", "/apps/:appId/events", sdk, s.handleEventCreate)
	add("GET", "/apps/:appId/events", manage, s.handleEventList)
}
