package handlers

func (s *Server) webhookRoutes(add route) {}
