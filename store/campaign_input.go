package store

// What a campaign create or update may say, and the checks it passes
// before anything is written: field rules, dates read in the campaign's
// timezone, variants, references to blocks and audiences, and which fields
// each state lets a PATCH change. The campaign resource is in campaigns.go,
// its state machine in moves.go.

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"service/stats"
)

// CampaignInput is a create or a partial update. AudienceID is raw so that
// an explicit null (target everyone) differs from leaving it out.
type CampaignInput struct {
	Name           *string         `json:"name"`
	Key            *string         `json:"key"`
	Description    *string         `json:"description"`
	Status         *string         `json:"status"`
	StartDate      json.RawMessage `json:"startDate"`
	EndDate        json.RawMessage `json:"endDate"`
	Timezone       *string         `json:"timezone"`
	GoalEventID    json.RawMessage `json:"goalEventId"`
	AudienceID     json.RawMessage `json:"audienceId"`
	AssignmentType *string         `json:"assignmentType"`
	StatsEngine    *string         `json:"statsEngine"`
	// Namespace is raw so that an explicit null (no namespace) differs
	// from leaving it out.
	Namespace         json.RawMessage `json:"namespace"`
	CupedLookbackDays json.RawMessage `json:"cupedLookbackDays"`
	Variants          *[]VariantInput `json:"variants"`
	// Metrics is raw so that its shape is checked field by field, and an
	// explicit null (no metrics) differs from leaving it out.
	Metrics json.RawMessage `json:"metrics"`
	// GuardrailAction: GuardrailAlert or GuardrailPause.
	GuardrailAction *string `json:"guardrailAction"`
}

// VariantInput is one variant of a create or a draft's update.
type VariantInput struct {
	Name              *string  `json:"name"`
	ContentViewID     *int64   `json:"contentViewId"`
	TrafficAllocation *float64 `json:"trafficAllocation"`
	IsControl         *bool    `json:"isControl"`
}

// parseDate reads a campaign date: any RFC 3339 timestamp, or a date and
// time without offset (or a bare date) read in the campaign's timezone.
func parseDate(raw json.RawMessage, loc *time.Location) (*time.Time, bool, error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	if string(raw) == "null" {
		return nil, true, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, true, errors.New("must be an ISO 8601 timestamp string")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
			if t, err = time.ParseInLocation(layout, s, loc); err == nil {
				break
			}
		}
	}
	if err != nil {
		return nil, true, errors.New("must be an ISO 8601 timestamp")
	}
	// An offset can carry a date past year 9999 (or before 0000) in UTC,
	// which the API's RFC 3339 answers could not write back.
	if t = t.UTC(); t.Year() < 0 || t.Year() > 9999 {
		return nil, true, errors.New("must fall within the years 0000 to 9999 in UTC")
	}
	return &t, true, nil
}

// campaignEdit is a validated change, ready to write.
type campaignEdit struct {
	name, description *string
	key               *string
	status            *string
	start, end        *time.Time
	setStart, setEnd  bool
	timezone          *string
	goal              *string
	setGoal           bool
	audience          *int64
	setAudience       bool
	assignment        *string
	engine            *string
	variants          []VariantInput
	setVariants       bool
	namespace         *Namespace
	setNamespace      bool
	cuped             *int
	metrics           CampaignMetrics
	setMetrics        bool
	guardrailAction   *string
}

// MaxNamespaceIDLen bounds a namespace id.
const MaxNamespaceIDLen = 64

