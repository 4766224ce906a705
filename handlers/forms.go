package handlers

import (
	"encoding/json"
	"net/http"

	"service/store"
)

// formBody is the submission body; appId, optional, must name the key's app.
// Its fields are listed, not embedded, so that a type error names the JSON
// path alone.
type formBody struct {
	AppID         *int64          `json:"appId"`
	ContentViewID *int64          `json:"contentViewId"`
	Data          json.RawMessage `json:"data"`
	UserID        *string         `json:"userId"`
	SessionID     *string         `json:"sessionId"`
	Environment   *string         `json:"environment"`
}

// CheckFields names the body's bad fields, as the submission would.
func (b *formBody) CheckFields(create bool) store.FieldErrors {
	return b.input().CheckFields(create)
}

func (b *formBody) input() *store.FormSubmissionInput {
	return &store.FormSubmissionInput{ContentViewID: b.ContentViewID, Data: b.Data, UserID: b.UserID,
		SessionID: b.SessionID, Environment: b.Environment}
}

type formAnswer struct {
	Success          bool       `json:"success"`
	FormSubmissionID int64      `json:"formSubmissionId"`
	SubmittedAt      store.Time `json:"submittedAt"`
}

// handleFormSubmit serves both submission routes: the app is the key's
// (already checked against the path's appId by authorize).
func (s *Server) handleFormSubmit(w http.ResponseWriter, r *http.Request) {
	var in formBody
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.AppID != nil && *in.AppID != appID(r) {
		writeErrorCode(w, http.StatusForbidden, "FORBIDDEN", "this key belongs to another app", nil)
		return
	}
	sub, err := s.DB.SubmitForm(r.Context(), appID(r), *in.input())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, formAnswer{true, sub.ID, sub.SubmittedAt})
}

func (s *Server) handleContentSubmissions(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "contentViewId")
	if !ok {
		return
	}
	o, ok := listQuery(w, r, 20, 100)
	if !ok {
		return
	}
	list, p, err := s.DB.FindContentSubmissions(r.Context(), appID(r), id, o)
	s.respond(w, r, http.StatusOK, listBody[*store.FormSubmission]{list, p}, err)
}

func (s *Server) handleFormSubmissionList(w http.ResponseWriter, r *http.Request) {
	var content int64
	o, ok := listQuery(w, r, 20, 100, idParam("contentViewId", &content))
	if !ok {
		return
	}
	list, p, err := s.DB.FindFormSubmissions(r.Context(), appID(r), content, o)
	s.respond(w, r, http.StatusOK, listBody[*store.FormSubmission]{list, p}, err)
}
