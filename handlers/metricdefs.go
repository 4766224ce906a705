package handlers

import (
	"net/http"

	"service/store"
)

func (s *Server) handleMetricList(w http.ResponseWriter, r *http.Request) {
	o, ok := listQuery(w, r, 20, 100)
	if !ok {
		return
	}
	list, p, err := s.DB.FindMetrics(r.Context(), appID(r), o)
	s.respond(w, r, http.StatusOK, listBody[*store.Metric]{list, p}, err)
}

func (s *Server) handleMetricCreate(w http.ResponseWriter, r *http.Request) {
	var in store.MetricInput
	if !decodeJSON(w, r, &in) {
		return
	}
	m, err := s.DB.CreateMetric(r.Context(), appID(r), in)
	s.respond(w, r, http.StatusCreated, m, err)
}

func (s *Server) handleMetricGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "metricId")
	if !ok {
		return
	}
	m, err := s.DB.FindMetricByID(r.Context(), appID(r), id)
	s.respond(w, r, http.StatusOK, m, err)
}

func (s *Server) handleMetricUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "metricId")
	if !ok {
		return
	}
	var in store.MetricInput
	if !decodeJSON(w, r, &in) {
		return
	}
	m, err := s.DB.UpdateMetric(r.Context(), appID(r), id, in)
	s.respond(w, r, http.StatusOK, m, err)
}

func (s *Server) handleMetricDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "metricId")
	if !ok {
		return
	}
	if err := s.DB.DeleteMetric(r.Context(), appID(r), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
}
