package handlers

func (s *Server) formRoutes(add route) {}
