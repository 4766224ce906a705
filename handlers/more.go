package handlers

import "net/http"

// route registers one route under both API prefixes.
type route func(method, path string, a access, h http.HandlerFunc)

// moreRoutes registers the routes of campaigns, events, audiences, webhooks
// and forms, each feature in its own file.
func (s *Server) moreRoutes(add route) {
	s.campaignRoutes(add)
	s.eventRoutes(add)
	s.audienceRoutes(add)
	s.webhookRoutes(add)
	s.formRoutes(add)
}
