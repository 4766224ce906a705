package handlers

func (s *Server) eventRoutes(add route) {}
