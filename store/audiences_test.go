package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// audienceT0 is when audience tests start.
var audienceT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func mustCreateAudience(tb testing.TB, db *DB, appID int64, def string) *Audience {
	tb.Helper()
	name := "aud"
	a, err := db.CreateAudience(context.Background(), appID, AudienceInput{Name: &name, Definition: json.RawMessage(def)})
	if err != nil {
		tb.Fatalf("create audience %s: %v", def, err)
	}
	return a
}

func mustTouchUser(tb testing.TB, db *DB, appID int64, userID string, attrs map[string]any) {
	tb.Helper()
	if err := db.withTx(context.Background(), func(tx *Tx) error { return tx.touchUser(appID, userID, attrs) }); err != nil {
		tb.Fatalf("touchUser %s: %v", userID, err)
	}
}

func mustInsertEvent(tb testing.TB, db *DB, appID int64, userID, eventID string, at time.Time) {
	tb.Helper()
	if _, err := db.write.Exec(`INSERT INTO events (app_id, event_id, user_id, ts) VALUES (?, ?, ?, ?)`, appID, eventID, userID, ms(at)); err != nil {
		tb.Fatal(err)
	}
	// A row written around the store is indexed as a restart would.
	if err := db.indexAll(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

func inAudience(tb testing.TB, db *DB, appID, audienceID int64, userID string) bool {
	tb.Helper()
	var in bool
	err := db.withTx(context.Background(), func(tx *Tx) error {
		var err error
		in, err = tx.userInAudience(appID, audienceID, userID)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return in
}

func mustProfile(tb testing.TB, db *DB, appID int64, userID string) *UserProfile {
	tb.Helper()
	p, err := db.FindUserByID(context.Background(), appID, userID)
	if err != nil {
		tb.Fatalf("find user %s: %v", userID, err)
	}
	return p
}

func TestAudienceTouchUser(t *testing.T) {
	db, app, clock := mustOpenApp(t, audienceT0)
	start := clock.Now()

	t.Run("InsertsUnknownUser", func(t *testing.T) {
		mustTouchUser(t, db, app, "u1", nil)
		p := mustProfile(t, db, app, "u1")
		if got, want := p.FirstSeen.Time, start; !got.Equal(want) {
			t.Fatalf("firstSeen=%v, want %v", got, want)
		}
		if got, want := p.LastSeen.Time, start; !got.Equal(want) {
			t.Fatalf("lastSeen=%v, want %v", got, want)
		}
		if got, want := len(p.Attributes), 0; got != want {
			t.Fatalf("attributes=%v, want none", p.Attributes)
		}
	})

	t.Run("LastSeenMovesAtMostOnceAMinute", func(t *testing.T) {
		for _, step := range []struct {
			after time.Duration
			want  time.Duration
		}{
			{30 * time.Second, 0},
			{59 * time.Second, 0},
			{60 * time.Second, 60 * time.Second},
			{90 * time.Second, 60 * time.Second},
			{121 * time.Second, 121 * time.Second},
		} {
			clock.Set(start.Add(step.after))
			mustTouchUser(t, db, app, "u1", nil)
			p := mustProfile(t, db, app, "u1")
			if got, want := p.LastSeen.Time, start.Add(step.want); !got.Equal(want) {
				t.Fatalf("after %v: lastSeen=%v, want %v", step.after, got, want)
			}
			if got, want := p.FirstSeen.Time, start; !got.Equal(want) {
				t.Fatalf("firstSeen=%v, want %v", got, want)
			}
		}
	})

	t.Run("MergesShallowly", func(t *testing.T) {
		clock.Set(start.Add(time.Hour))
		mustTouchUser(t, db, app, "u2", map[string]any{"country": "DE", "age": 30.0, "prefs": map[string]any{"a": 1.0, "b": 2.0}})
		mustTouchUser(t, db, app, "u2", map[string]any{"age": 31.0, "plan": "pro", "prefs": map[string]any{"c": 3.0}, "country": nil, "never": nil})
		p := mustProfile(t, db, app, "u2")
		got, _ := json.Marshal(p.Attributes)
		if want := `{"age":31,"plan":"pro","prefs":{"c":3}}`; string(got) != want {
			t.Fatalf("attributes=%s, want %s", got, want)
		}
		if got, want := p.FirstSeen.Time, clock.Now(); !got.Equal(want) {
			t.Fatalf("firstSeen=%v, want %v", got, want)
		}
	})

	t.Run("AttributesWriteLastSeen", func(t *testing.T) {
		clock.Add(10 * time.Second)
		mustTouchUser(t, db, app, "u2", map[string]any{"plan": "free"})
		if got, want := mustProfile(t, db, app, "u2").LastSeen.Time, clock.Now(); !got.Equal(want) {
			t.Fatalf("lastSeen=%v, want %v", got, want)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		many := map[string]any{}
		for i := range MaxAttributes + 1 {
			many[fmt.Sprintf("k%d", i)] = i
		}
		big := map[string]any{"blob": string(make([]byte, MaxAttributesBytes))}
		long := string(make([]rune, MaxUserIDLen+1))
		for _, tc := range []struct {
			name, user string
			attrs      map[string]any
			field      string
		}{
			{"EmptyUserID", "", nil, "userId"},
			{"LongUserID", long, nil, "userId"},
			{"TooManyKeys", "u3", many, "attributes"},
			{"TooBig", "u3", big, "attributes"},
			{"EmptyKey", "u3", map[string]any{"": 1}, "attributes"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := db.withTx(context.Background(), func(tx *Tx) error { return tx.touchUser(app, tc.user, tc.attrs) })
				if got, want := ErrorCode(err), EINVALID; got != want {
					t.Fatalf("code=%s, want %s (err %v)", got, want, err)
				}
				fields, _ := err.(*Error).Details["fields"].(map[string]any)
				if _, ok := fields[tc.field]; !ok {
					t.Fatalf("fields=%v, want %s", fields, tc.field)
				}
			})
		}
		if _, err := db.FindUserByID(context.Background(), app, "u3"); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("refused profile was stored: %v", err)
		}
	})

	t.Run("MergeLimitCountsTheWholeProfile", func(t *testing.T) {
		first := map[string]any{}
		for i := range MaxAttributes {
			first[fmt.Sprintf("k%d", i)] = i
		}
		mustTouchUser(t, db, app, "u4", first)
		err := db.withTx(context.Background(), func(tx *Tx) error {
			return tx.touchUser(app, "u4", map[string]any{"extra": 1})
		})
		if got, want := ErrorCode(err), EINVALID; got != want {
			t.Fatalf("code=%s, want %s", got, want)
		}
		// Replacing one key and removing another keeps the profile in bounds.
		mustTouchUser(t, db, app, "u4", map[string]any{"k0": nil, "extra": 1})
		if got, want := len(mustProfile(t, db, app, "u4").Attributes), MaxAttributes; got != want {
			t.Fatalf("attributes=%d, want %d", got, want)
		}
	})
}

func TestAudienceUserInAudience(t *testing.T) {
	db, app, clock := mustOpenApp(t, audienceT0)
	now := clock.Now()
	attrOnly := mustCreateAudience(t, db, app, `{"logic":"AND","rules":[{"field":"country","operator":"equals","value":"DE"},{"field":"age","operator":"greater_than_or_equal","value":18}]}`)
	event := mustCreateAudience(t, db, app, `{"rules":[{"ruleType":"event","eventId":"purchase","operator":"performed_within","timeWindow":{"value":7,"unit":"days"}}]}`)
	count := mustCreateAudience(t, db, app, `{"rules":[{"ruleType":"event","eventId":"login","operator":"performed_count","count":2,"comparison":"at_least"}]}`)
	archived := mustCreateAudience(t, db, app, `{"rules":[{"field":"country","operator":"exists"}]}`)
	st := AudienceArchived
	if _, err := db.UpdateAudience(context.Background(), app, archived.ID, AudienceInput{Status: &st}); err != nil {
		t.Fatal(err)
	}
	other, err := db.CreateApp(context.Background(), "other", "pro", 0)
	if err != nil {
		t.Fatal(err)
	}

	mustTouchUser(t, db, app, "adult-de", map[string]any{"country": "DE", "age": 30})
	mustTouchUser(t, db, app, "minor-de", map[string]any{"country": "DE", "age": 12})
	mustTouchUser(t, db, app, "adult-fr", map[string]any{"country": "FR", "age": 40})
	mustTouchUser(t, db, app, "age-text", map[string]any{"country": "DE", "age": "30"})
	mustTouchUser(t, db, app, "buyer", nil)
	mustTouchUser(t, db, app, "old-buyer", nil)
	mustTouchUser(t, db, app, "edge-buyer", nil)
	mustInsertEvent(t, db, app, "buyer", "purchase", now.Add(-time.Hour))
	mustInsertEvent(t, db, app, "buyer", "login", now.Add(-40*24*time.Hour))
	mustInsertEvent(t, db, app, "buyer", "login", now.Add(-2*time.Hour))
	mustInsertEvent(t, db, app, "old-buyer", "purchase", now.Add(-8*24*time.Hour))
	mustInsertEvent(t, db, app, "old-buyer", "login", now.Add(-time.Hour))
	mustInsertEvent(t, db, app, "edge-buyer", "purchase", now.Add(-7*24*time.Hour))
	// Events of a user the profile table does not know.
	mustInsertEvent(t, db, app, "ghost", "purchase", now.Add(-time.Hour))
	// The same user id in another app is another user.
	mustInsertEvent(t, db, other.ID, "old-buyer", "purchase", now.Add(-time.Hour))

	for _, tc := range []struct {
		name     string
		audience int64
		app      int64
		user     string
		want     bool
	}{
		{"AttrMatch", attrOnly.ID, app, "adult-de", true},
		{"AttrTooYoung", attrOnly.ID, app, "minor-de", false},
		{"AttrOtherCountry", attrOnly.ID, app, "adult-fr", false},
		{"AttrWrongType", attrOnly.ID, app, "age-text", false},
		{"AttrUnknownUser", attrOnly.ID, app, "nobody", false},
		{"EventWithinWindow", event.ID, app, "buyer", true},
		{"EventOutsideWindow", event.ID, app, "old-buyer", false},
		{"EventOnWindowEdge", event.ID, app, "edge-buyer", true},
		{"EventNone", event.ID, app, "adult-de", false},
		{"EventUnknownUser", event.ID, app, "ghost", false},
		{"CountTwo", count.ID, app, "buyer", true},
		{"CountOne", count.ID, app, "old-buyer", false},
		{"ArchivedAudience", archived.ID, app, "adult-de", false},
		{"UnknownAudience", 9999, app, "adult-de", false},
		{"AudienceOfAnotherApp", attrOnly.ID, other.ID, "adult-de", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := inAudience(t, db, tc.app, tc.audience, tc.user), tc.want; got != want {
				t.Fatalf("userInAudience=%v, want %v", got, want)
			}
		})
	}

	t.Run("CheckAgreesAndKnowsArchived", func(t *testing.T) {
		got, err := db.UserInAudience(context.Background(), app, archived.ID, "adult-de")
		if err != nil || !got {
			t.Fatalf("UserInAudience(archived)=%v, %v; want true", got, err)
		}
		if _, err := db.UserInAudience(context.Background(), other.ID, attrOnly.ID, "adult-de"); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("other app: err=%v, want not found", err)
		}
	})

	t.Run("DefinitionChangeWithinOneMillisecond", func(t *testing.T) {
		// The clock is frozen, so both updates share a millisecond: the
		// cache must still see the second definition.
		for _, country := range []string{"FR", "DE"} {
			def := json.RawMessage(`{"rules":[{"field":"country","operator":"equals","value":"` + country + `"}]}`)
			if _, err := db.UpdateAudience(context.Background(), app, attrOnly.ID, AudienceInput{Definition: def}); err != nil {
				t.Fatal(err)
			}
			if got, want := inAudience(t, db, app, attrOnly.ID, "adult-fr"), country == "FR"; got != want {
				t.Fatalf("country %s: adult-fr in audience=%v, want %v", country, got, want)
			}
		}
	})
}

// makePopulation is a deterministic mix of profiles and events; expect
// recomputes each audience's membership by hand, independently of the
// rule engine and of the SQL that feeds it.
type popUser struct {
	id      string
	country string
	age     float64
	plan    string // "" means no plan attribute
	buys    []time.Duration
	logins  []time.Duration
}

func makePopulation(n int) []popUser {
	r := rand.New(rand.NewPCG(1, 2))
	countries := []string{"DE", "FR", "US", "ES"}
	users := make([]popUser, n)
	for i := range users {
		u := &users[i]
		u.id = fmt.Sprintf("user-%04d", i)
		u.country = countries[r.IntN(len(countries))]
		u.age = float64(10 + r.IntN(60))
		if p := r.IntN(3); p == 1 {
			u.plan = "pro"
		} else if p == 2 {
			u.plan = "free"
		}
		for range r.IntN(4) {
			u.buys = append(u.buys, time.Duration(r.IntN(60*24))*time.Hour)
		}
		for range r.IntN(3) {
			u.logins = append(u.logins, time.Duration(r.IntN(90*24))*time.Hour)
		}
	}
	return users
}

func TestAudienceRecountMix(t *testing.T) {
	db, app, clock := mustOpenApp(t, audienceT0)
	now := clock.Now()
	users := makePopulation(500)
	// One transaction for the whole population: thousands of separate
	// commits took minutes under -race on a loaded machine.
	err := db.withTx(context.Background(), func(tx *Tx) error {
		event := func(user, id string, at time.Time) error {
			_, err := tx.exec(`INSERT INTO events (app_id, event_id, user_id, ts) VALUES (?, ?, ?, ?)`, app, id, user, ms(at))
			return err
		}
		for _, u := range users {
			attrs := map[string]any{"country": u.country, "age": u.age}
			if u.plan != "" {
				attrs["plan"] = u.plan
			}
			if err := tx.touchUser(app, u.id, attrs); err != nil {
				return err
			}
			for _, d := range u.buys {
				if err := event(u.id, "purchase", now.Add(-d)); err != nil {
					return err
				}
			}
			for _, d := range u.logins {
				if err := event(u.id, "login", now.Add(-d)); err != nil {
					return err
				}
			}
			if err := event(u.id, "page_view", now.Add(-time.Minute)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.indexAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	within := func(ds []time.Duration, w time.Duration) int {
		n := 0
		for _, d := range ds {
			if d <= w {
				n++
			}
		}
		return n
	}
	day := 24 * time.Hour
	cases := []struct {
		name, def string
		expect    func(u popUser) bool
	}{
		{"AttrAnd", `{"logic":"AND","rules":[{"field":"country","operator":"in","value":["DE","FR"]},{"field":"age","operator":"greater_than","value":30}]}`,
			func(u popUser) bool { return (u.country == "DE" || u.country == "FR") && u.age > 30 }},
		{"AttrOrEvent", `{"logic":"OR","rules":[{"field":"plan","operator":"equals","value":"pro"},{"ruleType":"event","eventId":"purchase","operator":"performed_count","count":2,"comparison":"at_least","timeWindow":{"value":30,"unit":"days"}}]}`,
			func(u popUser) bool { return u.plan == "pro" || within(u.buys, 30*day) >= 2 }},
		{"NegativeRules", `{"rules":[{"field":"plan","operator":"not_exists"},{"ruleType":"event","eventId":"login","operator":"not_performed_within","timeWindow":{"value":2,"unit":"weeks"}}]}`,
			func(u popUser) bool { return u.plan == "" && within(u.logins, 14*day) == 0 }},
		{"EventsOnly", `{"rules":[{"ruleType":"event","eventId":"purchase","operator":"has_performed"},{"ruleType":"event","eventId":"login","operator":"performed_count","count":1,"comparison":"exactly"}]}`,
			func(u popUser) bool { return len(u.buys) > 0 && len(u.logins) == 1 }},
		{"NeverPerformed", `{"rules":[{"ruleType":"event","eventId":"purchase","operator":"has_not_performed"},{"field":"country","operator":"not_equals","value":"US"}]}`,
			func(u popUser) bool { return len(u.buys) == 0 && u.country != "US" }},
	}
	ids := make([]int64, len(cases))
	wants := make([]int, len(cases))
	for i, tc := range cases {
		a := mustCreateAudience(t, db, app, tc.def)
		ids[i] = a.ID
		for _, u := range users {
			if tc.expect(u) {
				wants[i]++
			}
		}
		if wants[i] == 0 || wants[i] == len(users) {
			t.Fatalf("%s: population gives a trivial count %d", tc.name, wants[i])
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := db.RecountAudience(context.Background(), app, ids[i])
			if err != nil {
				t.Fatal(err)
			}
			if got, want := a.CustomerCount, wants[i]; got != want {
				t.Fatalf("customerCount=%d, want %d", got, want)
			}
			if a.LastCalculatedAt == nil || !a.LastCalculatedAt.Equal(now) {
				t.Fatalf("lastCalculatedAt=%v, want %v", a.LastCalculatedAt, now)
			}
			// Members, the single-user check and the count agree.
			members, p, err := db.FindAudienceMembers(context.Background(), app, ids[i], ListOptions{Limit: 100, Page: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.Total, wants[i]; got != want {
				t.Fatalf("members total=%d, want %d", got, want)
			}
			for _, m := range members {
				if !inAudience(t, db, app, ids[i], m.UserID) {
					t.Fatalf("member %s does not match alone", m.UserID)
				}
			}
			for _, u := range users[:50] {
				if got, want := inAudience(t, db, app, ids[i], u.id), tc.expect(u); got != want {
					t.Fatalf("%s: userInAudience=%v, want %v", u.id, got, want)
				}
			}
		})
	}

	t.Run("AllAppsInOnePass", func(t *testing.T) {
		if _, err := db.write.Exec(`UPDATE audiences SET customer_count = 0, last_calculated_at = NULL`); err != nil {
			t.Fatal(err)
		}
		clock.Set(now.Add(time.Second))
		if err := db.RecountAudiences(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			a, err := db.FindAudienceByID(context.Background(), app, id)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := a.CustomerCount, wants[i]; got != want {
				t.Fatalf("%s: customerCount=%d, want %d", cases[i].name, got, want)
			}
			if a.LastCalculatedAt == nil || !a.LastCalculatedAt.Equal(clock.Now()) {
				t.Fatalf("lastCalculatedAt=%v, want %v", a.LastCalculatedAt, clock.Now())
			}
		}
	})

	t.Run("MembersPages", func(t *testing.T) {
		all, p, err := db.FindAudienceMembers(context.Background(), app, ids[0], ListOptions{Limit: 1000, Page: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(all), wants[0]; got != want || p.HasMore {
			t.Fatalf("len=%d hasMore=%v, want %d and false", got, p.HasMore, want)
		}
		page2, p2, err := db.FindAudienceMembers(context.Background(), app, ids[0], ListOptions{Limit: 7, Page: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page2) != 7 || page2[0] != all[7] || page2[6] != all[13] || !p2.HasMore || *p2.NextPage != 3 {
			t.Fatalf("page 2=%v %+v, want members 7..13 of %d", page2, p2, len(all))
		}
	})
}

func TestAudienceDeleteRefusedWhileCampaignUsesIt(t *testing.T) {
	db, app, _ := mustOpenApp(t, audienceT0)
	a := mustCreateAudience(t, db, app, `{"rules":[{"field":"x","operator":"exists"}]}`)
	var cid int64
	err := db.write.QueryRow(`INSERT INTO campaigns (app_id, name, status, audience_id, created_at, updated_at) VALUES (?, 'c', 'paused', ?, 0, 0) RETURNING id`, app, a.ID).Scan(&cid)
	if err != nil {
		t.Fatal(err)
	}
	err = db.DeleteAudience(context.Background(), app, a.ID)
	if got, want := ErrorCode(err), EINVALID; got != want {
		t.Fatalf("code=%s, want %s", got, want)
	}
	if _, err := db.write.Exec(`UPDATE campaigns SET status = 'completed' WHERE id = ?`, cid); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteAudience(context.Background(), app, a.ID); err != nil {
		t.Fatal(err)
	}
	var ref sql.NullInt64
	if err := db.read.QueryRow(`SELECT audience_id FROM campaigns WHERE id = ?`, cid).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	if ref.Valid {
		t.Fatalf("completed campaign still references deleted audience %d", ref.Int64)
	}
	if _, err := db.FindAudienceByID(context.Background(), app, a.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("err=%v, want not found", err)
	}
}

// TestAudienceConcurrentProfilesAndCounts runs sightings, identifies,
// checks and recounts at once (the Makefile runs it under -race), then
// checks that the final count is exact.
func TestAudienceConcurrentProfilesAndCounts(t *testing.T) {
	db, app, _ := mustOpenApp(t, audienceT0)
	ctx := context.Background()
	a := mustCreateAudience(t, db, app, `{"rules":[{"field":"country","operator":"equals","value":"DE"},{"ruleType":"event","eventId":"buy","operator":"has_not_performed"}]}`)
	const workers, perWorker = 4, 40
	errs := make(chan error, workers)
	recounts := make(chan error, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				country := "FR"
				if i%2 == 0 {
					country = "DE"
				}
				id := fmt.Sprintf("w%d-u%d", w, i)
				if _, err := db.IdentifyUser(ctx, app, id, map[string]any{"country": country}); err != nil {
					errs <- err
					return
				}
				if err := db.withTx(ctx, func(tx *Tx) error {
					if err := tx.touchUser(app, id, nil); err != nil {
						return err
					}
					_, err := tx.userInAudience(app, a.ID, id)
					return err
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	go func() {
		for {
			select {
			case <-stop:
				recounts <- nil
				return
			default:
			}
			if err := db.RecountAudiences(ctx); err != nil {
				recounts <- err
				return
			}
			if _, err := db.UserInAudience(ctx, app, a.ID, "w0-u0"); err != nil {
				recounts <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	close(stop)
	if err := <-recounts; err != nil {
		t.Fatal(err)
	}
	got, err := db.RecountAudience(ctx, app, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := got.CustomerCount, workers*perWorker/2; got != want {
		t.Fatalf("customerCount=%d, want %d", got, want)
	}
}

// waitPrepared waits until the statement cache has no prepare pending.
func waitPrepared(tb testing.TB, db *DB) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		db.wstmts.mu.Lock()
		n := len(db.wstmts.pending)
		db.wstmts.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal("statements still being prepared")
		}
		time.Sleep(time.Millisecond)
	}
}

// audienceBenchDB builds the recount benchmark's data set: 100,000 users with
// three attributes and 1,000,000 events over five event ids and 90 days,
// inserted in one write transaction with prepared statements.
func audienceBenchDB(b *testing.B) (*DB, int64) {
	b.Helper()
	start := time.Now()
	defer func() {
		b.Logf("built 100,000 users and 1,000,000 events in %v", time.Since(start).Round(time.Millisecond))
	}()
	db, app, clock := mustOpenApp(b, audienceT0)
	now := clock.Now()
	const nUsers, nEvents = 100_000, 1_000_000
	r := rand.New(rand.NewPCG(3, 4))
	countries := []string{"DE", "FR", "US", "ES", "IT"}
	eventIDs := []string{"login", "purchase", "page_view", "add_to_cart", "signup"}
	// Random inserts into four event indexes thrash SQLite's default 2 MB
	// page cache; the writer is one connection, so this PRAGMA sticks.
	if _, err := db.write.Exec(`PRAGMA cache_size = -262144`); err != nil {
		b.Fatal(err)
	}
	// Building the event indexes once after the load sorts them in one go,
	// many times faster than a million random index inserts; they are
	// recreated from their own stored SQL, so the schema stays the
	// migration's.
	var indexSQL []string
	rows, err := db.write.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL`)
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var name, q string
		if err := rows.Scan(&name, &q); err != nil {
			b.Fatal(err)
		}
		names, indexSQL = append(names, name), append(indexSQL, q)
	}
	rows.Close()
	for _, name := range names {
		if _, err := db.write.Exec(`DROP INDEX ` + name); err != nil {
			b.Fatal(err)
		}
	}
	err = db.withTx(context.Background(), func(tx *Tx) error {
		us, err := tx.raw.Prepare(`INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer us.Close()
		for i := range nUsers {
			attrs := fmt.Sprintf(`{"age":%d,"country":%q,"plan":%q}`, 18+r.IntN(60), countries[r.IntN(len(countries))], []string{"free", "pro"}[r.IntN(2)])
			if _, err := us.Exec(app, fmt.Sprintf("user-%06d", i), attrs, ms(now), ms(now)); err != nil {
				return err
			}
		}
		// Events go in time order, as they would arrive, and many rows per
		// statement, which keeps the driver's per-statement cost out of a
		// build that is only setup.
		type ev struct {
			ts   int64
			id   string
			user string
		}
		evs := make([]ev, nEvents)
		for i := range evs {
			evs[i] = ev{ms(now.Add(-time.Duration(r.Int64N(int64(90 * 24 * time.Hour))))), eventIDs[r.IntN(len(eventIDs))], fmt.Sprintf("user-%06d", r.IntN(nUsers))}
		}
		slices.SortFunc(evs, func(a, b ev) int { return cmp.Compare(a.ts, b.ts) })
		const perStmt = 250
		es, err := tx.raw.Prepare(`INSERT INTO events (app_id, event_id, user_id, ts) VALUES ` + strings.Repeat("(?, ?, ?, ?),", perStmt-1) + `(?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer es.Close()
		args := make([]any, 0, 4*perStmt)
		for i := 0; i < nEvents; i += perStmt {
			args = args[:0]
			for _, e := range evs[i : i+perStmt] {
				args = append(args, app, e.id, e.user, e.ts)
			}
			if _, err := es.Exec(args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range indexSQL {
		if _, err := db.write.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.indexAll(context.Background()); err != nil {
		b.Fatal(err)
	}
	if _, err := db.write.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
	return db, app
}

// BenchmarkRecountAudience counts audiences over 100,000 users and
// 1,000,000 events. The definitions differ in how many events they read:
// two of five event ids over all time, and all five ids.
func BenchmarkRecountAudience(b *testing.B) {
	db, app := audienceBenchDB(b)
	for _, bc := range []struct{ name, def string }{
		{"Mixed", `{"logic":"AND","rules":[{"field":"country","operator":"in","value":["DE","FR"]},{"ruleType":"event","eventId":"purchase","operator":"performed_count","count":2,"comparison":"at_least","timeWindow":{"value":30,"unit":"days"}},{"ruleType":"event","eventId":"login","operator":"has_performed"}]}`},
		{"AllEvents", `{"logic":"OR","rules":[{"ruleType":"event","eventId":"login","operator":"performed_count","count":5,"comparison":"at_least"},{"ruleType":"event","eventId":"purchase","operator":"has_performed"},{"ruleType":"event","eventId":"page_view","operator":"performed_within","timeWindow":{"value":1,"unit":"days"}},{"ruleType":"event","eventId":"add_to_cart","operator":"has_not_performed"},{"ruleType":"event","eventId":"signup","operator":"performed_count","count":3,"comparison":"exactly"}]}`},
		{"AttributesOnly", `{"rules":[{"field":"plan","operator":"equals","value":"pro"},{"field":"age","operator":"less_than","value":30}]}`},
	} {
		a := mustCreateAudience(b, db, app, bc.def)
		b.Run(bc.name, func(b *testing.B) {
			var n int
			for b.Loop() {
				got, err := db.RecountAudience(context.Background(), app, a.ID)
				if err != nil {
					b.Fatal(err)
				}
				n = got.CustomerCount
			}
			b.ReportMetric(float64(n), "members")
		})
	}
}

// BenchmarkUserInAudience is the variant hot path: a five-rule definition
// (three attribute rules, two event rules) for a user with 30 events.
func BenchmarkUserInAudience(b *testing.B) {
	db, app, clock := mustOpenApp(b, audienceT0)
	now := clock.Now()
	a := mustCreateAudience(b, db, app, `{"logic":"AND","rules":[
		{"field":"country","operator":"in","value":["DE","FR","AT"]},
		{"field":"age","operator":"greater_than_or_equal","value":18},
		{"field":"plan","operator":"not_equals","value":"banned"},
		{"ruleType":"event","eventId":"purchase","operator":"performed_count","count":2,"comparison":"at_least","timeWindow":{"value":30,"unit":"days"}},
		{"ruleType":"event","eventId":"login","operator":"performed_within","timeWindow":{"value":7,"unit":"days"}}]}`)
	mustTouchUser(b, db, app, "bench-user", map[string]any{"country": "DE", "age": 33, "plan": "pro", "email": "someone@example.com"})
	for i := range 30 {
		mustInsertEvent(b, db, app, "bench-user", []string{"purchase", "login", "page_view"}[i%3], now.Add(-time.Duration(i)*24*time.Hour))
	}
	if !inAudience(b, db, app, a.ID, "bench-user") {
		b.Fatal("bench user does not match")
	}
	// The loop runs in one transaction, which keeps the writer from the
	// background prepare: let the statements be prepared first, as they
	// are between batches in production.
	waitPrepared(b, db)
	err := db.withTx(context.Background(), func(tx *Tx) error {
		for b.Loop() {
			if ok, err := tx.userInAudience(app, a.ID, "bench-user"); err != nil || !ok {
				return fmt.Errorf("userInAudience=%v, %v", ok, err)
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAudienceTouchUser is the sighting every event and variant
// request makes: a user seen within the minute costs no write.
func BenchmarkAudienceTouchUser(b *testing.B) {
	db, app, _ := mustOpenApp(b, audienceT0)
	mustTouchUser(b, db, app, "seen", map[string]any{"plan": "pro"})
	mustTouchUser(b, db, app, "seen", nil)
	waitPrepared(b, db)
	for _, bc := range []struct {
		name  string
		attrs func(i int) map[string]any
	}{
		{"SeenWithinAMinute", func(int) map[string]any { return nil }},
		{"SameAttributes", func(int) map[string]any { return map[string]any{"plan": "pro"} }},
		{"NewAttributes", func(i int) map[string]any { return map[string]any{"visits": i} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			err := db.withTx(context.Background(), func(tx *Tx) error {
				i := 0
				for b.Loop() {
					i++
					if err := tx.touchUser(app, "seen", bc.attrs(i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestAudienceEventQueryPlan checks that a pass over an app's users reads
// each batch's events by one index seek per user: a plan that walks every
// event of the app and looks each up in the batch makes a pass quadratic
// in the app's size.
func TestAudienceEventQueryPlan(t *testing.T) {
	db := mustOpenDB(t)
	conn, explain := planConn(t, db)
	want := []string{"SCAN u VIRTUAL TABLE", "SEARCH e USING PRIMARY KEY (app_id=? AND user_id=? AND event_id=?"}
	if db.pgEngine() != nil {
		want = []string{"Nested Loop", "Function Scan on jsonb_array_elements_text", "Index Scan using events_app_user on events e", "Index Cond: ((app_id = '1'::bigint) AND (user_id = jsonb_array_elements_text.value)"}
	}
	for _, bounded := range []bool{false, true} {
		args := []any{2, "buy", "view", `["a","b"]`, 1, "buy", "view"}
		if bounded {
			args = append(args, 0)
		}
		if db.pgEngine() == nil {
			args = append(args, 1<<40) // the id event_users holds up to
		}
		got := queryPlan(t, conn, explain+db.eng.audienceEvents(2, bounded), args...)
		at := -1
		for _, w := range want {
			i := strings.Index(got, w)
			if i <= at {
				t.Fatalf("bounded %t: plan %q: want %q, in this order: the batch outside, an index seek per user inside", bounded, got, want)
			}
			at = i
		}
	}
}
