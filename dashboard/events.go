package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"service/store"
)

// eventsPage is how many events the explorer shows at once.
const eventsPage = 50

type eventsData struct {
	EventID, UserID, From, To string
	List                      []*store.Event
	Counts                    []store.EventCount
	Newer, Older              string
}

// dayBounds reads the explorer's date inputs (UTC calendar days): from is
// the start of its day, to the end of its day.
func dayBounds(from, to string, errs map[string]string) (*time.Time, *time.Time) {
	var start, end *time.Time
	if from != "" {
		t, err := time.Parse(time.DateOnly, from)
		if err != nil {
			errs["from"] = "must be a date like 2025-03-10"
		} else {
			start = &t
		}
	}
	if to != "" {
		t, err := time.Parse(time.DateOnly, to)
		if err != nil {
			errs["to"] = "must be a date like 2025-03-10"
		} else {
			t = t.Add(24*time.Hour - time.Millisecond)
			end = &t
		}
	}
	if start != nil && end != nil && end.Before(*start) {
		errs["to"] = "must not be before the first day"
	}
	return start, end
}

// handleEvents is the event explorer: filters by event id, user and days,
// newest first, and pages with before=<id of the last event shown>.
func (d *Dashboard) handleEvents(w http.ResponseWriter, r *req) {
	q := r.URL.Query()
	data := &eventsData{EventID: strings.TrimSpace(q.Get("eventId")), UserID: strings.TrimSpace(q.Get("userId")),
		From: q.Get("from"), To: q.Get("to")}
	v := d.page(r, "events", "Events")
	v.Data = data
	start, end := dayBounds(data.From, data.To, v.Errors)
	f := store.EventFilter{EventID: data.EventID, UserID: data.UserID, Start: start, End: end, Limit: eventsPage + 1}
	if b := q.Get("before"); b != "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 1 {
			v.Errors["before"] = "must be an event id"
		}
		f.Before = n
	}
	status := http.StatusOK
	if len(v.Errors) > 0 {
		v.Error = "Please correct the filters marked below."
		status = http.StatusUnprocessableEntity
	} else {
		list, err := d.DB.FindEvents(r.Context(), r.App.ID, f)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		if len(list) > eventsPage {
			list = list[:eventsPage]
			next := url.Values{}
			for _, k := range []string{"eventId", "userId", "from", "to"} {
				if s := q.Get(k); s != "" {
					next.Set(k, s)
				}
			}
			next.Set("before", strconv.FormatInt(list[len(list)-1].ID, 10))
			data.Older = r.URL.Path + "?" + next.Encode()
		}
		if f.Before > 0 {
			first := url.Values{}
			for _, k := range []string{"eventId", "userId", "from", "to"} {
				if s := q.Get(k); s != "" {
					first.Set(k, s)
				}
			}
			data.Newer = r.URL.Path + "?" + first.Encode()
		}
		data.List = list
	}
	counts, err := d.DB.EventCounts(r.Context(), r.App.ID, d.Now())
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data.Counts = counts
	d.render(w, r.Request, status, "events", v)
}

type userData struct {
	UserID      string
	Profile     *store.UserProfile
	Assignments []store.UserAssignment
	Events      []*store.Event
	Older       string
	// Confirm is what was typed to confirm an erasure that did not match.
	Confirm string
}

// handleUser is the People page: one user's profile attributes, the
// campaigns they were assigned in, and their events, newest first, with
// an admin's Export and Erase of everything stored about them. The userId
// is a query parameter because it may hold any character, slashes
// included.
func (d *Dashboard) handleUser(w http.ResponseWriter, r *req) {
	d.renderUser(w, r, r.URL.Query().Get("userId"), "", "")
}

// renderUser renders the People page for user; refusal, when set, is an
// erasure refused, with what was typed to confirm it.
func (d *Dashboard) renderUser(w http.ResponseWriter, r *req, user, refusal, confirm string) {
	q := r.URL.Query()
	v := d.page(r, "people", "People")
	data := &userData{UserID: user, Confirm: confirm}
	v.Data = data
	if user == "" {
		d.render(w, r.Request, http.StatusOK, "user", v)
		return
	}
	v.Title = "People · " + user
	p, err := d.DB.FindUserByID(r.Context(), r.App.ID, user)
	switch {
	case store.ErrorCode(err) == store.ENOTFOUND:
		v.Error = "This app has never seen this userId."
		d.render(w, r.Request, http.StatusNotFound, "user", v)
		return
	case store.ErrorCode(err) == store.EINVALID:
		v.Error = err.Error()
		d.render(w, r.Request, http.StatusUnprocessableEntity, "user", v)
		return
	case err != nil:
		d.fail(w, r, err)
		return
	}
	data.Profile = p
	if data.Assignments, err = d.DB.FindUserAssignments(r.Context(), r.App.ID, user); err != nil {
		d.fail(w, r, err)
		return
	}
	f := store.EventFilter{UserID: user, Limit: eventsPage + 1}
	if b, err := strconv.ParseInt(q.Get("before"), 10, 64); err == nil && b > 0 {
		f.Before = b
	}
	list, err := d.DB.FindEvents(r.Context(), r.App.ID, f)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if len(list) > eventsPage {
		list = list[:eventsPage]
		data.Older = fmt.Sprintf("%s?userId=%s&before=%d", r.URL.Path, url.QueryEscape(user), list[len(list)-1].ID)
	}
	data.Events = list
	status := http.StatusOK
	if refusal != "" {
		v.Errors["confirm"] = refusal
		status = http.StatusUnprocessableEntity
	}
	d.render(w, r.Request, status, "user", v)
}

