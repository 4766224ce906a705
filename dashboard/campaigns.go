package dashboard

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"service/stats"
	"service/store"
)

// campaignPath is the campaign's page in the current app.
func campaignPath(r *req, id int64) string { return fmt.Sprintf("/apps/%d/campaigns/%d", r.App.ID, id) }

// dateInput is how a datetime-local input holds a campaign date: local
// time in the campaign's timezone, to the minute.
const dateInput = "2006-01-02T15:04"

// commonZones fill the timezone input's suggestions; any IANA name works.
var commonZones = []string{"UTC", "Europe/London", "Europe/Berlin", "Europe/Paris", "America/New_York", "America/Chicago",
	"America/Denver", "America/Los_Angeles", "America/Sao_Paulo", "Asia/Kolkata", "Asia/Singapore", "Asia/Tokyo", "Australia/Sydney"}

// campaignForm is the editor's inputs, named by the API's field paths
// (variants[1].trafficAllocation), so the store's field errors land beside
// the input they concern.
type campaignForm struct {
	Name, Description string
	// Key is the campaign's key; left empty on a new campaign, the store
	// makes it from the name.
	Key        string
	Start, End string
	Timezone   string
	Goal       string
	Audience   string
	Assignment string
	Engine     string
	// NSID, NSStart and NSEnd are the namespace and its range; no id
	// means no namespace.
	NSID, NSStart, NSEnd string
	Cuped                string
	// Secondary and Guardrails are the ids of the metrics picked in each
	// role, as the form posts them.
	Secondary, Guardrails []string
	// GuardrailAction is what a guardrail's regression does besides its
	// webhook: alert, or pause the campaign.
	GuardrailAction string
	Control         int
	Variants        []variantRow
	endUnchanged    string // the stored endDate, to send it only when changed
}

type variantRow struct {
	Index   int
	Name    string
	Content string
	Weight  string
}

// Path is the variant's path in the API's field errors.
func (v variantRow) Path() string { return fmt.Sprintf("variants[%d]", v.Index) }

