package handlers

// OpenFeature's Remote Evaluation Protocol (OFREP), served at the root:
// OpenFeature's providers append /ofrep/v1/… to the base URL they are
// given, so any language with an OFREP provider asks for variants without
// a client of ours. A flag is a campaign, named by its key; its value is
// the name of the user's variant. Every answer, errors included, is in
// OFREP's shape rather than the API's envelope, since the providers read
// errorCode from it.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"service/store"
)

// OFREP's error codes the service answers.
const (
	ofrepParseError     = "PARSE_ERROR"
	ofrepTargetingKey   = "TARGETING_KEY_MISSING"
	ofrepInvalidContext = "INVALID_CONTEXT"
	ofrepFlagNotFound   = "FLAG_NOT_FOUND"
	ofrepGeneral        = "GENERAL"
)

// OFREPMinPollingIntervalMs is the shortest bulk polling interval the
// configuration asks providers to keep to.
const OFREPMinPollingIntervalMs = 1000

// ofrepCORSExposed are the answer headers a page's script may read: the
// SDK routes', the bulk evaluation's ETag among them.
const ofrepCORSExposed = corsExposed

// ofrepRoutes registers OFREP's three routes and their CORS preflights.
func (s *Server) ofrepRoutes(rt *httprouter.Router) {
	preflights := map[string]string{}
	var paths []string
	add := func(method, path string, h http.HandlerFunc) {
		s.served = append(s.served, Route{method, path})
		rt.Handle(method, path, withParams(s.instrument(path, s.ofrepAuth(h))))
		if _, ok := preflights[path]; !ok {
			paths = append(paths, path)
		}
		preflights[path] = method
	}
	add(http.MethodPost, "/ofrep/v1/evaluate/flags/:key", s.handleOFREPFlag)
	add(http.MethodPost, "/ofrep/v1/evaluate/flags", s.handleOFREPFlags)
	add(http.MethodGet, "/ofrep/v1/configuration", s.handleOFREPConfiguration)
	for _, path := range paths {
		rt.Handle(http.MethodOptions, path, withParams(s.instrument(path, s.ofrepPreflight(preflights[path]))))
	}
}

// ofrepPreflight answers a browser's preflight. It carries no key, so the
// app and its allowed origins are not known yet: any origin may send the
// request, and the answer to it carries the app's verdict (ofrepAuth).
func (s *Server) ofrepPreflight(method string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.allowOrigin(w, r) {
			h := w.Header()
			h.Set("Access-Control-Allow-Methods", method)
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-API-Key, If-None-Match")
			h.Set("Access-Control-Max-Age", strconv.Itoa(corsMaxAge))
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// ofrepAuth takes the key from Authorization: Bearer or X-API-Key (any
// role: evaluating is what every key may do), answers CORS for the key's
// app, and counts the request in the app's SDK budget, whatever the role:
// evaluations are end users' traffic.
func (s *Server) ofrepAuth(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flag := param(r, "key")
		_, browser := r.Header["Origin"]
		if browser {
			w.Header().Add("Vary", "Origin")
		}
		token, ok := cutBearer(r.Header.Get("Authorization"))
		if x := strings.TrimSpace(r.Header.Get("X-API-Key")); !ok && x != "" {
			token, ok = x, true
		}
		var key *store.Key
		var err error
		if ok {
			key, err = s.DB.Authenticate(r.Context(), token)
		}
		if !ok || err != nil {
			// Any page may read why it was refused: the answer says
			// nothing about any app.
			if browser {
				s.allowAppOrigin(w, r, 0)
			}
			switch {
			case !ok:
				writeOFREPError(w, http.StatusUnauthorized, flag, ofrepGeneral, "missing API key: send it as Authorization: Bearer KEY or as X-API-Key: KEY")
			case store.ErrorCode(err) == store.EINTERNAL:
				s.ofrepFail(w, r, flag, err)
			default:
				writeOFREPError(w, http.StatusUnauthorized, flag, ofrepGeneral, "invalid or revoked API key")
			}
			return
		}
		if browser && s.allowAppOrigin(w, r, key.AppID) {
			w.Header().Set("Access-Control-Expose-Headers", ofrepCORSExposed)
		}
		if _, reset, ok := s.take(w, r, key, true); !ok {
			writeOFREPError(w, http.StatusTooManyRequests, flag, ofrepGeneral, "rate limit exceeded; retry after "+strconv.Itoa(reset)+" s")
			return
		}
		if key.Role == store.RoleInstance {
			// An instance key belongs to no app: it provisions apps and
			// evaluates nothing, as it may call no app route.
			writeOFREPError(w, http.StatusForbidden, flag, ofrepGeneral, "the instance role may not call this route")
			return
		}
		if info := infoOf(r); info != nil {
			info.key = key
			h(w, r)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, key)))
	})
}

