package handlers

import (
	_ "embed"
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// OpenAPI is the OpenAPI 3.1 document of every route, served at
// GET /v1/openapi.json. It is written by hand beside the route table;
// tests hold the two equal, in both directions.
//
//go:embed openapi.json
var OpenAPI []byte

// Route is one registered method and path pattern, without the /v1 or
// /api/v1 prefix (except /healthz and /livez, which have none).
type Route struct {
	Method, Path string
}

// Routes lists every route the server answers, in registration order.
func (s *Server) Routes() []Route { return append([]Route(nil), s.served...) }

// serveOpenAPI registers the document under both API prefixes. It needs
// no key: it describes the API and holds nothing of any app.
func (s *Server) serveOpenAPI(rt *httprouter.Router) {
	h := s.instrument("/openapi.json", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(OpenAPI)
	}))
	for _, prefix := range []string{"/v1", "/api/v1"} {
		rt.Handler(http.MethodGet, prefix+"/openapi.json", h)
	}
	s.served = append(s.served, Route{"GET", "/openapi.json"})
}
