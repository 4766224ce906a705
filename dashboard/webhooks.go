package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"service/store"
)

var deliveryStatuses = []string{store.DeliveryPending, store.DeliverySucceeded, store.DeliveryFailed}

type webhookForm struct {
	URL            string
	Events         []string
	Headers        string // one "Name: value" per line
	MaxRetries     string
	TimeoutSeconds string
	Description    string
}

type webhookData struct {
	Hook       *store.Webhook // nil while creating
	Form       webhookForm
	EventKinds []string
	Secret     string // a new secret, shown this once
	Deliveries []*store.Delivery
	Status     string
	Statuses   []string
	Pager      pager
	// Graces are the rotation's grace-period choices, Grace the chosen one.
	Graces []graceChoice
	Grace  string
	// PrevSigning reports that the secret replaced by the last rotation
	// still signs deliveries, by the store's clock, which decides it.
	PrevSigning bool
}

// graceChoice is how long a replaced secret keeps signing: a value the
// store's gracePeriod accepts, and its label.
type graceChoice struct{ Value, Label string }

// graces are the rotation form's choices; the store's default (24 h) is
// the one chosen.
var graces = []graceChoice{{"0", "Not at all: it stops now"}, {"1h", "1 hour"}, {"24h", "24 hours"}, {"168h", "7 days"}}

const defaultGrace = "24h"

func hookPath(r *req, id int64) string { return fmt.Sprintf("/apps/%d/webhooks/%d", r.App.ID, id) }

func formOf(h *store.Webhook) webhookForm {
	f := webhookForm{URL: h.URL, Events: h.Events, MaxRetries: strconv.Itoa(h.MaxRetries),
		TimeoutSeconds: strconv.Itoa(h.TimeoutSeconds), Description: h.Description}
	names := make([]string, 0, len(h.Headers))
	for k := range h.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		f.Headers += k + ": " + h.Headers[k] + "\n"
	}
	return f
}

func (d *Dashboard) handleWebhooks(w http.ResponseWriter, r *req) {
	o := listOptions(r, 20)
	list, p, err := d.DB.FindWebhooks(r.Context(), r.App.ID, o)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := d.page(r, "webhooks", "Webhooks")
	v.Data = struct {
		List  []*store.Webhook
		Pager pager
	}{list, newPager(r, o, p, len(list))}
	d.render(w, r.Request, http.StatusOK, "webhooks", v)
}

func (d *Dashboard) defaultTimeout() int {
	sec := int((d.WebhookTimeout + time.Second - 1) / time.Second)
	return min(max(sec, 1), store.MaxWebhookTimeout)
}

func (d *Dashboard) handleWebhookNew(w http.ResponseWriter, r *req) {
	v := d.page(r, "webhooks", "New webhook")
	v.Data = &webhookData{EventKinds: eventChoices(), Form: webhookForm{Events: []string{"*"},
		MaxRetries: strconv.Itoa(store.DefaultWebhookRetries), TimeoutSeconds: strconv.Itoa(d.defaultTimeout())}}
	d.render(w, r.Request, http.StatusOK, "webhook_edit", v)
}

// eventChoices is what a webhook may subscribe to: everything, or kinds.
func eventChoices() []string { return append([]string{"*"}, store.EventKinds...) }

// readWebhookForm turns the form into the API's input, reporting what only
// the form can get wrong (a number typed as text, a header line without a
// colon) in errs under the API's field names.
func readWebhookForm(r *req, errs map[string]string) (webhookForm, store.WebhookInput) {
	f := webhookForm{URL: strings.TrimSpace(r.PostFormValue("url")), Events: r.PostForm["events"],
		Headers: r.PostFormValue("headers"), MaxRetries: strings.TrimSpace(r.PostFormValue("maxRetries")),
		TimeoutSeconds: strings.TrimSpace(r.PostFormValue("timeoutSeconds")), Description: r.PostFormValue("description")}
	events := f.Events
	if events == nil {
		events = []string{}
	}
	headers := map[string]string{}
	for _, line := range strings.Split(f.Headers, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		k, val, ok := strings.Cut(line, ":")
		if !ok {
			errs["headers"] = "each line must be Name: value"
			continue
		}
		headers[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	in := store.WebhookInput{URL: &f.URL, Events: &events, Headers: &headers, Description: &f.Description}
	num := func(s, field string) *int {
		if s == "" {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			errs[field] = "must be a whole number"
			return nil
		}
		return &n
	}
	in.MaxRetries = num(f.MaxRetries, "maxRetries")
	in.TimeoutSeconds = num(f.TimeoutSeconds, "timeoutSeconds")
	return f, in
}

// newSecret makes a signing secret for a webhook that was given none.
func newSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
}

func (d *Dashboard) handleWebhookCreate(w http.ResponseWriter, r *req) {
	v := d.page(r, "webhooks", "New webhook")
	f, in := readWebhookForm(r, v.Errors)
	data := &webhookData{EventKinds: eventChoices(), Form: f}
	v.Data = data
	secret := strings.TrimSpace(r.PostFormValue("secret"))
	if secret == "" {
		secret = newSecret()
	}
	in.Secret = &secret
	if in.TimeoutSeconds == nil {
		t := d.defaultTimeout()
		in.TimeoutSeconds = &t
	}
	if len(v.Errors) > 0 {
		v.Error = "Please correct the fields marked below."
		d.render(w, r.Request, http.StatusUnprocessableEntity, "webhook_edit", v)
		return
	}
	hook, err := d.DB.CreateWebhook(r.Context(), r.App.ID, in)
	if err != nil {
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "webhook_edit", v)
		return
	}
	// The secret is shown in this answer only; the store never gives it back.
	d.renderWebhook(w, r, hook, http.StatusCreated, func(v *view, data *webhookData) {
		data.Secret = secret
		v.Notice = "Webhook created. Copy its signing secret now: it is not shown again."
	})
}