// ofrepError is an OFREP failure: evaluationFailure (with key) on the
// single flag route, bulkEvaluationFailure (without) elsewhere.
type ofrepError struct {
	Key          *string `json:"key,omitempty"`
	ErrorCode    string  `json:"errorCode"`
	ErrorDetails string  `json:"errorDetails"`
}

// writeOFREPError writes an OFREP failure; flag is the route's flag key,
// "" on the routes without one.
func writeOFREPError(w http.ResponseWriter, status int, flag, code, details string) {
	e := ofrepError{ErrorCode: code, ErrorDetails: details}
	if flag != "" {
		e.Key = &flag
	}
	writeJSON(w, status, e)
}

// ofrepFail maps a store error to OFREP: an unknown campaign is
// FLAG_NOT_FOUND, a refused context INVALID_CONTEXT with the fields named,
// and anything else the API's status (503 with Retry-After when the
// database did not answer) as GENERAL, internal text withheld.
func (s *Server) ofrepFail(w http.ResponseWriter, r *http.Request, flag string, err error) {
	var e *store.Error
	if errors.As(err, &e) {
		switch e.Code {
		case store.ENOTFOUND:
			writeOFREPError(w, http.StatusNotFound, flag, ofrepFlagNotFound, "no campaign of this app has the key "+strconv.Quote(flag))
			return
		case store.EINVALID:
			writeOFREPError(w, http.StatusBadRequest, flag, ofrepInvalidContext, fieldsText(e))
			return
		}
	}
	rec := &bufferedError{header: http.Header{}}
	s.writeError(rec, r, err)
	for k, v := range rec.header {
		if k == "Retry-After" {
			w.Header()[k] = v
		}
	}
	msg := "internal error"
	if rec.status == http.StatusServiceUnavailable {
		msg = "the database did not answer in time, try again"
	}
	writeOFREPError(w, rec.status, flag, ofrepGeneral, msg)
}

// bufferedError catches what writeError would answer, for its status,
// logging and Retry-After, without writing it.
type bufferedError struct {
	header http.Header
	status int
}

func (b *bufferedError) Header() http.Header         { return b.header }
func (b *bufferedError) Write(p []byte) (int, error) { return len(p), nil }
func (b *bufferedError) WriteHeader(status int)      { b.status = status }

// fieldsText is a refusal's message with its bad fields, in one line.
func fieldsText(e *store.Error) string {
	fields, _ := e.Details["fields"].(map[string]any)
	if len(fields) == 0 {
		return e.Message
	}
	parts := make([]string, 0, len(fields))
	for f, why := range fields {
		parts = append(parts, contextField(f)+": "+toString(why))
	}
	slices.Sort(parts)
	return "invalid context: " + strings.Join(parts, "; ")
}

// contextField names a variant-request field as the context calls it.
func contextField(f string) string {
	switch {
	case f == "userId":
		return "targetingKey"
	case strings.HasPrefix(f, "attributes."):
		return strings.TrimPrefix(f, "attributes.")
	case f == "attributes":
		return "context"
	}
	return f
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// readOFREPContext reads an evaluation body, {"context": {...}}, into a
// variant request: targetingKey is the userId, else a string sessionId is
// the session id, and the other members are the user's attributes. It
// answers the failure itself and returns false.
func readOFREPContext(w http.ResponseWriter, r *http.Request, flag string, req *store.VariantRequest, keepRaw bool) (json.RawMessage, bool) {
	buf := bodyBuf.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 64<<10 {
			buf.Reset()
			bodyBuf.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBodyBytes)); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeOFREPError(w, http.StatusRequestEntityTooLarge, flag, ofrepParseError, "request body exceeds 1 MiB")
			return nil, false
		}
		writeOFREPError(w, http.StatusBadRequest, flag, ofrepParseError, "could not read request body")
		return nil, false
	}
	if raw, ok := decodeOFREPFast(buf.Bytes(), req); ok {
		if keepRaw {
			return append(json.RawMessage(nil), raw...), true
		}
		return nil, true
	}
	var body struct {
		Context json.RawMessage `json:"context"`
	}
	if msg, _ := decodeFields(buf.Bytes(), &body, true); msg != "" {
		writeOFREPError(w, http.StatusBadRequest, flag, ofrepParseError, msg)
		return nil, false
	}
	raw := bytes.TrimSpace(body.Context)
	if len(raw) == 0 || string(raw) == "null" {
		writeOFREPError(w, http.StatusBadRequest, flag, ofrepTargetingKey, "context.targetingKey is required (or a string context.sessionId)")
		return nil, false
	}
	var ctx map[string]any
	if raw[0] != '{' || json.Unmarshal(raw, &ctx) != nil {
		writeOFREPError(w, http.StatusBadRequest, flag, ofrepInvalidContext, "context must be a JSON object")
		return nil, false
	}
	if v, ok := ctx["targetingKey"]; ok {
		t, isString := v.(string)
		if !isString {
			writeOFREPError(w, http.StatusBadRequest, flag, ofrepInvalidContext, "targetingKey must be a string")
			return nil, false
		}
		req.UserID = t
		delete(ctx, "targetingKey")
	}
	if v, ok := ctx["sessionId"].(string); ok {
		req.SessionID = v
		delete(ctx, "sessionId")
	}
	if req.UserID == "" && req.SessionID == "" {
		writeOFREPError(w, http.StatusBadRequest, flag, ofrepTargetingKey, "context.targetingKey is required (or a string context.sessionId)")
		return nil, false
	}
	if len(ctx) > 0 {
		req.Attributes = ctx
	}
	if err := req.Validate(); err != nil {
		var e *store.Error
		errors.As(err, &e)
		writeOFREPError(w, http.StatusBadRequest, flag, ofrepInvalidContext, fieldsText(e))
		return nil, false
	}
	return raw, true
}

