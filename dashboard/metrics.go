package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"service/store"
)

// metricForm is the metric editor's inputs, named by the API's fields so
// the store's field errors land beside them. Numbers stay text, as typed,
// so a refused form shows them again unchanged.
type metricForm struct {
	Key, Name, Description string
	Type, EventID          string
	Property               string
	WindowHours, Cap       string
	Direction              string
}

func num64(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func formFromMetric(m *store.Metric) metricForm {
	f := metricForm{Key: m.Key, Name: m.Name, Description: m.Description, Type: m.Type, EventID: m.EventID,
		WindowHours: num64(m.WindowHours), Cap: num64(m.Cap), Direction: m.Direction}
	if m.Property != nil {
		f.Property = *m.Property
	}
	return f
}

func readMetricForm(r *req) metricForm {
	p := r.PostForm
	return metricForm{Key: strings.TrimSpace(p.Get("key")), Name: p.Get("name"), Description: p.Get("description"),
		Type: p.Get("type"), EventID: strings.TrimSpace(p.Get("eventId")), Property: strings.TrimSpace(p.Get("property")),
		WindowHours: strings.TrimSpace(p.Get("windowHours")), Cap: strings.TrimSpace(p.Get("cap")), Direction: p.Get("direction")}
}

// input builds the store's input. While a running campaign uses the
// metric only its name and description are sent: the rest defines the
// values being collected, and the form shows it as stored. What only the
// form can get wrong (a number that is not one) goes into errs.
func (f *metricForm) input(frozen bool, errs map[string]string) store.MetricInput {
	in := store.MetricInput{Name: &f.Name, Description: &f.Description}
	if frozen {
		return in
	}
	in.Key, in.Type, in.EventID, in.Direction = &f.Key, &f.Type, &f.EventID, &f.Direction
	// The property only means something to a sum; for the other types it
	// is not sent, so a value left in the input after switching the type
	// does not refuse the form.
	in.Property = json.RawMessage("null")
	if f.Type == store.MetricSum && f.Property != "" {
		in.Property = jsonString(f.Property)
	}
	number := func(field, s, reason string) json.RawMessage {
		if s == "" {
			return json.RawMessage("null")
		}
		n, ok := jsonNumber(s)
		if !ok {
			errs[field] = reason
			return json.RawMessage("null")
		}
		return json.RawMessage(n)
	}
	in.WindowHours = number("windowHours", f.WindowHours, fmt.Sprintf("must be empty or a number from %g to %g", store.MinMetricWindowHours, float64(store.MaxMetricWindowHours)))
	in.Cap = number("cap", f.Cap, "must be empty or a number greater than 0")
	return in
}

type metricEditData struct {
	Metric *store.Metric // nil while creating
	F      metricForm
	// Campaigns are the campaigns that use the metric, and Frozen whether
	// one of them is active or paused, which leaves only the name and the
	// description editable.
	Campaigns  []store.MetricCampaign
	Frozen     bool
	Types      []string
	Directions []string
	Dirty      bool
}

func (d *Dashboard) metricView(r *req, m *store.Metric, f metricForm) (*view, error) {
	title := "New metric"
	if m != nil {
		title = m.Name
	}
	v := d.page(r, "metrics", title)
	data := &metricEditData{Metric: m, F: f, Types: store.MetricTypes, Directions: store.MetricDirections}
	if m != nil {
		d.history(r, v, store.ObjectMetric, m.ID)
		used, err := d.DB.FindMetricCampaigns(r.Context(), r.App.ID, m.ID)
		if err != nil {
			return nil, err
		}
		data.Campaigns = used
		for _, c := range used {
			if c.Status == store.CampaignActive || c.Status == store.CampaignPaused {
				data.Frozen = true
			}
		}
	}
	v.Data = data
	return v, nil
}

func (d *Dashboard) appMetric(r *req) (*store.Metric, error) {
	id, ok := pathID(r, "id")
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "metric not found")
	}
	return d.DB.FindMetricByID(r.Context(), r.App.ID, id)
}

type metricRow struct {
	M         *store.Metric
	Campaigns []store.MetricCampaign
}

type metricListData struct {
	Rows  []metricRow
	Pager pager
}

