package handlers

import (
	"net/http"
)

// userBody is the body of the profile routes; attributes merge shallowly
// into the stored profile, and a key set to null removes it. identify's
// sessionId links that session to the user.
type userBody struct {
	UserID     *string        `json:"userId"`
	SessionID  string         `json:"sessionId"`
	Attributes map[string]any `json:"attributes"`
}

func (s *Server) handleUserPut(w http.ResponseWriter, r *http.Request) {
	var in userBody
	if !decodeJSON(w, r, &in) {
		return
	}
	userID := param(r, "userId")
	p, err := s.DB.IdentifyUser(r.Context(), appID(r), userID, in.Attributes)
	s.respond(w, r, http.StatusOK, p, err)
}

func (s *Server) handleUserGet(w http.ResponseWriter, r *http.Request) {
	userID := param(r, "userId")
	p, err := s.DB.FindUserByID(r.Context(), appID(r), userID)
	s.respond(w, r, http.StatusOK, p, err)
}

// handleIdentify is the SDK's way to attach attributes to a user, and to
// link the session it kept before sign-in to that user.
func (s *Server) handleIdentify(w http.ResponseWriter, r *http.Request) {
	var in userBody
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.UserID == nil {
		fieldError(w, "userId", "is required")
		return
	}
	p, err := s.DB.IdentifySession(r.Context(), appID(r), *in.UserID, in.SessionID, in.Attributes)
	s.respond(w, r, http.StatusOK, p, err)
}
