package handlers

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"service/store"
)

// recordCaller names the request's key, id and client address as the
// caller of the changes h makes, for the audit log. Only the management
// routes that change something pay for it: the SDK's routes log no
// configuration changes.
func (s *Server) recordCaller(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		k := keyFrom(r)
		c := store.Caller{Actor: store.KeyActor(k), Addr: clientAddr(r), Instance: k.Role == store.RoleInstance}
		if info := infoOf(r); info != nil {
			c.RequestID = info.id
		}
		h(w, r.WithContext(store.WithCaller(r.Context(), c)))
	}
}

// clientAddr is the request's peer address. Forwarded headers are not
// trusted: anyone could send them and write any address into the log.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// handleAuditLog lists the app's audit log, newest first, filtered like
// the events query and paged by before=<id>.
func (s *Server) handleAuditLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.AuditFilter{AppID: appID(r), ObjectType: q.Get("objectType"), Actor: q.Get("actor"), Action: q.Get("action"), Limit: 100}
	fe := store.FieldErrors{}
	for name, dst := range map[string]*int64{"objectId": &f.ObjectID, "before": &f.Before} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				fe.Add(name, "must be a positive integer id")
			}
			*dst = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fe.Add("limit", "must be a positive integer")
		}
		f.Limit = min(n, store.MaxAuditLimit)
	}
	for name, dst := range map[string]**time.Time{"startDate": &f.Start, "endDate": &f.End} {
		if v := q.Get(name); v != "" {
			// An unescaped "+02:00" in a query string arrives as " 02:00".
			t, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(v, " ", "+"))
			if err != nil {
				fe.Add(name, "must be an RFC 3339 timestamp")
			}
			*dst = &t
		}
	}
	if err := fe.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.DB.FindAuditLog(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list, "count": len(list)})
}