// handleUserErase erases everything stored about one user of the app (a
// data subject's request; see store.EraseUser), once the userId was typed
// again: the id in the form comes from the page, and a second typing is
// what says the admin meant this person.
func (d *Dashboard) handleUserErase(w http.ResponseWriter, r *req) {
	user, confirm := r.PostFormValue("userId"), r.PostFormValue("confirm")
	if user == "" || confirm != user {
		d.renderUser(w, r, user, "Type the userId exactly as shown to erase this user.", confirm)
		return
	}
	if _, err := d.DB.EraseUser(r.Context(), r.App.ID, user); err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, "/apps/"+strconv.FormatInt(r.App.ID, 10)+"/users", "user_erased")
}

// handleUserExport downloads everything stored about one user of the app
// as one JSON document, streamed from the database as it is read.
func (d *Dashboard) handleUserExport(w http.ResponseWriter, r *req) {
	user := r.URL.Query().Get("userId")
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(exportTimeout))
	started := false
	out := writerFunc(func(b []byte) (int, error) {
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="app-%d-user-export.json"`, r.App.ID))
		}
		n, err := w.Write(b)
		if f, ok := w.(http.Flusher); ok && err == nil {
			f.Flush()
		}
		return n, err
	})
	err := d.DB.ExportUser(r.Context(), r.App.ID, user, out)
	switch {
	case err == nil:
	case !started:
		d.fail(w, r, err)
	default:
		// The status is sent: cut the connection, so the download fails
		// visibly instead of ending like a whole file.
		d.Log.Error("user export", "app", r.App.ID, "err", err)
		panic(http.ErrAbortHandler)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

type settingsData struct {
	Origins   string
	Plan      string
	RateLimit string // empty: the plan's limit
	Plans     []string
	// Days the app keeps its events and form submissions; empty follows
	// the server (its --retention for events, forever for forms).
	EventRetention, FormRetention string
}

// settingsOf is what the settings form shows for app: its rate limit only
// when it is not the plan's, so that changing the plan takes the new
// plan's limit unless one is set.
func settingsOf(app *store.App, origins string) settingsData {
	s := settingsData{Origins: origins, Plan: app.Plan, Plans: plans}
	if app.RateLimit != store.PlanLimit(app.Plan) {
		s.RateLimit = strconv.Itoa(app.RateLimit)
	}
	return s
}

func (d *Dashboard) handleSettings(w http.ResponseWriter, r *req) {
	a, err := d.DB.FindAppSettings(r.Context(), r.App.ID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := d.page(r, "settings", "Settings")
	data := settingsOf(r.App, strings.Join(a.AllowedOrigins, "\n"))
	data.EventRetention, data.FormRetention = daysText(a.EventRetentionDays), daysText(a.FormRetentionDays)
	v.Data = data
	d.render(w, r.Request, http.StatusOK, "settings", v)
}

// daysText is a retention as the settings form shows it: empty for the
// server's.
func daysText(days *int) string {
	if days == nil {
		return ""
	}
	return strconv.Itoa(*days)
}

// handleSettingsSave sets the app's plan, rate limit, allowed CORS
// origins and retentions in one change. Origins are one a line, or
// separated by commas; "*" allows any. An empty retention follows the
// server's. A form without the plan, the rate limit or a retention leaves
// it.
func (d *Dashboard) handleSettingsSave(w http.ResponseWriter, r *req) {
	raw := r.PostFormValue("allowedOrigins")
	v := d.page(r, "settings", "Settings")
	data := settingsOf(r.App, raw)
	v.Data = &data
	var upd store.AppUpdate
	list, err := store.ParseAllowedOrigins(strings.NewReplacer("\r\n", ",", "\n", ",").Replace(raw))
	if err == nil {
		upd.AllowedOrigins = &list
	} else if !formErrors(v, err) {
		d.fail(w, r, err)
		return
	}
	if _, ok := r.PostForm["plan"]; ok {
		data.Plan = r.PostFormValue("plan")
		upd.Plan = &data.Plan
	}
	if _, ok := r.PostForm["rateLimit"]; ok {
		data.RateLimit = strings.TrimSpace(r.PostFormValue("rateLimit"))
		n := 0
		if data.RateLimit != "" {
			var err error
			if n, err = strconv.Atoi(data.RateLimit); err != nil || n < 1 {
				v.Errors["rateLimit"] = "must be a whole number of requests per minute, at least 1"
			}
		}
		upd.RateLimit = &n
	}
	for _, f := range []struct {
		name string
		text *string
		upd  **store.RetentionChange
	}{{"eventRetentionDays", &data.EventRetention, &upd.EventRetention}, {"formRetentionDays", &data.FormRetention, &upd.FormRetention}} {
		if _, ok := r.PostForm[f.name]; !ok {
			continue
		}
		*f.text = strings.TrimSpace(r.PostFormValue(f.name))
		c, err := store.ParseRetentionDays(f.name, *f.text)
		if err != nil {
			v.Errors[f.name] = fmt.Sprintf("must be a whole number of days from 1 to %d, or empty", store.MaxRetentionDays)
			continue
		}
		*f.upd = c
	}
	if len(v.Errors) == 0 {
		_, err = d.DB.UpdateApp(r.Context(), r.App.ID, upd)
		if err != nil && !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
	}
	if len(v.Errors) > 0 || v.Error != "" {
		if v.Error == "" {
			v.Error = "Please correct the fields marked below."
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "settings", v)
		return
	}
	redirect(w, r, fmt.Sprintf("/apps/%d/settings", r.App.ID), "settings_saved")
}
