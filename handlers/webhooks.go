package handlers

import (
	"net/http"
	"time"

	"service/store"
)

var deliveryStatuses = []string{store.DeliveryPending, store.DeliverySucceeded, store.DeliveryFailed}

func (s *Server) handleWebhookList(w http.ResponseWriter, r *http.Request) {
	o, ok := listQuery(w, r, 20, 100)
	if !ok {
		return
	}
	list, p, err := s.DB.FindWebhooks(r.Context(), appID(r), o)
	s.respond(w, r, http.StatusOK, listBody[*store.Webhook]{list, p}, err)
}

// defaultTimeoutSeconds turns --webhook-timeout into whole seconds within
// the range a webhook accepts.
func (s *Server) defaultTimeoutSeconds() int {
	sec := int((s.WebhookTimeout + time.Second - 1) / time.Second)
	return min(max(sec, 1), store.MaxWebhookTimeout)
}

func (s *Server) handleWebhookCreate(w http.ResponseWriter, r *http.Request) {
	var in store.WebhookInput
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.TimeoutSeconds == nil {
		t := s.defaultTimeoutSeconds()
		in.TimeoutSeconds = &t
	}
	hook, err := s.DB.CreateWebhook(r.Context(), appID(r), in)
	s.respond(w, r, http.StatusCreated, hook, err)
}

func (s *Server) handleWebhookGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "webhookId")
	if !ok {
		return
	}
	hook, err := s.DB.FindWebhookByID(r.Context(), appID(r), id)
	s.respond(w, r, http.StatusOK, hook, err)
}

func (s *Server) handleWebhookUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "webhookId")
	if !ok {
		return
	}
	var in store.WebhookInput
	if !decodeJSON(w, r, &in) {
		return
	}
	hook, err := s.DB.UpdateWebhook(r.Context(), appID(r), id, in)
	s.respond(w, r, http.StatusOK, hook, err)
}

func (s *Server) handleWebhookDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "webhookId")
	if !ok {
		return
	}
	if err := s.DB.DeleteWebhook(r.Context(), appID(r), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
}

// handleWebhookTest queues a webhook.test delivery; 202 because it is sent
// after the answer.
func (s *Server) handleWebhookTest(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "webhookId")
	if !ok {
		return
	}
	d, err := s.DB.SendTestDelivery(r.Context(), appID(r), id)
	s.respond(w, r, http.StatusAccepted, d, err)
}

// handleWebhookRotateSecret issues a new secret (or takes the one in the
// body) and answers the webhook with it, the only time it is shown. An
// empty body takes every default.
func (s *Server) handleWebhookRotateSecret(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "webhookId")
	if !ok {
		return
	}
	var in store.RotateSecretInput
	if r.ContentLength != 0 && !decodeJSON(w, r, &in) {
		return
	}
	hook, err := s.DB.RotateWebhookSecret(r.Context(), appID(r), id, in)
	s.respond(w, r, http.StatusOK, hook, err)
}

func (s *Server) handleDeliveryList(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "webhookId")
	if !ok {
		return
	}
	var status string
	o, ok := listQuery(w, r, 20, 100, enumParam("status", &status, deliveryStatuses...))
	if !ok {
		return
	}
	list, p, err := s.DB.FindDeliveries(r.Context(), appID(r), id, status, o)
	s.respond(w, r, http.StatusOK, listBody[*store.Delivery]{list, p}, err)
}

func (s *Server) handleDeliveryGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "webhookId")
	if !ok {
		return
	}
	did, ok := pathID(w, r, "deliveryId")
	if !ok {
		return
	}
	d, err := s.DB.FindDeliveryByID(r.Context(), appID(r), id, did)
	s.respond(w, r, http.StatusOK, d, err)
}

func (s *Server) handleDeliveryRedeliver(w http.ResponseWriter, r *http.Request) {
	id, ok := pathIDAs(w, r, "id", "webhookId")
	if !ok {
		return
	}
	did, ok := pathID(w, r, "deliveryId")
	if !ok {
		return
	}
	d, err := s.DB.RedeliverDelivery(r.Context(), appID(r), id, did)
	s.respond(w, r, http.StatusAccepted, d, err)
}
