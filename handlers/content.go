package handlers

import (
	"net/http"

	"service/store"
)

var contentStatuses = []string{store.ContentDraft, store.ContentPublished, store.ContentArchived}

func (s *Server) handleContentList(w http.ResponseWriter, r *http.Request) {
	var status string
	o, ok := listQuery(w, r, 20, 100, enumParam("status", &status, contentStatuses...))
	if !ok {
		return
	}
	list, p, err := s.DB.FindContents(r.Context(), appID(r), status, o)
	s.respond(w, r, http.StatusOK, listBody[*store.ContentView]{list, p}, err)
}

func (s *Server) handleContentCreate(w http.ResponseWriter, r *http.Request) {
	var in store.ContentInput
	if !decodeJSON(w, r, &in) {
		return
	}
	c, err := s.DB.CreateContent(r.Context(), appID(r), in)
	s.respond(w, r, http.StatusCreated, c, err)
}

func (s *Server) handleContentGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "contentViewId")
	if !ok {
		return
	}
	c, err := s.DB.FindContentByID(r.Context(), appID(r), id)
	s.respond(w, r, http.StatusOK, c, err)
}

func (s *Server) handleContentUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "contentViewId")
	if !ok {
		return
	}
	s.updateContent(w, r, id)
}

// handleContentUpdateInApp serves PATCH /content/{appId}/{contentViewId}.
// The router names the first segment "id" because it shares the position
// with PATCH /content/{contentViewId}.
func (s *Server) handleContentUpdateInApp(w http.ResponseWriter, r *http.Request) {
	app, ok := pathIDAs(w, r, "id", "appId")
	if !ok {
		return
	}
	id, ok := pathID(w, r, "contentViewId")
	if !ok {
		return
	}
	if app != appID(r) {
		writeErrorCode(w, http.StatusForbidden, "FORBIDDEN", "this key belongs to another app", nil)
		return
	}
	s.updateContent(w, r, id)
}

func (s *Server) updateContent(w http.ResponseWriter, r *http.Request, id int64) {
	var in store.ContentInput
	if !decodeJSON(w, r, &in) {
		return
	}
	c, err := s.DB.UpdateContent(r.Context(), appID(r), id, in)
	s.respond(w, r, http.StatusOK, c, err)
}

func (s *Server) handleContentDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "contentViewId")
	if !ok {
		return
	}
	if err := s.DB.DeleteContent(r.Context(), appID(r), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
}

// handleContentExternal serves a published block to the SDK; any other
// block is reported missing, as if it did not exist.
func (s *Server) handleContentExternal(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "contentViewId")
	if !ok {
		return
	}
	c, err := s.DB.SDKContent(r.Context(), appID(r), id)
	if err == nil && c.Status != store.ContentPublished {
		err = store.Errorf(store.ENOTFOUND, "content view not found")
	}
	s.respond(w, r, http.StatusOK, c, err)
}
