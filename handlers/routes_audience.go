package handlers

func (s *Server) audienceRoutes(add route) {}
