package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"service/rules"
	"service/store"
)

// The rule builder's choices: every operator and unit the rule engine
// knows, in the order a person reads them.
var (
	attrOperators = []string{"equals", "not_equals", "contains", "not_contains", "starts_with", "ends_with", "greater_than",
		"greater_than_or_equal", "less_than", "less_than_or_equal", "in", "not_in", "exists", "not_exists"}
	eventOperators = []string{"has_performed", "has_not_performed", "performed_within", "not_performed_within", "performed_count"}
	windowUnits    = []string{"minutes", "hours", "days", "weeks"}
	comparisons    = []string{"at_least", "at_most", "exactly"}
	valueTypes     = []string{"string", "number", "boolean"}
)

// ruleRow is one rule as the builder's inputs hold it. Inputs are named
// rules[i].field and so on; the store reports errors under
// definition.rules[i].field, which Path gives.
type ruleRow struct {
	Index       int
	Type        string // attribute or event
	Field       string
	Operator    string
	Value       string // comma-separated for in and not_in
	ValueType   string
	EventID     string
	WindowValue string
	WindowUnit  string
	Count       string
	Comparison  string
}

// Name is the input name prefix of the rule.
func (r ruleRow) Name() string { return fmt.Sprintf("rules[%d]", r.Index) }

// Path is the rule's path in the store's field errors.
func (r ruleRow) Path() string { return "definition." + r.Name() }

// Summary is the rule in words, for the check result.
func (r ruleRow) Summary() string {
	if r.Type == "event" {
		s := r.EventID + " " + strings.ReplaceAll(strings.TrimSuffix(r.Operator, "_within"), "_", " ")
		if r.Operator == "performed_count" {
			times := " times"
			if typedOne(r.Count) {
				times = " time"
			}
			s += " " + strings.ReplaceAll(r.Comparison, "_", " ") + " " + r.Count + times
		}
		if r.WindowValue != "" && r.Operator != "has_performed" && r.Operator != "has_not_performed" {
			unit := r.WindowUnit // minutes, hours, days or weeks
			if typedOne(r.WindowValue) {
				unit = strings.TrimSuffix(unit, "s")
			}
			s += " within the last " + r.WindowValue + " " + unit
		}
		return s
	}
	s := r.Field + " " + strings.ReplaceAll(r.Operator, "_", " ")
	if r.Operator != "exists" && r.Operator != "not_exists" {
		s += " " + r.Value
	}
	return s
}