// validateNamespace reads a namespace: null for none, or an id of 1 to 64
// characters and a range [start, end] with 0 <= start < end <= 1.
func validateNamespace(raw json.RawMessage, fe FieldErrors) *Namespace {
	if string(raw) == "null" {
		return nil
	}
	var in struct {
		ID    *string         `json:"id"`
		Range json.RawMessage `json:"range"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || raw[0] != '{' {
		fe.Add("namespace", `must be an object {"id": string, "range": [start, end]}, or null`)
		return nil
	}
	ns := &Namespace{}
	ok := true
	if in.ID == nil || *in.ID == "" || tooLong(*in.ID, MaxNamespaceIDLen) {
		fe.Add("namespace.id", fmt.Sprintf("must be a string of 1 to %d characters", MaxNamespaceIDLen))
		ok = false
	} else {
		ns.ID = *in.ID
	}
	var r []float64
	if json.Unmarshal(in.Range, &r) != nil || len(r) != 2 {
		fe.Add("namespace.range", "must be two numbers [start, end]")
		ok = false
	} else if !(0 <= r[0] && r[0] < r[1] && r[1] <= 1) {
		fe.Add("namespace.range", "must satisfy 0 <= start < end <= 1")
		ok = false
	} else {
		ns.Range = [2]float64{r[0], r[1]}
	}
	if !ok {
		return nil
	}
	return ns
}

// validate checks the fields of in that can be checked without the
// database, and resolves dates in the timezone (the current one, tz, when
// the input does not change it).
func (in *CampaignInput) validate(create bool, tz string, fe FieldErrors) *campaignEdit {
	ed := &campaignEdit{name: in.Name, description: in.Description, status: in.Status, assignment: in.AssignmentType, engine: in.StatsEngine, timezone: in.Timezone}
	if create || in.Name != nil {
		if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
			fe.Add("name", "is required")
		} else if tooLong(*in.Name, MaxNameLen) {
			fe.Add("name", fmt.Sprintf("must be at most %d characters", MaxNameLen))
		} else {
			n := strings.TrimSpace(*in.Name)
			ed.name = &n
		}
	}
	if in.Key != nil {
		if !ValidCampaignKey(*in.Key) {
			fe.Add("key", campaignKeyRule)
		} else {
			ed.key = in.Key
		}
	}
	if in.Description != nil && len(*in.Description) > 5000 {
		fe.Add("description", "must be at most 5000 characters")
	}
	if in.Status != nil {
		ok := false
		for _, s := range CampaignStatuses {
			ok = ok || s == *in.Status
		}
		if !ok {
			fe.Add("status", "must be one of draft, active, paused, completed, archived")
		} else if create && *in.Status != CampaignDraft && *in.Status != CampaignActive {
			fe.Add("status", "must be draft or active on create")
		}
	}
	loc := time.UTC
	if in.Timezone != nil {
		l, err := time.LoadLocation(*in.Timezone)
		if err != nil || *in.Timezone == "" || *in.Timezone == "Local" {
			fe.Add("timezone", "must be an IANA time zone name such as Europe/Berlin")
		} else {
			loc = l
		}
	} else if l, err := time.LoadLocation(tz); err == nil {
		loc = l
	}
	var err error
	if ed.start, ed.setStart, err = parseDate(in.StartDate, loc); err != nil {
		fe.Add("startDate", err.Error())
	}
	if ed.end, ed.setEnd, err = parseDate(in.EndDate, loc); err != nil {
		fe.Add("endDate", err.Error())
	}
	if len(in.GoalEventID) > 0 {
		ed.setGoal = true
		if string(in.GoalEventID) != "null" {
			var g string
			if json.Unmarshal(in.GoalEventID, &g) != nil || strings.TrimSpace(g) == "" || tooLong(g, MaxEventIDLen) {
				fe.Add("goalEventId", fmt.Sprintf("must be a non-empty string of at most %d characters, or null", MaxEventIDLen))
			} else {
				ed.goal = &g
			}
		}
	}
	if len(in.AudienceID) > 0 {
		ed.setAudience = true
		if string(in.AudienceID) != "null" {
			var a int64
			if json.Unmarshal(in.AudienceID, &a) != nil || a < 1 {
				fe.Add("audienceId", "must be an audience id or null")
			} else {
				ed.audience = &a
			}
		}
	}
	if in.AssignmentType != nil && *in.AssignmentType != AssignWeighted && *in.AssignmentType != AssignRoundRobin {
		fe.Add("assignmentType", "must be weighted or round_robin")
	}
	if in.StatsEngine != nil && !stats.Engine(*in.StatsEngine).Valid() {
		fe.Add("statsEngine", "must be frequentist, sequential or bayesian")
	}
	if len(in.Namespace) > 0 {
		ed.setNamespace = true
		ed.namespace = validateNamespace(in.Namespace, fe)
	}
	if len(in.CupedLookbackDays) > 0 {
		var d float64
		if string(in.CupedLookbackDays) == "null" || json.Unmarshal(in.CupedLookbackDays, &d) != nil || d != math.Trunc(d) || d < 0 || d > MaxCupedLookbackDays {
			fe.Add("cupedLookbackDays", fmt.Sprintf("must be an integer from 0 to %d", MaxCupedLookbackDays))
		} else {
			days := int(d)
			ed.cuped = &days
		}
	}
	if in.GuardrailAction != nil {
		if *in.GuardrailAction != GuardrailAlert && *in.GuardrailAction != GuardrailPause {
			fe.Add("guardrailAction", "must be alert or pause")
		} else {
			ed.guardrailAction = in.GuardrailAction
		}
	}
	if len(in.Metrics) > 0 {
		ed.setMetrics = true
		ed.metrics = validateCampaignMetrics(in.Metrics, fe)
	}
	if in.Variants != nil || create {
		ed.setVariants = true
		if in.Variants == nil {
			fe.Add("variants", "is required")
		} else {
			ed.variants = validateVariants(*in.Variants, fe)
		}
	}
	return ed
}

// validateCampaignMetrics reads {"secondary": [ids], "guardrails": [ids]}
// (either list may be left out; null is no metrics): at most
// MaxCampaignMetrics ids in each, and no metric twice.
func validateCampaignMetrics(raw json.RawMessage, fe FieldErrors) CampaignMetrics {
	out := CampaignMetrics{Secondary: []int64{}, Guardrails: []int64{}}
	if string(raw) == "null" {
		return out
	}
	var in map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &in) != nil {
		fe.Add("metrics", `must be an object {"secondary": [metricIds], "guardrails": [metricIds]}`)
		return out
	}
	seen := map[int64]string{}
	for k := range in {
		if k != "secondary" && k != "guardrails" {
			fe.Add("metrics."+k, "is not a field of metrics: secondary or guardrails")
		}
	}
	for _, role := range []struct {
		name string
		dst  *[]int64
	}{{"secondary", &out.Secondary}, {"guardrails", &out.Guardrails}} {
		r, ok := in[role.name]
		if !ok || string(r) == "null" {
			continue
		}
		var ids []json.RawMessage
		if r[0] != '[' || json.Unmarshal(r, &ids) != nil {
			fe.Add("metrics."+role.name, "must be an array of metric ids")
			continue
		}
		if len(ids) > MaxCampaignMetrics {
			fe.Add("metrics."+role.name, fmt.Sprintf("must have at most %d metrics", MaxCampaignMetrics))
			continue
		}
		for i, v := range ids {
			path := fmt.Sprintf("metrics.%s[%d]", role.name, i)
			var id float64
			if json.Unmarshal(v, &id) != nil || id != math.Trunc(id) || id < 1 || id > 1<<53 {
				fe.Add(path, "must be a metric id")
				continue
			}
			if prev, dup := seen[int64(id)]; dup {
				fe.Add(path, "names a metric already listed at "+prev)
				continue
			}
			seen[int64(id)] = path
			*role.dst = append(*role.dst, int64(id))
		}
	}
	return out
}

// validateVariants checks counts, allocations and the control, and fills
// in defaults: equal split when no allocation is given, the first variant
// as control when none is marked, "Variant A", "Variant B"... as names.
func validateVariants(vs []VariantInput, fe FieldErrors) []VariantInput {
	if len(vs) < MinVariants || len(vs) > MaxVariants {
		fe.Add("variants", fmt.Sprintf("must have between %d and %d variants", MinVariants, MaxVariants))
		return nil
	}
	out := make([]VariantInput, len(vs))
	withAlloc, controls := 0, 0
	sum := 0.0
	for i, v := range vs {
		p := fmt.Sprintf("variants[%d]", i)
		if v.ContentViewID == nil {
			fe.Add(p+".contentViewId", "is required")
		} else if *v.ContentViewID < 1 {
			fe.Add(p+".contentViewId", "must be a content view id")
		}
		if v.Name != nil && (strings.TrimSpace(*v.Name) == "" || tooLong(*v.Name, MaxNameLen)) {
			fe.Add(p+".name", fmt.Sprintf("must be 1 to %d characters", MaxNameLen))
		}
		if v.TrafficAllocation != nil {
			withAlloc++
			a := *v.TrafficAllocation
			if math.IsNaN(a) || a < 0 || a > 100 {
				fe.Add(p+".trafficAllocation", "must be between 0 and 100")
			}
			sum += a
		}
		if v.IsControl != nil && *v.IsControl {
			controls++
		}
		out[i] = v
		if v.Name == nil {
			name := "Variant " + variantLetter(i)
			out[i].Name = &name
		}
	}
	switch {
	case withAlloc == 0:
		// Equal split in hundredths, the remainder on the last variant, so
		// the weights sum to exactly 100.
		each := 10000 / len(vs)
		for i := range out {
			w := each
			if i == len(out)-1 {
				w = 10000 - each*(len(vs)-1)
			}
			a := float64(w) / 100
			out[i].TrafficAllocation = &a
		}
	case withAlloc != len(vs):
		fe.Add("variants", "trafficAllocation must be given for every variant or for none")
	case math.Abs(sum-100) > 0.01:
		fe.Add("variants", fmt.Sprintf("trafficAllocation must sum to 100 (got %g)", sum))
	}
	switch {
	case controls > 1:
		fe.Add("variants", "exactly one variant may be the control")
	case controls == 0:
		t := true
		out[0].IsControl = &t
	}
	return out
}

func variantLetter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprint(i + 1)
}

// checkRefs checks, inside tx, that variants name live content blocks of the
// app and that the audience is an active audience of the app.
func (tx *Tx) checkRefs(appID int64, ed *campaignEdit, fe FieldErrors) error {
	for i, v := range ed.variants {
		if v.ContentViewID == nil {
			continue
		}
		var status string
		err := tx.queryRow(`SELECT status FROM content_views WHERE id = ? AND app_id = ?`, *v.ContentViewID, appID).Scan(&status)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			fe.Add(fmt.Sprintf("variants[%d].contentViewId", i), "no such content view in this app")
		case err != nil:
			return err
		case status == ContentArchived:
			fe.Add(fmt.Sprintf("variants[%d].contentViewId", i), "content view is archived")
		}
	}
	for _, role := range []struct {
		name string
		ids  []int64
	}{{"secondary", ed.metrics.Secondary}, {"guardrails", ed.metrics.Guardrails}} {
		for i, id := range role.ids {
			var one int
			err := tx.queryRow(`SELECT 1 FROM metrics WHERE id = ? AND app_id = ?`, id, appID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				fe.Add(fmt.Sprintf("metrics.%s[%d]", role.name, i), "no such metric in this app")
			} else if err != nil {
				return err
			}
		}
	}
	if ed.audience != nil {
		var status string
		err := tx.queryRow(`SELECT status FROM audiences WHERE id = ? AND app_id = ?`, *ed.audience, appID).Scan(&status)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			fe.Add("audienceId", "no such audience in this app")
		case err != nil:
			return err
		case status != "active":
			fe.Add("audienceId", "audience is archived")
		}
	}
	return nil
}

// refusedField names the first field of ed that the state does not let a
// PATCH change, or "" when all may change.
func refusedField(status string, ed *campaignEdit) string {
	if status == CampaignDraft {
		return ""
	}
	// Fields in the order they are reported; endDate may still move later
	// while the campaign runs, but not once it is over. statsEngine is an
	// analysis setting like goalEventId: choosing the engine after seeing
	// the data would let anyone pick whichever one declares a winner.
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"variants", ed.setVariants},
		// Code and OpenFeature providers ask for the campaign by its key:
		// renaming it under running users would send them the default.
		{"key", ed.key != nil},
		{"goalEventId", ed.setGoal},
		{"audienceId", ed.setAudience},
		{"assignmentType", ed.assignment != nil},
		{"statsEngine", ed.engine != nil},
		// A range that moved under running users would reassign them, and
		// CUPED's covariates are counted as users are assigned.
		{"namespace", ed.setNamespace},
		{"cupedLookbackDays", ed.cuped != nil},
		// The metrics are analysis settings like the goal: picking them
		// after seeing the data would let anyone pick a winner.
		{"metrics", ed.setMetrics},
		// Set with the guardrails, before anyone has seen them regress.
		{"guardrailAction", ed.guardrailAction != nil},
		{"startDate", ed.setStart},
		{"endDate", ed.setEnd && status != CampaignActive && status != CampaignPaused},
		{"timezone", ed.timezone != nil},
	} {
		if f.set {
			return f.name
		}
	}
	return ""
}
