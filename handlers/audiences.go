package handlers

import (
	"net/http"

	"service/store"
)

var audienceStatuses = []string{store.AudienceActive, store.AudienceArchived}

func (s *Server) handleAudienceList(w http.ResponseWriter, r *http.Request) {
	var status string
	o, ok := listQuery(w, r, 20, 100, enumParam("status", &status, audienceStatuses...))
	if !ok {
		return
	}
	list, p, err := s.DB.FindAudiences(r.Context(), appID(r), status, o)
	s.respond(w, r, http.StatusOK, listBody[*store.Audience]{list, p}, err)
}

func (s *Server) handleAudienceCreate(w http.ResponseWriter, r *http.Request) {
	var in store.AudienceInput
	if !decodeJSON(w, r, &in) {
		return
	}
	a, err := s.DB.CreateAudience(r.Context(), appID(r), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.recountAudience(r, a))
}

// recountAudience refreshes a just-written audience's count, so the answer
// shows it. The write has committed by then: a failed count is logged and
// the audience returned as written, for the scheduler to count later.
func (s *Server) recountAudience(r *http.Request, a *store.Audience) *store.Audience {
	fresh, err := s.DB.RecountAudience(r.Context(), a.AppID, a.ID)
	if err != nil {
		s.Log.Error("recount audience", "audience", a.ID, "err", err)
		return a
	}
	return fresh
}

func (s *Server) handleAudienceGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "audienceId")
	if !ok {
		return
	}
	a, err := s.DB.FindAudienceByID(r.Context(), appID(r), id)
	s.respond(w, r, http.StatusOK, a, err)
}

func (s *Server) handleAudienceUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "audienceId")
	if !ok {
		return
	}
	var in store.AudienceInput
	if !decodeJSON(w, r, &in) {
		return
	}
	a, err := s.DB.UpdateAudience(r.Context(), appID(r), id, in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.recountAudience(r, a))
}

func (s *Server) handleAudienceDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "audienceId")
	if !ok {
		return
	}
	if err := s.DB.DeleteAudience(r.Context(), appID(r), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
}

func (s *Server) handleAudienceMembers(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "audienceId")
	if !ok {
		return
	}
	o, ok := listQuery(w, r, 20, 100)
	if !ok {
		return
	}
	list, p, err := s.DB.FindAudienceMembers(r.Context(), appID(r), id, o)
	s.respond(w, r, http.StatusOK, listBody[store.AudienceMember]{list, p}, err)
}

func (s *Server) handleAudienceCheck(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "audienceId")
	if !ok {
		return
	}
	var in struct {
		UserID *string `json:"userId"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.UserID == nil {
		fieldError(w, "userId", "is required")
		return
	}
	matches, err := s.DB.UserInAudience(r.Context(), appID(r), id, *in.UserID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"matches": matches})
}