// rowsFromDefinition turns a stored definition into builder rows.
func rowsFromDefinition(raw json.RawMessage) (string, []ruleRow) {
	var def struct {
		Logic string           `json:"logic"`
		Rules []map[string]any `json:"rules"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&def)
	logic := def.Logic
	if logic == "" {
		logic = "AND"
	}
	var out []ruleRow
	for i, r := range def.Rules {
		row := ruleRow{Index: i, Type: "attribute", ValueType: "string", WindowUnit: "days", Comparison: "at_least"}
		str := func(k string) string { s, _ := r[k].(string); return s }
		row.Operator = str("operator")
		if str("ruleType") == "event" {
			row.Type, row.EventID = "event", str("eventId")
			if tw, ok := r["timeWindow"].(map[string]any); ok {
				row.WindowValue = fmt.Sprint(tw["value"])
				row.WindowUnit, _ = tw["unit"].(string)
			}
			if c, ok := r["count"]; ok {
				row.Count = fmt.Sprint(c)
			}
			if c := str("comparison"); c != "" {
				row.Comparison = c
			}
		} else {
			row.Field = str("field")
			vals := []any{r["value"]}
			if list, ok := r["value"].([]any); ok {
				vals = list
			}
			var parts []string
			for _, v := range vals {
				switch x := v.(type) {
				case json.Number:
					row.ValueType = "number"
					parts = append(parts, x.String())
				case bool:
					row.ValueType = "boolean"
					parts = append(parts, strconv.FormatBool(x))
				case string:
					parts = append(parts, x)
				}
			}
			row.Value = strings.Join(parts, ", ")
		}
		out = append(out, row)
	}
	return logic, out
}

func readRules(f map[string][]string) []ruleRow {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var out []ruleRow
	for i := 0; i < rules.MaxRules; i++ {
		p := fmt.Sprintf("rules[%d]", i)
		if _, ok := f[p+".ruleType"]; !ok {
			break
		}
		out = append(out, ruleRow{Index: i, Type: get(p + ".ruleType"), Field: strings.TrimSpace(get(p + ".field")), Operator: get(p + ".operator"),
			Value: get(p + ".value"), ValueType: get(p + ".valueType"), EventID: strings.TrimSpace(get(p + ".eventId")),
			WindowValue: strings.TrimSpace(get(p + ".timeWindow.value")), WindowUnit: get(p + ".timeWindow.unit"),
			Count: strings.TrimSpace(get(p + ".count")), Comparison: get(p + ".comparison")})
	}
	return out
}

// typed reads one attribute value as its chosen type.
func typed(s, kind string) (any, bool) {
	s = strings.TrimSpace(s)
	switch kind {
	case "number":
		n, ok := jsonNumber(s)
		return n, ok
	case "boolean":
		b, err := strconv.ParseBool(s)
		return b, err == nil
	}
	return s, true
}

// numberOrText keeps a number the person typed as a JSON number, and
// anything else as text, so the rule engine's own message explains it.
func numberOrText(s string) any {
	if n, ok := jsonNumber(s); ok {
		return n
	}
	return s
}

// jsonNumber reads a number as a person types it (".5", "+5", "007") into
// the JSON number it means; NaN and infinities are not numbers here.
func jsonNumber(s string) (json.Number, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
}

// definition builds the JSON definition from the rows. Inputs that mean
// nothing for a rule's operator (a time window on has_performed) are left
// out rather than sent, since the engine refuses them. What only the form
// can get wrong (a number that is not one) goes into errs.
func definition(logic string, rows []ruleRow, errs map[string]string) json.RawMessage {
	list := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		m := map[string]any{}
		if r.Operator != "" {
			m["operator"] = r.Operator
		}
		if r.Type == "event" {
			m["ruleType"] = "event"
			if r.EventID != "" {
				m["eventId"] = r.EventID
			}
			window := r.Operator == "performed_within" || r.Operator == "not_performed_within" ||
				(r.Operator == "performed_count" && r.WindowValue != "")
			if window {
				tw := map[string]any{"unit": r.WindowUnit}
				if r.WindowValue != "" {
					tw["value"] = numberOrText(r.WindowValue)
				}
				m["timeWindow"] = tw
			}
			if r.Operator == "performed_count" {
				if r.Count != "" {
					m["count"] = numberOrText(r.Count)
				}
				m["comparison"] = r.Comparison
			}
		} else {
			m["ruleType"] = "attribute"
			if r.Field != "" {
				m["field"] = r.Field
			}
			switch r.Operator {
			case "exists", "not_exists":
			case "in", "not_in":
				vals := []any{}
				for _, part := range strings.Split(r.Value, ",") {
					if strings.TrimSpace(part) == "" {
						continue
					}
					v, ok := typed(part, r.ValueType)
					if !ok {
						errs[r.Path()+".value"] = "“" + strings.TrimSpace(part) + "” is not a " + r.ValueType
					}
					vals = append(vals, v)
				}
				m["value"] = vals
			default:
				v, ok := typed(r.Value, r.ValueType)
				if !ok {
					errs[r.Path()+".value"] = "must be a " + r.ValueType
				}
				m["value"] = v
			}
		}
		list = append(list, m)
	}
	b, err := json.Marshal(map[string]any{"logic": logic, "rules": list})
	if err != nil {
		// Every value above is a string, bool or checked number; should one
		// slip through, say so rather than send no definition.
		errs["definition"] = "could not be built: " + err.Error()
	}
	return b
}

// ruleAction adds or removes a rule row.
func ruleAction(rows []ruleRow, action string) []ruleRow {
	switch {
	case action == "addattr" && len(rows) < rules.MaxRules:
		rows = append(rows, ruleRow{Type: "attribute", Operator: "equals", ValueType: "string", WindowUnit: "days", Comparison: "at_least"})
	case action == "addevent" && len(rows) < rules.MaxRules:
		rows = append(rows, ruleRow{Type: "event", Operator: "performed_within", WindowValue: "7", WindowUnit: "days", ValueType: "string", Comparison: "at_least"})
	case strings.HasPrefix(action, "removerule:"):
		i, err := strconv.Atoi(strings.TrimPrefix(action, "removerule:"))
		if err == nil && i >= 0 && i < len(rows) {
			rows = slices.Delete(rows, i, i+1)
		}
	}
	for i := range rows {
		rows[i].Index = i
	}
	return rows
}

type audienceCheckView struct {
	UserID string
	Result *store.AudienceCheck
	Failed int // index of the first rule that does not hold, or -1
}

type audienceData struct {
	Audience    *store.Audience // nil while creating
	Name        string
	Description string
	Logic       string
	Rules       []ruleRow
	Campaigns   []store.CampaignRef
	Check       *audienceCheckView
	Dirty       bool

	AttrOps, EventOps, Units, Comparisons, ValueTypes []string
}

// Held reports whether rule i held in the last check.
func (d *audienceData) Held(i int) bool {
	return d.Check != nil && d.Check.Result != nil && i < len(d.Check.Result.Rules) && d.Check.Result.Rules[i]
}

func (d *Dashboard) audienceView(r *req, a *store.Audience, name, desc, logic string, rows []ruleRow) (*view, error) {
	title := "New audience"
	if a != nil {
		title = a.Name
	}
	v := d.page(r, "audiences", title)
	if a != nil {
		d.history(r, v, store.ObjectAudience, a.ID)
	}
	data := &audienceData{Audience: a, Name: name, Description: desc, Logic: logic, Rules: rows,
		AttrOps: attrOperators, EventOps: eventOperators, Units: windowUnits, Comparisons: comparisons, ValueTypes: valueTypes}
	if a != nil {
		used, err := d.DB.CampaignsUsingAudience(r.Context(), r.App.ID, a.ID)
		if err != nil {
			return nil, err
		}
		data.Campaigns = used
	}
	v.Data = data
	return v, nil
}

func (d *Dashboard) appAudience(r *req) (*store.Audience, error) {
	id, ok := pathID(r, "id")
	if !ok {
		return nil, store.Errorf(store.ENOTFOUND, "audience not found")
	}
	return d.DB.FindAudienceByID(r.Context(), r.App.ID, id)
}

type audienceListData struct {
	List     []*store.Audience
	Status   string
	Statuses []string
	Pager    pager
}

func (d *Dashboard) handleAudienceList(w http.ResponseWriter, r *req) {
	status := r.URL.Query().Get("status")
	if status != store.AudienceActive && status != store.AudienceArchived {
		status = ""
	}
	o := listOptions(r, 20)
	list, p, err := d.DB.FindAudiences(r.Context(), r.App.ID, status, o)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := d.page(r, "audiences", "Audiences")
	v.Data = audienceListData{List: list, Status: status, Statuses: []string{store.AudienceActive, store.AudienceArchived}, Pager: newPager(r, o, p, len(list))}
	d.render(w, r.Request, http.StatusOK, "audience_list", v)
}

func (d *Dashboard) handleAudienceNew(w http.ResponseWriter, r *req) {
	v, err := d.audienceView(r, nil, "", "", "AND", ruleAction(nil, "addattr"))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "audience_edit", v)
}

func (d *Dashboard) handleAudience(w http.ResponseWriter, r *req) {
	_, v, err := d.storedAudienceView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "audience_edit", v)
}

// storedAudienceView is the editor's view of the audience in the path, as
// stored.
func (d *Dashboard) storedAudienceView(r *req) (*store.Audience, *view, error) {
	a, err := d.appAudience(r)
	if err != nil {
		return nil, nil, err
	}
	logic, rows := rowsFromDefinition(a.Definition)
	v, err := d.audienceView(r, a, a.Name, a.Description, logic, rows)
	return a, v, err
}

func (d *Dashboard) handleAudienceCreate(w http.ResponseWriter, r *req) { d.saveAudience(w, r, nil) }

func (d *Dashboard) handleAudienceSave(w http.ResponseWriter, r *req) {
	a, err := d.appAudience(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.saveAudience(w, r, a)
}

func (d *Dashboard) saveAudience(w http.ResponseWriter, r *req, a *store.Audience) {
	name, desc, logic := r.PostFormValue("name"), r.PostFormValue("description"), r.PostFormValue("logic")
	rows := readRules(r.PostForm)
	action := r.PostFormValue("action")
	if action != "" && action != "save" {
		rows = ruleAction(rows, action)
	}
	v, err := d.audienceView(r, a, name, desc, logic, rows)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Data.(*audienceData).Dirty = true
	if action != "" && action != "save" {
		d.render(w, r.Request, http.StatusOK, "audience_edit", v)
		return
	}
	def := definition(logic, rows, v.Errors)
	if len(v.Errors) > 0 {
		v.Error = "Please correct the rules marked below."
		d.render(w, r.Request, http.StatusUnprocessableEntity, "audience_edit", v)
		return
	}
	in := store.AudienceInput{Name: &name, Description: &desc, Definition: def}
	var saved *store.Audience
	if a == nil {
		saved, err = d.DB.CreateAudience(r.Context(), r.App.ID, in)
	} else {
		saved, err = d.DB.UpdateAudience(r.Context(), r.App.ID, a.ID, in)
	}
	if err != nil {
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "audience_edit", v)
		return
	}
	// As the API does: a saved definition is counted at once.
	if _, err := d.DB.RecountAudience(r.Context(), r.App.ID, saved.ID); err != nil {
		d.Log.Error("recount audience", "audience", saved.ID, "err", err)
	}
	notice := "audience_saved"
	if a == nil {
		notice = "audience_created"
	}
	redirect(w, r, fmt.Sprintf("/apps/%d/audiences/%d", r.App.ID, saved.ID), notice)
}

// handleAudienceCheck answers "Check a user": whether a userId matches
// now and, rule by rule, why.
func (d *Dashboard) handleAudienceCheck(w http.ResponseWriter, r *req) {
	a, v, err := d.storedAudienceView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data := v.Data.(*audienceData)
	user := strings.TrimSpace(r.URL.Query().Get("userId"))
	data.Check = &audienceCheckView{UserID: user, Failed: -1}
	res, err := d.DB.ExplainUserInAudience(r.Context(), r.App.ID, a.ID, user)
	if err != nil {
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		v.Error = ""
		d.render(w, r.Request, http.StatusUnprocessableEntity, "audience_edit", v)
		return
	}
	data.Check.Result, data.Check.Failed = res, res.FirstFailed()
	d.render(w, r.Request, http.StatusOK, "audience_edit", v)
}

func (d *Dashboard) handleAudienceRecount(w http.ResponseWriter, r *req) {
	a, err := d.appAudience(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if _, err := d.DB.RecountAudience(r.Context(), r.App.ID, a.ID); err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, fmt.Sprintf("/apps/%d/audiences/%d", r.App.ID, a.ID), "audience_recounted")
}

func (d *Dashboard) handleAudienceStatus(w http.ResponseWriter, r *req) {
	a, err := d.appAudience(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	status := r.PostFormValue("status")
	if _, err := d.DB.UpdateAudience(r.Context(), r.App.ID, a.ID, store.AudienceInput{Status: &status}); err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, fmt.Sprintf("/apps/%d/audiences/%d", r.App.ID, a.ID), "audience_"+status)
}