func (d *Dashboard) appWebhook(r *req) (*store.Webhook, error) {
	id, _ := pathID(r, "id")
	return d.DB.FindWebhookByID(r.Context(), r.App.ID, id)
}

func (d *Dashboard) handleWebhook(w http.ResponseWriter, r *req) {
	hook, err := d.appWebhook(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.renderWebhook(w, r, hook, http.StatusOK, nil)
}

// renderWebhook shows a webhook with its form and delivery log; edit, when
// set, adjusts the view first.
func (d *Dashboard) renderWebhook(w http.ResponseWriter, r *req, hook *store.Webhook, status int, edit func(*view, *webhookData)) {
	filter := r.URL.Query().Get("status")
	if !slices.Contains(deliveryStatuses, filter) {
		filter = ""
	}
	o := listOptions(r, 20)
	list, p, err := d.DB.FindDeliveries(r.Context(), r.App.ID, hook.ID, filter, o)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := d.page(r, "webhooks", hook.URL)
	d.history(r, v, store.ObjectWebhook, hook.ID)
	data := &webhookData{Hook: hook, Form: formOf(hook), EventKinds: eventChoices(), Deliveries: list,
		Status: filter, Statuses: deliveryStatuses, Pager: newPager(r, o, p, len(list)), Graces: graces, Grace: defaultGrace,
		PrevSigning: hook.PreviousSecretExpiresAt != nil && hook.PreviousSecretExpiresAt.After(d.DB.Now())}
	v.Data = data
	if edit != nil {
		edit(v, data)
	}
	d.render(w, r.Request, status, "webhook", v)
}

func (d *Dashboard) handleWebhookSave(w http.ResponseWriter, r *req) {
	hook, err := d.appWebhook(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	errs := map[string]string{}
	f, in := readWebhookForm(r, errs)
	if len(errs) == 0 {
		_, err = d.DB.UpdateWebhook(r.Context(), r.App.ID, hook.ID, in)
		if err == nil {
			redirect(w, r, hookPath(r, hook.ID), "webhook_saved")
			return
		}
		if c := store.ErrorCode(err); c == store.EINTERNAL || c == store.ENOTFOUND {
			d.fail(w, r, err)
			return
		}
	}
	d.renderWebhook(w, r, hook, http.StatusUnprocessableEntity, func(v *view, data *webhookData) {
		data.Form = f
		for k, e := range errs {
			v.Errors[k] = e
		}
		if len(errs) > 0 {
			v.Error = "Please correct the fields marked below."
		} else {
			formErrors(v, err)
		}
	})
}

// handleWebhookRotate replaces the secret as POST /webhooks/{id}/rotate-secret
// does: the new one is shown in this answer only, and the old one keeps
// signing beside it for the grace period chosen.
func (d *Dashboard) handleWebhookRotate(w http.ResponseWriter, r *req) {
	hook, err := d.appWebhook(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	grace := strings.TrimSpace(r.PostFormValue("gracePeriod"))
	var in store.RotateSecretInput
	if grace != "" {
		in.GracePeriod = jsonString(grace)
	}
	rotated, err := d.DB.RotateWebhookSecret(r.Context(), r.App.ID, hook.ID, in)
	if err != nil {
		if store.ErrorCode(err) != store.EINVALID {
			d.fail(w, r, err)
			return
		}
		d.renderWebhook(w, r, hook, http.StatusUnprocessableEntity, func(v *view, data *webhookData) {
			formErrors(v, err)
			data.Grace = grace
		})
		return
	}
	d.renderWebhook(w, r, rotated.Webhook, http.StatusOK, func(v *view, data *webhookData) {
		data.Secret = rotated.Secret
		v.Notice = "Secret rotated. Copy the new one now: it is not shown again."
		if data.PrevSigning {
			v.Notice += " The previous secret keeps signing beside it until " + rotated.PreviousSecretExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC") + "."
		}
	})
}

func (d *Dashboard) handleWebhookTest(w http.ResponseWriter, r *req) {
	hook, err := d.appWebhook(r)
	if err == nil {
		_, err = d.DB.SendTestDelivery(r.Context(), r.App.ID, hook.ID)
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, hookPath(r, hook.ID), "webhook_test")
}

func (d *Dashboard) handleWebhookEnable(w http.ResponseWriter, r *req) {
	hook, err := d.appWebhook(r)
	if err == nil {
		active := store.WebhookActive
		_, err = d.DB.UpdateWebhook(r.Context(), r.App.ID, hook.ID, store.WebhookInput{Status: &active})
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, hookPath(r, hook.ID), "webhook_enabled")
}

func (d *Dashboard) handleWebhookDeleteConfirm(w http.ResponseWriter, r *req) {
	hook, err := d.appWebhook(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := d.page(r, "webhooks", "Delete webhook")
	v.Data = &webhookData{Hook: hook}
	d.render(w, r.Request, http.StatusOK, "webhook_delete", v)
}

func (d *Dashboard) handleWebhookDelete(w http.ResponseWriter, r *req) {
	id, _ := pathID(r, "id")
	if err := d.DB.DeleteWebhook(r.Context(), r.App.ID, id); err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, fmt.Sprintf("/apps/%d/webhooks", r.App.ID), "webhook_deleted")
}

func (d *Dashboard) handleRedeliver(w http.ResponseWriter, r *req) {
	id, _ := pathID(r, "id")
	did, _ := pathID(r, "delivery")
	if _, err := d.DB.RedeliverDelivery(r.Context(), r.App.ID, id, did); err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, hookPath(r, id), "redelivered")
}