func (d *Dashboard) handleMetricList(w http.ResponseWriter, r *req) {
	o := listOptions(r, 20)
	list, p, err := d.DB.FindMetrics(r.Context(), r.App.ID, o)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data := metricListData{Pager: newPager(r, o, p, len(list))}
	for _, m := range list {
		used, err := d.DB.FindMetricCampaigns(r.Context(), r.App.ID, m.ID)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		data.Rows = append(data.Rows, metricRow{M: m, Campaigns: used})
	}
	v := d.page(r, "metrics", "Metrics")
	v.Data = data
	d.render(w, r.Request, http.StatusOK, "metric_list", v)
}

func (d *Dashboard) handleMetricNew(w http.ResponseWriter, r *req) {
	v, err := d.metricView(r, nil, metricForm{Type: store.MetricConversion, Direction: store.DirectionIncrease})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "metric_edit", v)
}

func (d *Dashboard) handleMetric(w http.ResponseWriter, r *req) {
	m, err := d.appMetric(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v, err := d.metricView(r, m, formFromMetric(m))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "metric_edit", v)
}

func (d *Dashboard) handleMetricCreate(w http.ResponseWriter, r *req) { d.saveMetric(w, r, nil) }

func (d *Dashboard) handleMetricSave(w http.ResponseWriter, r *req) {
	m, err := d.appMetric(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.saveMetric(w, r, m)
}

func (d *Dashboard) saveMetric(w http.ResponseWriter, r *req, m *store.Metric) {
	f := readMetricForm(r)
	v, err := d.metricView(r, m, f)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data := v.Data.(*metricEditData)
	data.Dirty = true
	if data.Frozen {
		// Fields the running campaigns lock are shown as stored, whatever
		// came in.
		stored := formFromMetric(m)
		stored.Name, stored.Description = f.Name, f.Description
		f, data.F = stored, stored
	}
	in := f.input(data.Frozen, v.Errors)
	if len(v.Errors) > 0 {
		v.Error = "Please correct the fields marked below."
		d.render(w, r.Request, http.StatusUnprocessableEntity, "metric_edit", v)
		return
	}
	var saved *store.Metric
	if m == nil {
		saved, err = d.DB.CreateMetric(r.Context(), r.App.ID, in)
	} else {
		saved, err = d.DB.UpdateMetric(r.Context(), r.App.ID, m.ID, in)
	}
	if err != nil {
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "metric_edit", v)
		return
	}
	notice := "metric_saved"
	if m == nil {
		notice = "metric_created"
	}
	redirect(w, r, fmt.Sprintf("/apps/%d/metrics/%d", r.App.ID, saved.ID), notice)
}

type metricDeleteData struct {
	Metric *store.Metric
	// Campaigns are those that keep the metric from being deleted.
	Campaigns []store.MetricCampaign
}

func (d *Dashboard) handleMetricDeleteConfirm(w http.ResponseWriter, r *req) {
	m, err := d.appMetric(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := d.page(r, "metrics", "Delete metric")
	v.Data = &metricDeleteData{Metric: m}
	d.render(w, r.Request, http.StatusOK, "metric_delete", v)
}

// handleMetricDelete deletes a metric; the store refuses while a draft,
// active or paused campaign uses it, and the page then names them.
func (d *Dashboard) handleMetricDelete(w http.ResponseWriter, r *req) {
	m, err := d.appMetric(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	err = d.DB.DeleteMetric(r.Context(), r.App.ID, m.ID)
	var e *store.Error
	if errors.As(err, &e) && e.Code == store.EINVALID {
		used, _ := e.Details["campaigns"].([]store.MetricCampaign)
		v := d.page(r, "metrics", "Delete metric")
		v.Error = "This metric cannot be deleted: campaigns that are drafts, active or paused use it. Take it out of their drafts, or complete them, first."
		v.Data = &metricDeleteData{Metric: m, Campaigns: used}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "metric_delete", v)
		return
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, fmt.Sprintf("/apps/%d/metrics", r.App.ID), "metric_deleted")
}

// metricMeasures says in words what a metric counts per user.
func metricMeasures(m *store.Metric) string {
	var s string
	switch m.Type {
	case store.MetricConversion:
		s = "whether a user logged " + m.EventID
	case store.MetricCount:
		s = "how many times a user logged " + m.EventID
	default:
		s = "the sum of " + m.EventID + "’s " + deref(m.Property) + " per user"
	}
	if m.WindowHours != nil {
		s += ", within " + num64(m.WindowHours) + " h of their first visit"
	}
	if m.Cap != nil {
		s += ", capped at " + num64(m.Cap)
	}
	return s
}
