package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"service/store"
)

// userErasure is the answer of an erasure.
type userErasure struct {
	Erased    *store.Erasure `json:"erased"`
	RequestID string         `json:"requestId"`
}

// handleUserErase erases everything stored about one user of the app (see
// store.EraseUser). Idempotent: a user erased already, or never seen,
// erases nothing and answers 200 all the same.
func (s *Server) handleUserErase(w http.ResponseWriter, r *http.Request) {
	e, err := s.DB.EraseUser(r.Context(), appID(r), param(r, "userId"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := userErasure{Erased: e}
	if info := infoOf(r); info != nil {
		out.RequestID = info.id
	}
	writeJSON(w, http.StatusOK, out)
}

// exportTimeout bounds how long one export may take to write: the
// request's database deadline suits a request, not a user with a million
// events read by a slow client.
const exportTimeout = 30 * time.Minute

// handleUserExport streams everything stored about one user of the app as
// one JSON document (see store.ExportUser). The answer has no length: it
// goes out in chunks as the rows are read. A failure half way cuts the
// connection, so that the download fails visibly instead of ending like a
// whole document.
func (s *Server) handleUserExport(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(exportTimeout))
	// The export's reads are bounded by the write deadline and by the
	// client, whose going away fails a write and ends them.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), exportTimeout)
	defer cancel()
	started := false
	out := writerFunc(func(b []byte) (int, error) {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Disposition", `attachment; filename="user-export.json"`)
			w.WriteHeader(http.StatusOK)
		}
		n, err := w.Write(b)
		if err == nil {
			err = rc.Flush()
		}
		return n, err
	})
	err := s.DB.ExportUser(ctx, appID(r), param(r, "userId"), out)
	switch {
	case err == nil:
	case !errors.Is(err, store.ExportStarted):
		s.writeError(w, r, err)
	default:
		s.Log.Error("user export", "app", appID(r), "err", err)
		panic(http.ErrAbortHandler)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
