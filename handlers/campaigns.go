package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"sync"

	"service/store"
)

func (s *Server) handleCampaignList(w http.ResponseWriter, r *http.Request) {
	var status string
	o, ok := listQuery(w, r, 20, 100, enumParam("status", &status, store.CampaignStatuses...))
	if !ok {
		return
	}
	list, p, err := s.DB.FindCampaigns(r.Context(), appID(r), status, o)
	s.respond(w, r, http.StatusOK, listBody[*store.Campaign]{list, p}, err)
}

func (s *Server) handleCampaignCreate(w http.ResponseWriter, r *http.Request) {
	var in store.CampaignInput
	if !decodeJSON(w, r, &in) {
		return
	}
	key := keyFrom(r)
	c, err := s.DB.CreateCampaign(r.Context(), key.AppID, key.ID, in)
	s.respond(w, r, http.StatusCreated, c, err)
}

func (s *Server) handleCampaignGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "campaignId")
	if !ok {
		return
	}
	c, err := s.DB.FindCampaignByID(r.Context(), appID(r), id)
	s.respond(w, r, http.StatusOK, c, err)
}

func (s *Server) handleCampaignUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "campaignId")
	if !ok {
		return
	}
	var in store.CampaignInput
	if !decodeJSON(w, r, &in) {
		return
	}
	c, err := s.DB.UpdateCampaign(r.Context(), appID(r), id, in)
	s.respond(w, r, http.StatusOK, c, err)
}

func (s *Server) handleCampaignStatus(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "campaignId")
	if !ok {
		return
	}
	var in struct {
		Status *string `json:"status"`
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.Status == nil {
		fieldError(w, "status", "is required")
		return
	}
	c, err := s.DB.SetCampaignStatus(r.Context(), appID(r), id, *in.Status)
	s.respond(w, r, http.StatusOK, c, err)
}

func (s *Server) handleCampaignUnarchive(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "campaignId")
	if !ok {
		return
	}
	c, err := s.DB.UnarchiveCampaign(r.Context(), appID(r), id)
	s.respond(w, r, http.StatusOK, c, err)
}

func (s *Server) handleCampaignDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "campaignId")
	if !ok {
		return
	}
	if err := s.DB.DeleteCampaign(r.Context(), appID(r), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
}

// answerBuf recycles the hot paths' answer buffers.
var answerBuf = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// decodeVariantRequest reads and checks the SDK's variant body.
func (s *Server) decodeVariantRequest(w http.ResponseWriter, r *http.Request, req *store.VariantRequest) bool {
	if !decodeJSON(w, r, req) {
		return false
	}
	if err := req.Validate(); err != nil {
		s.writeError(w, r, err)
		return false
	}
	return true
}

func (s *Server) handleVariant(w http.ResponseWriter, r *http.Request) {
	id, ok := s.campaignIDOrKey(w, r)
	if !ok {
		return
	}
	var req store.VariantRequest
	if !s.decodeVariantRequest(w, r, &req) {
		return
	}
	bp := answerBuf.Get().(*[]byte)
	defer answerBuf.Put(bp)
	b, err := s.DB.Variant(r.Context(), appID(r), id, &req, (*bp)[:0])
	*bp = b[:0]
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeRaw(w, http.StatusOK, b)
}

func (s *Server) handleVariants(w http.ResponseWriter, r *http.Request) {
	var req store.VariantRequest
	if !s.decodeVariantRequest(w, r, &req) {
		return
	}
	bp := answerBuf.Get().(*[]byte)
	defer answerBuf.Put(bp)
	b, err := s.DB.Variants(r.Context(), appID(r), &req, (*bp)[:0])
	*bp = b[:0]
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeRaw(w, http.StatusOK, b)
}

// campaignIDOrKey reads the variant route's campaign: a number is an id,
// as it always was (and costs nothing more); anything else is a key of the
// key's app, looked up in memory after its first use.
func (s *Server) campaignIDOrKey(w http.ResponseWriter, r *http.Request) (int64, bool) {
	const name = "campaignIdOrKey"
	raw := param(r, name)
	var id int64
	var err error
	// A segment starting with a letter is a key at once: strconv's
	// refusal of it would cost two allocations on every request by key.
	if raw == "" || raw[0] < 'a' || raw[0] > 'z' {
		id, err = strconv.ParseInt(raw, 10, 64)
	} else {
		err = strconv.ErrSyntax
	}
	if err == nil || errors.Is(err, strconv.ErrRange) {
		if err != nil || id < 1 {
			invalid(w, "path parameter "+name+" must be a positive integer or a campaign key", map[string]any{"param": name})
			return 0, false
		}
		return id, true
	}
	id, err = s.DB.CampaignIDByKey(r.Context(), appID(r), raw)
	if err != nil {
		s.writeError(w, r, err)
		return 0, false
	}
	return id, true
}

// writeRaw writes an already encoded JSON body.
func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(b)
}

func (s *Server) handleCampaignAnalytics(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "campaignId")
	if !ok {
		return
	}
	a, err := s.DB.CampaignAnalytics(r.Context(), appID(r), id)
	s.respond(w, r, http.StatusOK, a, err)
}

// handleNamespaceList lists the app's namespaces with their campaigns'
// ranges and the share no running campaign holds.
func (s *Server) handleNamespaceList(w http.ResponseWriter, r *http.Request) {
	list, err := s.DB.FindNamespaces(r.Context(), appID(r))
	s.respond(w, r, http.StatusOK, struct {
		Data []store.NamespaceUsage `json:"data"`
	}{list}, err)
}