func localDate(t *store.Time, tz string) string {
	if t == nil {
		return ""
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format(dateInput)
}

func formFromCampaign(c *store.Campaign) campaignForm {
	f := campaignForm{Name: c.Name, Key: c.Key, Description: c.Description, Timezone: c.Timezone, Assignment: c.AssignmentType, Engine: c.StatsEngine,
		Start: localDate(c.StartDate, c.Timezone), End: localDate(c.EndDate, c.Timezone)}
	f.endUnchanged = f.End
	if ns := c.Namespace; ns != nil {
		f.NSID, f.NSStart, f.NSEnd = ns.ID, strconv.FormatFloat(ns.Range[0], 'f', -1, 64), strconv.FormatFloat(ns.Range[1], 'f', -1, 64)
	}
	f.Cuped = strconv.Itoa(c.CupedLookbackDays)
	for _, id := range c.Metrics.Secondary {
		f.Secondary = append(f.Secondary, strconv.FormatInt(id, 10))
	}
	for _, id := range c.Metrics.Guardrails {
		f.Guardrails = append(f.Guardrails, strconv.FormatInt(id, 10))
	}
	f.GuardrailAction = c.GuardrailAction
	if c.GoalEventID != nil {
		f.Goal = *c.GoalEventID
	}
	if c.AudienceID != nil {
		f.Audience = strconv.FormatInt(*c.AudienceID, 10)
	}
	for i, v := range c.Variants {
		f.Variants = append(f.Variants, variantRow{Index: i, Name: v.Name, Content: strconv.FormatInt(v.ContentViewID, 10),
			Weight: strconv.FormatFloat(v.TrafficAllocation, 'f', -1, 64)})
		if v.IsControl {
			f.Control = i
		}
	}
	return f
}

func readCampaignForm(r *req) campaignForm {
	p := r.PostForm
	f := campaignForm{Name: p.Get("name"), Key: strings.TrimSpace(p.Get("key")), Description: p.Get("description"), Start: strings.TrimSpace(p.Get("startDate")),
		End: strings.TrimSpace(p.Get("endDate")), Timezone: strings.TrimSpace(p.Get("timezone")), Goal: strings.TrimSpace(p.Get("goalEventId")),
		Audience: p.Get("audienceId"), Assignment: p.Get("assignmentType"), Engine: p.Get("statsEngine"),
		NSID: p.Get("namespaceId"), NSStart: strings.TrimSpace(p.Get("namespaceStart")), NSEnd: strings.TrimSpace(p.Get("namespaceEnd")),
		Cuped: strings.TrimSpace(p.Get("cupedLookbackDays"))}
	f.Control, _ = strconv.Atoi(p.Get("control"))
	f.Secondary, f.Guardrails = p["metrics.secondary"], p["metrics.guardrails"]
	f.GuardrailAction = p.Get("guardrailAction")
	for i := 0; i < store.MaxVariants; i++ {
		vp := fmt.Sprintf("variants[%d]", i)
		if _, ok := p[vp+".contentViewId"]; !ok {
			break
		}
		f.Variants = append(f.Variants, variantRow{Index: i, Name: p.Get(vp + ".name"), Content: p.Get(vp + ".contentViewId"),
			Weight: strings.TrimSpace(p.Get(vp + ".trafficAllocation"))})
	}
	return f
}

// editable lists what a campaign's state lets the editor change, as the
// store's UpdateCampaign allows it.
func editable(status string) map[string]bool {
	switch status {
	case "", store.CampaignDraft:
		return map[string]bool{"name": true, "description": true, "startDate": true, "endDate": true, "timezone": true,
			"goalEventId": true, "audienceId": true, "assignmentType": true, "statsEngine": true, "variants": true,
			"namespace": true, "cupedLookbackDays": true, "key": true, "metrics": true}
	case store.CampaignActive, store.CampaignPaused:
		return map[string]bool{"name": true, "description": true, "endDate": true}
	}
	return map[string]bool{"name": true, "description": true}
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// input builds the store's input from the form, with only the fields the
// state lets change; a date left as it was is not sent, so moving nothing
// never trips a rule about moving it. What only the form can get wrong (a
// weight that is not a number) goes into errs under the API's path.
func (f *campaignForm) input(status string, errs map[string]string) store.CampaignInput {
	can := editable(status)
	in := store.CampaignInput{Name: &f.Name, Description: &f.Description}
	null := json.RawMessage("null")
	date := func(s string) json.RawMessage {
		if s == "" {
			return null
		}
		return jsonString(s)
	}
	// A key left empty is not sent: a new campaign's is made from its name.
	if can["key"] && f.Key != "" {
		k := f.Key
		in.Key = &k
	}
	if can["timezone"] {
		tz := f.Timezone
		if tz == "" {
			tz = "UTC"
		}
		in.Timezone = &tz
	}
	if can["startDate"] {
		in.StartDate = date(f.Start)
	}
	if can["endDate"] && (status == "" || status == store.CampaignDraft || f.End != f.endUnchanged) {
		in.EndDate = date(f.End)
	}
	if can["goalEventId"] {
		in.GoalEventID = date(f.Goal)
	}
	if can["audienceId"] {
		in.AudienceID = null
		if f.Audience != "" {
			in.AudienceID = json.RawMessage(f.Audience)
			if _, err := strconv.ParseInt(f.Audience, 10, 64); err != nil {
				errs["audienceId"] = "must be an audience of this app"
			}
		}
	}
	if can["assignmentType"] {
		a := f.Assignment
		in.AssignmentType = &a
	}
	// An engine left empty is not sent, so the store's default applies.
	if can["statsEngine"] && f.Engine != "" {
		e := f.Engine
		in.StatsEngine = &e
	}
	if can["namespace"] {
		in.Namespace = null
		if f.NSID != "" {
			// An empty bound is the namespace's edge: the whole of it
			// unless narrowed.
			start, end, err1, err2 := 0.0, 1.0, error(nil), error(nil)
			if f.NSStart != "" {
				start, err1 = strconv.ParseFloat(f.NSStart, 64)
			}
			if f.NSEnd != "" {
				end, err2 = strconv.ParseFloat(f.NSEnd, 64)
			}
			if err1 != nil || err2 != nil {
				errs["namespace.range"] = "must be two numbers from 0 to 1"
			}
			in.Namespace, _ = json.Marshal(store.Namespace{ID: f.NSID, Range: [2]float64{start, end}})
		}
	}
	// A lookback left empty is not sent, so the store's default applies.
	if can["cupedLookbackDays"] && f.Cuped != "" {
		if _, err := strconv.Atoi(f.Cuped); err != nil {
			errs["cupedLookbackDays"] = fmt.Sprintf("must be a whole number of days from 0 to %d", store.MaxCupedLookbackDays)
		} else {
			in.CupedLookbackDays = json.RawMessage(f.Cuped)
		}
	}
	if can["metrics"] {
		// The ids go to the store as numbers whatever they are, so that
		// its refusal (no such metric in this app) lands beside the picker.
		ids := func(role string, list []string) []json.RawMessage {
			out := []json.RawMessage{}
			for i, s := range list {
				if _, err := strconv.ParseInt(s, 10, 64); err != nil {
					errs[fmt.Sprintf("metrics.%s[%d]", role, i)] = "must be a metric of this app"
					continue
				}
				out = append(out, json.RawMessage(s))
			}
			return out
		}
		in.Metrics, _ = json.Marshal(map[string][]json.RawMessage{"secondary": ids("secondary", f.Secondary), "guardrails": ids("guardrails", f.Guardrails)})
		// Left out, the store keeps what the campaign has (alert when new).
		if f.GuardrailAction != "" {
			action := f.GuardrailAction
			in.GuardrailAction = &action
		}
	}
	if can["variants"] {
		vs := make([]store.VariantInput, len(f.Variants))
		for i, row := range f.Variants {
			name := strings.TrimSpace(row.Name)
			if name != "" {
				vs[i].Name = &name
			}
			if id, err := strconv.ParseInt(row.Content, 10, 64); err == nil {
				vs[i].ContentViewID = &id
			}
			if row.Weight != "" {
				w, err := strconv.ParseFloat(row.Weight, 64)
				if err != nil {
					errs[row.Path()+".trafficAllocation"] = "must be a number from 0 to 100"
				}
				vs[i].TrafficAllocation = &w
			}
			control := i == f.Control
			vs[i].IsControl = &control
		}
		in.Variants = &vs
	}
	return in
}

// variantAction adds or removes a variant row; the form is then shown
// again, unsaved.
func (f *campaignForm) variantAction(action string) bool {
	switch {
	case action == "addvariant" && len(f.Variants) < store.MaxVariants:
		f.Variants = append(f.Variants, variantRow{})
	case strings.HasPrefix(action, "removevariant:"):
		i, err := strconv.Atoi(strings.TrimPrefix(action, "removevariant:"))
		if err != nil || i < 0 || i >= len(f.Variants) {
			return false
		}
		f.Variants = slices.Delete(f.Variants, i, i+1)
		if f.Control >= len(f.Variants) || f.Control == i {
			f.Control = 0
		} else if f.Control > i {
			f.Control--
		}
	default:
		return false
	}
	for i := range f.Variants {
		f.Variants[i].Index = i
	}
	return true
}

// move is a lifecycle button: its label and the status it moves to.
type move struct{ Label, To, Style string }

// movesFrom are the buttons a state offers, the store's state machine.
func movesFrom(status string) []move {
	switch status {
	case store.CampaignDraft:
		return []move{{"Start", store.CampaignActive, "primary"}, {"Archive", store.CampaignArchived, "ghost"}}
	case store.CampaignActive:
		return []move{{"Pause", store.CampaignPaused, ""}, {"Complete", store.CampaignCompleted, ""}}
	case store.CampaignPaused:
		return []move{{"Resume", store.CampaignActive, "primary"}, {"Complete", store.CampaignCompleted, ""}}
	case store.CampaignCompleted:
		return []move{{"Archive", store.CampaignArchived, "ghost"}}
	case store.CampaignArchived:
		return []move{{"Unarchive", "unarchive", ""}}
	}
	return nil
}

type campaignEditData struct {
	Campaign    *store.Campaign // nil while creating
	F           campaignForm
	Can         map[string]bool
	Moves       []move
	Contents    []*store.ContentView
	Audiences   []*store.Audience
	Zones       []string
	Assignments []string
	Engines     []engineChoice
	// Namespaces are the app's namespaces, to pick one and see what is
	// free in it.
	Namespaces []store.NamespaceUsage
	// Metrics are the app's metrics, to pick secondary metrics and
	// guardrails from.
	Metrics []*store.Metric
	Dirty   bool
	// Blocked are the variants whose block keeps the campaign from
	// starting or resuming, said before the button is pressed.
	Blocked []blockedVariant
	// blockNames names every block of the app, archived ones too, for the
	// variants of a campaign whose variants are locked.
	blockNames map[string]string
}

// blockedVariant is a block problem with the block's name, to link to it.
type blockedVariant struct {
	store.BlockProblem
	Name string
}

// BlockName is the name of the block with id s as the variants table
// shows it; a block deleted since keeps its id.
func (d *campaignEditData) BlockName(s string) string {
	if name, ok := d.blockNames[s]; ok {
		return name
	}
	return "#" + s + " (deleted)"
}

// Scheduled reports whether the scheduler would start the campaign: a
// draft with a start date.
func (d *campaignEditData) Scheduled() bool {
	return d.Campaign != nil && d.Campaign.Status == store.CampaignDraft && d.Campaign.StartDate != nil
}

// StartLabel is the planned start as the page says it, in the campaign's
// timezone.
func (d *campaignEditData) StartLabel() string {
	return strings.Replace(localDate(d.Campaign.StartDate, d.Campaign.Timezone), "T", " ", 1) + " (" + d.Campaign.Timezone + ")"
}

// Blocks reports whether a move to to is one the block problems refuse.
func (d *campaignEditData) Blocks(to string) bool {
	return to == store.CampaignActive && len(d.Blocked) > 0
}

// Picked reports whether the form has metric id in role (secondary or
// guardrails).
func (d *campaignEditData) Picked(role string, id int64) bool {
	list := d.F.Secondary
	if role == "guardrails" {
		list = d.F.Guardrails
	}
	return slices.Contains(list, strconv.FormatInt(id, 10))
}

// chosenMetric is a metric the campaign uses, for the read-only list.
type chosenMetric struct {
	Role   string
	ID     string
	Metric *store.Metric // nil when it is not among the app's metrics
}

// Chosen lists the form's metrics, secondary ones first, in order.
func (d *campaignEditData) Chosen() []chosenMetric {
	var out []chosenMetric
	for _, r := range []struct {
		role string
		ids  []string
	}{{store.RoleSecondary, d.F.Secondary}, {store.RoleGuardrail, d.F.Guardrails}} {
		for _, id := range r.ids {
			c := chosenMetric{Role: r.role, ID: id}
			for _, m := range d.Metrics {
				if strconv.FormatInt(m.ID, 10) == id {
					c.Metric = m
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// engineChoice is one statistics engine the editor offers, with the line
// that tells a marketer what choosing it means.
type engineChoice struct{ Value, Label, Explain string }

// engines are the statistics engines, the store's default first.
var engines = []engineChoice{
	{string(stats.EngineFrequentist), "Frequentist (fixed horizon)",
		"Decide once, at the planned end: stopping early at the first good-looking day makes false winners likely."},
	{string(stats.EngineSequential), "Sequential (always valid)",
		"Safe to check daily: stop as soon as it calls a winner, the 5% error rate still holds."},
	{string(stats.EngineBayesian), "Bayesian (chance to beat control)",
		"Calls a winner once a variant has a 95% chance to beat the control (or to lose to it), with the risk of picking it."},
}

// engineLabel is an engine's name as the pages show it.
func engineLabel(e string) string {
	for _, c := range engines {
		if c.Value == e {
			return c.Label
		}
	}
	return e
}

// Status is the campaign's status, "" while creating.
func (d *campaignEditData) Status() string {
	if d.Campaign == nil {
		return ""
	}
	return d.Campaign.Status
}

func (d *Dashboard) campaignView(r *req, c *store.Campaign, f campaignForm) (*view, error) {
	title := "New campaign"
	status := ""
	if c != nil {
		title, status = c.Name, c.Status
	}
	v := d.page(r, "campaigns", title)
	if c != nil {
		d.history(r, v, store.ObjectCampaign, c.ID)
	}
	data := &campaignEditData{Campaign: c, F: f, Can: editable(status), Moves: movesFrom(status), Zones: commonZones,
		Assignments: []string{store.AssignWeighted, store.AssignRoundRobin}, Engines: engines}
	ns, err := d.DB.FindNamespaces(r.Context(), r.App.ID)
	if err != nil {
		return nil, err
	}
	data.Namespaces = ns
	// The pickers offer every block that is not archived and every active
	// audience: what the store accepts.
	data.blockNames = map[string]string{}
	for page := 1; page <= 10; page++ {
		list, p, err := d.DB.FindContents(r.Context(), r.App.ID, "", store.ListOptions{Limit: 100, Page: page})
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			data.blockNames[strconv.FormatInt(c.ID, 10)] = c.Name
			if c.Status != store.ContentArchived {
				data.Contents = append(data.Contents, c)
			}
		}
		if !p.HasMore {
			break
		}
	}
	// An app with more blocks than the pages read above still names its
	// campaign's own.
	for _, row := range f.Variants {
		id, err := strconv.ParseInt(row.Content, 10, 64)
		if _, ok := data.blockNames[row.Content]; ok || err != nil {
			continue
		}
		if b, err := d.DB.FindContentByID(r.Context(), r.App.ID, id); err == nil {
			data.blockNames[row.Content] = b.Name
		} else if store.ErrorCode(err) != store.ENOTFOUND {
			return nil, err
		}
	}
	if c != nil && (c.Status == store.CampaignDraft || c.Status == store.CampaignPaused) {
		problems, err := d.DB.CampaignBlockProblems(r.Context(), r.App.ID, c.ID)
		if err != nil {
			return nil, err
		}
		for _, p := range problems {
			data.Blocked = append(data.Blocked, blockedVariant{p, data.blockNames[strconv.FormatInt(p.ContentViewID, 10)]})
		}
	}
	auds, _, err := d.DB.FindAudiences(r.Context(), r.App.ID, store.AudienceActive, store.ListOptions{Limit: 100, Page: 1})
	if err != nil {
		return nil, err
	}
	// The campaign's own audience stays offered even when the list above
	// misses it (archived since, or past the first page): otherwise the
	// select would fall back to "Everyone" and a save would drop it.
	if id, err := strconv.ParseInt(f.Audience, 10, 64); err == nil && !slices.ContainsFunc(auds, func(a *store.Audience) bool { return a.ID == id }) {
		if a, err := d.DB.FindAudienceByID(r.Context(), r.App.ID, id); err == nil {
			auds = append(auds, a)
		}
	}
	data.Audiences = auds
	// Every metric of the app: a campaign may use any of them, and one it
	// uses must be found to show its name.
	for page := 1; page <= 10; page++ {
		list, p, err := d.DB.FindMetrics(r.Context(), r.App.ID, store.ListOptions{Limit: 100, Page: page})
		if err != nil {
			return nil, err
		}
		data.Metrics = append(data.Metrics, list...)
		if !p.HasMore {
			break
		}
	}
	v.Data = data
	return v, nil
}

func (d *Dashboard) appCampaign(r *req) (*store.Campaign, error) {
	id, ok := pathID(r, "id")
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "campaign not found")
	}
	return d.DB.FindCampaignByID(r.Context(), r.App.ID, id)
}

func (d *Dashboard) handleCampaignNew(w http.ResponseWriter, r *req) {
	f := campaignForm{Timezone: "UTC", Assignment: store.AssignWeighted, Engine: string(stats.EngineFrequentist), Variants: []variantRow{
		{Index: 0, Name: "Control", Weight: "50"}, {Index: 1, Name: "Variant B", Weight: "50"}}}
	v, err := d.campaignView(r, nil, f)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "campaign_edit", v)
}

func (d *Dashboard) handleCampaign(w http.ResponseWriter, r *req) {
	c, err := d.appCampaign(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v, err := d.campaignView(r, c, formFromCampaign(c))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "campaign_edit", v)
}

func (d *Dashboard) handleCampaignCreate(w http.ResponseWriter, r *req) { d.saveCampaign(w, r, nil) }

func (d *Dashboard) handleCampaignSave(w http.ResponseWriter, r *req) {
	c, err := d.appCampaign(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.saveCampaign(w, r, c)
}

func (d *Dashboard) saveCampaign(w http.ResponseWriter, r *req, c *store.Campaign) {
	f := readCampaignForm(r)
	status := ""
	if c != nil {
		status = c.Status
		stored := formFromCampaign(c)
		f.endUnchanged = stored.endUnchanged
		if !editable(status)["variants"] {
			// Fields the state locks are shown as stored, whatever came in.
			f.Variants, f.Control, f.Goal, f.Audience = stored.Variants, stored.Control, stored.Goal, stored.Audience
			f.Assignment, f.Timezone, f.Start, f.Engine = stored.Assignment, stored.Timezone, stored.Start, stored.Engine
			f.NSID, f.NSStart, f.NSEnd, f.Cuped = stored.NSID, stored.NSStart, stored.NSEnd, stored.Cuped
			f.Key = stored.Key
			f.Secondary, f.Guardrails = stored.Secondary, stored.Guardrails
		}
	}
	action := r.PostFormValue("action")
	if action != "" && action != "save" {
		f.variantAction(action)
		v, err := d.campaignView(r, c, f)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v.Data.(*campaignEditData).Dirty = true
		d.render(w, r.Request, http.StatusOK, "campaign_edit", v)
		return
	}
	v, err := d.campaignView(r, c, f)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Data.(*campaignEditData).Dirty = true
	in := f.input(status, v.Errors)
	if len(v.Errors) > 0 {
		v.Error = "Please correct the fields marked below."
		d.render(w, r.Request, http.StatusUnprocessableEntity, "campaign_edit", v)
		return
	}
	var saved *store.Campaign
	if c == nil {
		saved, err = d.DB.CreateCampaign(r.Context(), r.App.ID, 0, in)
	} else {
		saved, err = d.DB.UpdateCampaign(r.Context(), r.App.ID, c.ID, in)
	}
	if err != nil {
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "campaign_edit", v)
		return
	}
	notice := "campaign_saved"
	if c == nil {
		notice = "campaign_created"
	}
	redirect(w, r, campaignPath(r, saved.ID), notice)
}

// handleCampaignMove is every lifecycle button: the store's state machine
// decides, and a refused move shows its reason on the campaign's page.
func (d *Dashboard) handleCampaignMove(w http.ResponseWriter, r *req) {
	c, err := d.appCampaign(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	to := r.PostFormValue("to")
	if to == "unarchive" {
		_, err = d.DB.UnarchiveCampaign(r.Context(), r.App.ID, c.ID)
	} else {
		_, err = d.DB.SetCampaignStatus(r.Context(), r.App.ID, c.ID, to)
	}
	if err != nil {
		v, verr := d.campaignView(r, c, formFromCampaign(c))
		if verr != nil {
			d.fail(w, r, verr)
			return
		}
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		// A move refused for a field names it; say so in the banner too,
		// since the field may not be editable in this state.
		if e, ok := err.(*store.Error); ok && v.Error != e.Message {
			v.Error = "Refused: " + e.Message
		} else {
			v.Error = "Refused: " + v.Error
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "campaign_edit", v)
		return
	}
	notice := "campaign_" + to
	redirect(w, r, campaignPath(r, c.ID), notice)
}

type campaignRow struct {
	C        *store.Campaign
	Audience string
	Result   string
}

type campaignListData struct {
	Rows     []campaignRow
	Status   string
	Statuses []string
	Query    string
	Pager    pager
}

func (d *Dashboard) handleCampaignList(w http.ResponseWriter, r *req) {
	q := r.URL.Query()
	status := q.Get("status")
	if !slices.Contains(store.CampaignStatuses, status) {
		status = ""
	}
	search := strings.TrimSpace(q.Get("q"))
	o := listOptions(r, 20)
	list, p, err := d.DB.FindCampaignsNamed(r.Context(), r.App.ID, status, search, o)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data := campaignListData{Status: status, Statuses: store.CampaignStatuses, Query: search, Pager: newPager(r, o, p, len(list))}
	audiences := map[int64]string{}
	for _, c := range list {
		row := campaignRow{C: c}
		if c.AudienceID != nil {
			name, ok := audiences[*c.AudienceID]
			if !ok {
				if a, err := d.DB.FindAudienceByID(r.Context(), r.App.ID, *c.AudienceID); err == nil {
					name = a.Name
				}
				audiences[*c.AudienceID] = name
			}
			row.Audience = name
		}
		a, err := d.DB.CampaignAnalytics(r.Context(), r.App.ID, c.ID)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		row.Result = oneLineResult(a)
		data.Rows = append(data.Rows, row)
	}
	v := d.page(r, "campaigns", "Campaigns")
	v.Data = data
	d.render(w, r.Request, http.StatusOK, "campaign_list", v)
}

// oneLineResult sums up a campaign's analytics for the list: the leading
// variant, its uplift against the control and the campaign's confidence
// once it is significant, "no clear difference yet" before (under the
// Bayesian engine, the leader's chance to beat the control).
func oneLineResult(a *store.Analytics) string {
	if a.TotalImpressions == 0 {
		return "No impressions yet"
	}
	lead := -1
	for i, v := range a.Variants {
		if v.Impressions > 0 && (lead < 0 || v.ConversionRate > a.Variants[lead].ConversionRate) {
			lead = i
		}
	}
	if a.WinningVariantID != nil {
		for i, v := range a.Variants {
			if v.VariantID == *a.WinningVariantID {
				lead = i
			}
		}
	}
	v := a.Variants[lead]
	s := v.VariantName + " leads"
	if a.WinningVariantID != nil {
		s = v.VariantName + " wins"
	}
	if v.Uplift != nil {
		s += fmt.Sprintf(", %+.1f%% uplift", *v.Uplift)
	} else if v.IsControl {
		s += " (control)"
	}
	if a.StatsEngine == string(stats.EngineBayesian) {
		// The Bayesian engine speaks of chances, not confidence; the
		// control has no chance of its own against itself.
		if v.Bayesian != nil {
			s += ", " + prob(v.Bayesian.ChanceToBeatControl) + " chance to beat control"
		}
		return s
	}
	// A confidence is only a claim once the test is significant; below
	// that, (1 − p) reads as weak evidence ("7.4% confidence" at p = 0.93)
	// where there is none.
	switch c := a.ConfidenceLevel; {
	case !a.StatisticalSignificance || c == nil:
		s += ", no clear difference yet"
	case *c > 99.9:
		s += ", > 99.9% confidence"
	default:
		s += fmt.Sprintf(", %.1f%% confidence", *c)
	}
	return s
}

// namespaceBar draws, as the charts are drawn (see charts.go), a namespace
// from 0 to 1: the ranges its active and
// paused campaigns hold, in their colours with their names on hover, and
// the free ranges left pale.
func namespaceBar(ns store.NamespaceUsage) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="ns-bar" viewBox="0 0 1000 24" preserveAspectRatio="none" width="100%%" height="24" role="img" aria-label="%s: %s free">`,
		html.EscapeString(ns.ID), share(ns.Free))
	for _, r := range ns.FreeRanges {
		fmt.Fprintf(&b, `<rect x="%.1f" width="%.1f" height="24" fill="#eef2f6"><title>free: %s – %s</title></rect>`,
			r[0]*1000, (r[1]-r[0])*1000, exact(r[0]), exact(r[1]))
	}
	for i, c := range ns.Campaigns {
		if c.Status != store.CampaignActive && c.Status != store.CampaignPaused {
			continue
		}
		fmt.Fprintf(&b, `<rect x="%.1f" width="%.1f" height="24" fill="%s"><title>%s (%s): %s – %s</title></rect>`,
			c.Range[0]*1000, (c.Range[1]-c.Range[0])*1000, colour(i), html.EscapeString(c.Name), c.Status, exact(c.Range[0]), exact(c.Range[1]))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// share formats a share from 0 to 1 as a whole percentage.
func share(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }
