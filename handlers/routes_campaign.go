package handlers

func (s *Server) campaignRoutes(add route) {}
