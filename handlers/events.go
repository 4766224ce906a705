package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"service/store"
)

func (s *Server) handleEventCreate(w http.ResponseWriter, r *http.Request) {
	var in store.EventInput
	if !decodeJSON(w, r, &in) {
		return
	}
	res, err := s.DB.LogEvent(r.Context(), appID(r), &in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	bp := answerBuf.Get().(*[]byte)
	defer answerBuf.Put(bp)
	*bp = res.AppendJSON((*bp)[:0])
	writeRaw(w, http.StatusCreated, *bp)
}

func (s *Server) handleEventList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.EventFilter{EventID: q.Get("eventId"), UserID: q.Get("userId"), Limit: 100}
	fe := store.FieldErrors{}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fe.Add("limit", "must be a positive integer")
		}
		f.Limit = min(n, store.MaxEventsLimit)
	}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			fe.Add("before", "must be an event id")
		}
		f.Before = n
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
	list, err := s.DB.FindEvents(r.Context(), appID(r), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list, "count": len(list)})
}
