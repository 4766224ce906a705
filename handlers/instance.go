package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"service/store"
)

// The provisioning routes: apps and their keys, over HTTP, for an
// instance key (scripts, Terraform). They answer as the command line's
// `apps` and `keys` print, in the API's envelopes.

func (s *Server) handleAppList(w http.ResponseWriter, r *http.Request) {
	o, ok := listQuery(w, r, 20, 100)
	if !ok {
		return
	}
	list, p, err := s.DB.FindAppsPage(r.Context(), o)
	s.respond(w, r, http.StatusOK, listBody[*store.AppSettings]{list, p}, err)
}

func (s *Server) handleAppCreate(w http.ResponseWriter, r *http.Request) {
	var in store.AppInput
	if !decodeJSON(w, r, &in) {
		return
	}
	a, err := s.DB.CreateAppFrom(r.Context(), in)
	s.respond(w, r, http.StatusCreated, a, err)
}

func (s *Server) handleAppGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "appId")
	if !ok {
		return
	}
	a, err := s.DB.FindAppSettings(r.Context(), id)
	s.respond(w, r, http.StatusOK, a, err)
}

func (s *Server) handleAppUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "appId")
	if !ok {
		return
	}
	var in store.AppInput
	if !decodeJSON(w, r, &in) {
		return
	}
	a, err := s.DB.UpdateAppFrom(r.Context(), id, in)
	s.respond(w, r, http.StatusOK, a, err)
}

// handleAppDelete deletes an app and its keys; one that holds data only
// with ?force=true, which deletes all of it in the same transaction.
func (s *Server) handleAppDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "appId")
	if !ok {
		return
	}
	force := false
	if v := r.URL.Query().Get("force"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			invalid(w, "request has invalid fields", map[string]any{"fields": map[string]any{"force": "must be true or false"}})
			return
		}
		force = b
	}
	counts, err := s.DB.DeleteApp(r.Context(), id, force)
	var e *store.Error
	if errors.As(err, &e) && e.Code == store.EINVALID {
		// The store's message names the command line's --force.
		invalid(w, fmt.Sprintf("app %d holds data; add ?force=true to delete it with all its data", id), e.Details)
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id, "deleted": true, "data": counts})
}

// keyBody is a new app key: the instance role is not one an app's key
// can have.
type keyBody struct {
	Role string `json:"role"`
	Name string `json:"name"`
}

func (b *keyBody) CheckFields(bool) store.FieldErrors {
	fe := store.FieldErrors{}
	switch b.Role {
	case store.RoleAdmin, store.RoleRead, store.RoleClient:
	case "":
		fe.Add("role", "is required")
	default:
		fe.Add("role", "must be one of admin, read, client")
	}
	if len([]rune(b.Name)) > store.MaxNameLen {
		fe.Add("name", "must be at most 200 characters")
	}
	return fe
}

// newKey is a key as created: the plaintext is in this answer only.
type newKey struct {
	*store.Key
	Secret string `json:"key"`
}

func (s *Server) handleKeyCreate(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "appId")
	if !ok {
		return
	}
	var in keyBody
	if !decodeJSON(w, r, &in) {
		return
	}
	if err := in.CheckFields(true).Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	k, plain, err := s.DB.CreateKey(r.Context(), id, in.Role, in.Name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newKey{k, plain})
}

func (s *Server) handleKeyList(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "appId")
	if !ok {
		return
	}
	o, ok := listQuery(w, r, 20, 100)
	if !ok {
		return
	}
	list, p, err := s.DB.FindKeysPage(r.Context(), id, o)
	s.respond(w, r, http.StatusOK, listBody[*store.Key]{list, p}, err)
}

// handleKeyRevoke revokes an app's key. Revoking twice answers the key as
// the first time left it; an instance key is not found here.
func (s *Server) handleKeyRevoke(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "keyId")
	if !ok {
		return
	}
	k, err := s.DB.RevokeAppKey(r.Context(), id)
	s.respond(w, r, http.StatusOK, k, err)
}
