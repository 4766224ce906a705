package handlers

func (s *Server) formRoutes(add route) {
	add("POST", "/apps-external/:appId/submit-form", sdk, s.handleFormSubmit)
	add("POST", "/content/submit-form", sdk, s.handleFormSubmit)
	add("GET", "/content/:id/submissions", manage, s.handleContentSubmissions)
	add("GET", "/apps/:appId/form-submissions", manage, s.handleFormSubmissionList)
}