// decodeOFREPFast reads the common body, {"context":{"targetingKey":"…"}}
// with perhaps a sessionId and nothing else, without encoding/json's
// allocations (see fastjson.go), and returns the context's bytes. Any
// other body, attributes included, takes the full path.
func decodeOFREPFast(body []byte, req *store.VariantRequest) ([]byte, bool) {
	var raw []byte
	ok := scanFlat(body, refuseString, func(name, val []byte) bool {
		raw = val
		return string(name) == "context"
	})
	ok = ok && scanFlat(raw, func(name, val []byte) bool {
		switch string(name) {
		case "targetingKey":
			req.UserID = string(val)
		case "sessionId":
			req.SessionID = string(val)
		default:
			return false
		}
		return true
	}, nil)
	// The full path judges what is missing or too long, with its errors.
	if !ok || req.UserID == "" && req.SessionID == "" || req.Validate() != nil {
		*req = store.VariantRequest{}
		return nil, false
	}
	return raw, true
}

func refuseString(name, val []byte) bool { return false }

// handleOFREPFlag evaluates one flag: the campaign with the key.
func (s *Server) handleOFREPFlag(w http.ResponseWriter, r *http.Request) {
	flag := param(r, "key")
	var req store.VariantRequest
	if _, ok := readOFREPContext(w, r, flag, &req, false); !ok {
		return
	}
	bp := answerBuf.Get().(*[]byte)
	defer answerBuf.Put(bp)
	b, err := s.DB.EvaluateFlag(r.Context(), appID(r), flag, &req, (*bp)[:0])
	*bp = b[:0]
	if err != nil {
		s.ofrepFail(w, r, flag, err)
		return
	}
	writeRaw(w, http.StatusOK, b)
}

// handleOFREPFlags evaluates every active campaign. Its ETag is a hash of
// the context and the answer: equal on every replica for equal answers,
// and different whenever the answer or the context is.
func (s *Server) handleOFREPFlags(w http.ResponseWriter, r *http.Request) {
	var req store.VariantRequest
	raw, ok := readOFREPContext(w, r, "", &req, true)
	if !ok {
		return
	}
	bp := answerBuf.Get().(*[]byte)
	defer answerBuf.Put(bp)
	b, err := s.DB.EvaluateFlags(r.Context(), appID(r), &req, (*bp)[:0])
	*bp = b[:0]
	if err != nil {
		s.ofrepFail(w, r, "", err)
		return
	}
	h := fnv.New128a()
	h.Write(raw)
	h.Write([]byte{0})
	h.Write(b)
	tag := `"` + hex.EncodeToString(h.Sum(nil)) + `"`
	writeTagged(w, r, tag, b)
}

// ofrepConfiguration is the configuration's answer, the same for every
// app.
var ofrepConfiguration = []byte(`{"name":"Service","capabilities":{"cacheInvalidation":{"polling":{"enabled":true,"minPollingIntervalMs":` +
	strconv.Itoa(OFREPMinPollingIntervalMs) + `}},"flagEvaluation":{"supportedTypes":["string"]}}}`)

var ofrepConfigurationTag = func() string {
	h := fnv.New128a()
	h.Write(ofrepConfiguration)
	return `"` + hex.EncodeToString(h.Sum(nil)) + `"`
}()

// handleOFREPConfiguration tells providers what the service supports:
// string flags, and polling no more often than once a second.
func (s *Server) handleOFREPConfiguration(w http.ResponseWriter, r *http.Request) {
	writeTagged(w, r, ofrepConfigurationTag, ofrepConfiguration)
}

// writeTagged answers b with its ETag, or 304 without a body when the
// request's If-None-Match names the tag.
func writeTagged(w http.ResponseWriter, r *http.Request, tag string, b []byte) {
	w.Header().Set("ETag", tag)
	if etagMatches(r.Header.Values("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeRaw(w, http.StatusOK, b)
}

// etagMatches applies If-None-Match's weak comparison: "*", or any listed
// tag equal to tag with a W/ prefix ignored.
func etagMatches(values []string, tag string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == tag {
				return true
			}
		}
	}
	return false
}
