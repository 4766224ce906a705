package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/storetest"
	"service/store"
)

// TestRetentionPerApp runs one retention pass over apps that keep their
// events and form submissions for different times: each app loses exactly
// what is older than its own limit, the server's --retention where it
// sets none (forms: nothing), whether its limit is shorter or longer than
// the server's, and a limit set back to null follows the server again.
func TestRetentionPerApp(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.DB(t, filepath.Join(t.TempDir(), "retention-apps.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var clock atomic.Int64
	set := func(at time.Time) { clock.Store(at.UnixMilli()) }
	db.Now = func() time.Time { return time.UnixMilli(clock.Load()).UTC() }
	const day = 24 * time.Hour
	const keep = 90 * day // the server's --retention
	now := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	set(now)

	type app struct {
		name         string
		events, form *int
		id, content  int64
	}
	days := func(n int) *int { return &n }
	apps := []*app{
		{name: "server"}, // follows --retention; forms kept
		{name: "short", events: days(7), form: days(30)},    // shorter than the server's
		{name: "long", events: days(365), form: days(3650)}, // longer than the server's
		{name: "one", events: days(1), form: days(1)},       // the least
	}
	pub := store.ContentPublished
	for _, a := range apps {
		created, err := db.CreateApp(ctx, a.name, "enterprise", 0)
		if err != nil {
			t.Fatal(err)
		}
		a.id = created.ID
		if _, err := db.UpdateApp(ctx, a.id, store.AppUpdate{EventRetention: &store.RetentionChange{Days: a.events},
			FormRetention: &store.RetentionChange{Days: a.form}}); err != nil {
			t.Fatal(err)
		}
		name := "Signup"
		c, err := db.CreateContent(ctx, a.id, store.ContentInput{Name: &name, Status: &pub,
			Items: json.RawMessage(`[{"type":"form","fields":[{"name":"email","type":"text"}]}]`)})
		if err != nil {
			t.Fatal(err)
		}
		a.content = c.ID
	}
	// Every app gets an event and a submission at each of these ages, a
	// millisecond either side of each limit in play.
	ages := map[string]time.Duration{}
	for _, d := range []time.Duration{day, 7 * day, 30 * day, keep, 365 * day, 3650 * day} {
		ages[fmt.Sprintf("%dd+1ms", d/day)] = d + time.Millisecond
		ages[fmt.Sprintf("%dd", d/day)] = d // exactly at the limit: kept
		ages[fmt.Sprintf("%dd-1ms", d/day)] = d - time.Millisecond
	}
	for _, a := range apps {
		for label, age := range ages {
			set(now.Add(-age))
			user := "u-" + label
			if _, err := db.LogEvent(ctx, a.id, &store.EventInput{EventID: label, UserID: user}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SubmitForm(ctx, a.id, store.FormSubmissionInput{ContentViewID: &a.content, UserID: &user,
				Data: json.RawMessage(fmt.Sprintf(`{"email":%q}`, label))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	set(now)

	// kept lists the ages an app still holds, of events and of forms.
	kept := func(a *app) (events, forms string) {
		t.Helper()
		evs, err := db.FindEvents(ctx, a.id, store.EventFilter{Limit: store.MaxEventsLimit})
		if err != nil {
			t.Fatal(err)
		}
		var e []string
		for _, ev := range evs {
			e = append(e, ev.EventID)
		}
		subs, _, err := db.FindFormSubmissions(ctx, a.id, 0, store.ListOptions{Limit: 100, Page: 1})
		if err != nil {
			t.Fatal(err)
		}
		var f []string
		for _, s := range subs {
			var d struct{ Email string }
			if err := json.Unmarshal(s.Data, &d); err != nil {
				t.Fatal(err)
			}
			f = append(f, d.Email)
		}
		return sortedAges(e), sortedAges(f)
	}
	// within lists the ages not older than limit (every one for nil).
	within := func(limit *int, server time.Duration) string {
		var out []string
		for label, age := range ages {
			if (limit == nil && server == 0) || (limit != nil && age <= time.Duration(*limit)*day) || (limit == nil && age <= server) {
				out = append(out, label)
			}
		}
		return sortedAges(out)
	}

	r := &Retention{DB: db, Keep: keep, Interval: time.Hour, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	r.pass(ctx)
	for _, a := range apps {
		events, forms := kept(a)
		if want := within(a.events, keep); events != want {
			t.Errorf("%s: events kept %s, want %s", a.name, events, want)
		}
		if want := within(a.form, 0); forms != want {
			t.Errorf("%s: form submissions kept %s, want %s", a.name, forms, want)
		}
	}

	// Back to null: the long app follows the server's 90 days again, and
	// keeps its form submissions from now on.
	long := apps[2]
	if _, err := db.UpdateApp(ctx, long.id, store.AppUpdate{EventRetention: &store.RetentionChange{}, FormRetention: &store.RetentionChange{}}); err != nil {
		t.Fatal(err)
	}
	set(now.Add(day))
	r.pass(ctx)
	events, forms := kept(long)
	var wantEvents []string
	for label, age := range ages {
		if age+day <= keep {
			wantEvents = append(wantEvents, label)
		}
	}
	if want := sortedAges(wantEvents); events != want {
		t.Errorf("long after null: events kept %s, want %s", events, want)
	}
	if want := within(days(3650), 0); forms != want {
		t.Errorf("long after null: form submissions kept %s, want %s (as before)", forms, want)
	}
}

func sortedAges(list []string) string {
	sort.Strings(list)
	return strings.Join(list, " ")
}
