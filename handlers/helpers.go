package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"service/store"
)

// MaxBodyBytes caps every request body.
const MaxBodyBytes = 1 << 20

// errorStatus maps store error codes to HTTP statuses and API codes.
var errorStatus = map[string]struct {
	status int
	code   string
}{
	store.EINVALID:   {http.StatusBadRequest, "INVALID_REQUEST"},
	store.ENOTFOUND:  {http.StatusNotFound, "NOT_FOUND"},
	store.EFORBIDDEN: {http.StatusForbidden, "FORBIDDEN"},
	store.ELINKED:    {http.StatusConflict, "SESSION_LINKED"},
	store.EINTERNAL:  {http.StatusInternalServerError, "INTERNAL_ERROR"},
}

type errorBody struct {
	Error errorFields `json:"error"`
}

type errorFields struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "err", err)
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"INTERNAL_ERROR","message":"internal error","details":{}}}`)
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(b)
}

var jsonContentType = []string{"application/json"}

// writeErrorCode writes the error envelope.
func writeErrorCode(w http.ResponseWriter, status int, code, msg string, details map[string]any) {
	if details == nil {
		details = map[string]any{}
	}
	writeJSON(w, status, errorBody{errorFields{code, msg, details}})
}

// respond writes v with status, or err when it is set: the tail of nearly
// every handler.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, status, v)
}

// writeError maps err to its status; internal errors are logged and their
// text withheld, since it may name tables, paths or driver internals.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *store.Error
	if errors.As(err, &e) {
		m := errorStatus[e.Code]
		if m.status == 0 {
			m = errorStatus[store.EINTERNAL]
		}
		writeErrorCode(w, m.status, m.code, e.Message, e.Details)
		return
	}
	if errors.Is(err, context.Canceled) {
		// Only a server shutting down cancels a request's work (see
		// ServeHTTP): not a fault to page anyone about.
		s.Log.Info("request canceled", "method", r.Method, "path", r.URL.Path, "err", err)
		unavailable(w, "request canceled, try again")
		return
	}
	if store.IsUnavailable(err) {
		s.Log.Warn("database unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		unavailable(w, "the database did not answer in time, try again")
		return
	}
	s.Log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	writeErrorCode(w, http.StatusInternalServerError, "INTERNAL_ERROR", "internal error", nil)
}

// retryAfter is the Retry-After of a 503: a database that hiccups is
// usually back within a second or two.
var retryAfter = []string{"1"}

// unavailable answers 503 SERVICE_UNAVAILABLE: the request was fine and
// may be sent again as it is.
func unavailable(w http.ResponseWriter, msg string) {
	w.Header()["Retry-After"] = retryAfter
	writeErrorCode(w, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", msg, nil)
}

func invalid(w http.ResponseWriter, msg string, details map[string]any) {
	writeErrorCode(w, http.StatusBadRequest, "INVALID_REQUEST", msg, details)
}

func fieldError(w http.ResponseWriter, field, reason string) {
	invalid(w, "request has invalid fields", map[string]any{"fields": map[string]any{field: reason}})
}

var bodyBuf = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// decodeJSON reads a JSON object body into v. It writes the 4xx answer
// itself and returns false when the body is too large, malformed, not an
// object, or has a field of the wrong type.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	buf := bodyBuf.Get().(*bytes.Buffer)
	defer func() {
		// A buffer grown by a large body is left to the collector rather
		// than pinned in the pool.
		if buf.Cap() <= 64<<10 {
			buf.Reset()
			bodyBuf.Put(buf)
		}
	}()
	// json.Unmarshal copies what it keeps (strings, RawMessage), so the
	// buffer can be reused once decoding returns.
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	body := buf.Bytes()
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeErrorCode(w, http.StatusRequestEntityTooLarge, "INVALID_REQUEST", "request body exceeds 1 MiB", nil)
			return false
		}
		invalid(w, "could not read request body", nil)
		return false
	}
	switch v := v.(type) {
	case *store.VariantRequest:
		if decodeVariantFast(body, v) {
			return true
		}
	case *store.EventInput:
		if decodeEventFast(body, v) {
			return true
		}
	}
	return decodeBytes(w, body, v, r.Method == http.MethodPost)
}

// fieldChecker is a body that can name its bad fields without writing;
// create says whether the route creates (every required field) or edits.
type fieldChecker interface {
	CheckFields(create bool) store.FieldErrors
}

func decodeBytes(w http.ResponseWriter, body []byte, v any, create bool) bool {
	msg, fields := decodeFields(body, v, create)
	if msg == "" {
		return true
	}
	var details map[string]any
	if fields != nil {
		details = map[string]any{"fields": fields}
	}
	invalid(w, msg, details)
	return false
}

// decodeFields decodes body into v and writes nothing: on failure it
// returns the message and, for members of the wrong type, every bad field
// (with the other rules' complaints too, for types that check their own).
func decodeFields(body []byte, v any, create bool) (string, map[string]any) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return "request body is required", nil
	}
	if trimmed[0] != '{' {
		return "request body must be a JSON object", nil
	}
	if !utf8.Valid(body) {
		return "request body must be valid UTF-8", nil
	}
	if hasNULEscape(body) {
		return `request body must not contain the NUL character (\u0000)`, nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			fields := typeErrors(body, v)
			checkOthers(body, v, fields, create)
			return "request has invalid fields", fields
		}
		return "malformed JSON body", nil
	}
	return "", nil
}

// hasNULEscape reports whether a JSON text holds the escape \u0000 (a raw
// NUL byte is not valid JSON). PostgreSQL's text cannot hold the character,
// so both stores refuse it rather than differ; the SDK's fast decoders never
// see it, since they hand any escape to this path.
func hasNULEscape(body []byte) bool {
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(`u0000`))
		if j < 0 {
			return false
		}
		at := i + j
		slashes := 0
		for k := at - 1; k >= 0 && body[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 1 {
			return true
		}
		i = at + 5
	}
}

// typeErrors names every top-level member of body whose value has the
// wrong type for v, by decoding each member alone: encoding/json stops at
// the first, and a client should learn of all of them at once.
func typeErrors(body []byte, v any) map[string]any {
	out := map[string]any{}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(body, &members)
	t := reflect.TypeOf(v).Elem()
	for k, raw := range members {
		doc, _ := json.Marshal(map[string]json.RawMessage{k: raw})
		err := json.Unmarshal(doc, reflect.New(t).Interface())
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			continue
		}
		path := pathAt(doc, typeErr.Offset)
		if path == "" {
			path = typeErr.Field
		}
		out[path] = "must be " + article(typeErr.Type.Kind().String())
	}
	return out
}

// checkOthers adds to fields the problems of every member that decoded
// fine, so the answer names them all at once, not only the wrongly typed
// ones: the members named in fields are dropped, the rest decoded into a
// fresh value and checked as the write path would check it.
func checkOthers(body []byte, v any, fields map[string]any, create bool) {
	if _, ok := v.(fieldChecker); !ok {
		return
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return
	}
	bad := map[string]bool{}
	for path := range fields {
		bad[topMember(path)] = true
	}
	for k := range members {
		if bad[k] {
			delete(members, k)
		}
	}
	rest, _ := json.Marshal(members)
	fresh := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	if json.Unmarshal(rest, fresh) != nil {
		return
	}
	for path, reason := range fresh.(fieldChecker).CheckFields(create) {
		// A wrongly typed member is absent from the rest: its "is
		// required" would contradict the type error already named.
		if !bad[topMember(path)] {
			fields[path] = reason
		}
	}
}

// topMember returns the top-level member a JSON path starts with.
func topMember(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// pathAt returns the JSON path ("variants[1].trafficAllocation") of the
// value that ends (or, for objects and arrays, opens) at byte offset off.
// encoding/json reports a type error's field without array indices, and a
// client needs the index to find the bad variant.
func pathAt(body []byte, off int64) string {
	type frame struct {
		arr       bool
		idx       int
		key       string
		expectKey bool
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.arr {
				b.WriteString("[" + strconv.Itoa(f.idx) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if n := len(stack); n > 0 && !stack[n-1].arr && stack[n-1].expectKey {
			if k, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].expectKey = k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if dec.InputOffset() == off && len(stack) > 0 {
				return path()
			}
			stack = append(stack, frame{arr: tok == json.Delim('['), expectKey: tok == json.Delim('{')})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if dec.InputOffset() == off {
				return path()
			}
		}
		if n := len(stack); n > 0 {
			if stack[n-1].arr {
				stack[n-1].idx++
			} else {
				stack[n-1].expectKey = true
			}
		}
	}
}

func article(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int", "int64", "int32", "uint", "uint64", "float64", "float32":
		return "a number"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return "of another type"
}

// pathID parses a numeric path parameter, answering 400 when it is not one.
func pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	return pathIDAs(w, r, name, name)
}

// pathIDAs parses the router's path parameter key, naming it in errors
// as the API reference does (campaignId, webhookId, ...): the router must
// give one name to every parameter at the same position of a path, so
// several resources share the name "id" there.
func pathIDAs(w http.ResponseWriter, r *http.Request, key, name string) (int64, bool) {
	raw := param(r, key)
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		invalid(w, fmt.Sprintf("path parameter %s must be a positive integer", name), map[string]any{"param": name})
		return 0, false
	}
	return id, true
}

// queryParam reads one filter of a list into its destination, recording
// a bad value in fe.
type queryParam func(q url.Values, fe store.FieldErrors)

// listQuery reads limit, page and the list's filters. limit defaults to
// def, is clamped to max, and is bad below 1 or when not a number; page is
// 1-based. It answers 400 itself, naming every bad parameter at once, and
// returns false then.
func listQuery(w http.ResponseWriter, r *http.Request, def, max int, filters ...queryParam) (store.ListOptions, bool) {
	q := r.URL.Query()
	fe := store.FieldErrors{}
	o := store.ListOptions{Limit: def, Page: 1}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fe.Add("limit", "must be a positive integer")
		}
		o.Limit = min(n, max)
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			fe.Add("page", "must be a positive integer")
		}
		o.Page = n
	}
	for _, f := range filters {
		f(q, fe)
	}
	if len(fe) > 0 {
		fields := make(map[string]any, len(fe))
		for k, v := range fe {
			fields[k] = v
		}
		invalid(w, "request has invalid fields", map[string]any{"fields": fields})
		return o, false
	}
	return o, true
}

// enumParam reads an optional query parameter that must be one of allowed.
func enumParam(name string, dst *string, allowed ...string) queryParam {
	return func(q url.Values, fe store.FieldErrors) {
		v := q.Get(name)
		if v == "" {
			return
		}
		if !slices.Contains(allowed, v) {
			fe.Add(name, "must be one of "+strings.Join(allowed, ", "))
			return
		}
		*dst = v
	}
}

// idParam reads an optional query parameter that must be a positive id.
func idParam(name string, dst *int64) queryParam {
	return func(q url.Values, fe store.FieldErrors) {
		v := q.Get(name)
		if v == "" {
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			fe.Add(name, "must be a positive integer")
			return
		}
		*dst = n
	}
}

type listBody[T any] struct {
	Data       []T              `json:"data"`
	Pagination store.Pagination `json:"pagination"`
}
