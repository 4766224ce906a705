package store

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// passwordWorld is two users, each signed in twice.
type passwordWorld struct {
	db       *DB
	ann, bob *DashboardUser
	// sessions are each user's cookie tokens.
	sessions map[int64][]string
}

func newPasswordWorld(t *testing.T) *passwordWorld {
	t.Helper()
	ctx := context.Background()
	w := &passwordWorld{db: mustOpenDB(t), sessions: map[int64][]string{}}
	var err error
	if w.ann, err = w.db.CreateDashboardUser(ctx, "ann@example.com", "anns old password", true); err != nil {
		t.Fatal(err)
	}
	if w.bob, err = w.db.CreateDashboardUser(ctx, "bob@example.com", "bobs old password", false); err != nil {
		t.Fatal(err)
	}
	for _, u := range []*DashboardUser{w.ann, w.bob, w.ann, w.bob} {
		token, _, err := w.db.CreateDashboardSession(ctx, u.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		w.sessions[u.ID] = append(w.sessions[u.ID], token)
	}
	return w
}

// live lists which of u's sessions are still signed in.
func (w *passwordWorld) live(t *testing.T, u *DashboardUser) []bool {
	t.Helper()
	var out []bool
	for _, token := range w.sessions[u.ID] {
		_, err := w.db.FindDashboardSession(context.Background(), token)
		if err != nil && ErrorCode(err) != ENOTFOUND {
			t.Fatal(err)
		}
		out = append(out, err == nil)
	}
	return out
}

func (w *passwordWorld) wantLive(t *testing.T, u *DashboardUser, want ...bool) {
	t.Helper()
	if got := w.live(t, u); joinFmt(got) != joinFmt(want) {
		t.Fatalf("%s's sessions live=%v, want %v", u.Email, got, want)
	}
}

// wantPassword checks which password signs u in.
func (w *passwordWorld) wantPassword(t *testing.T, u *DashboardUser, good string, bad ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := w.db.AuthenticateDashboardUser(ctx, u.Email, good); err != nil {
		t.Fatalf("%s with %q: %v", u.Email, good, err)
	}
	for _, p := range bad {
		if _, err := w.db.AuthenticateDashboardUser(ctx, u.Email, p); err != ErrBadCredentials {
			t.Fatalf("%s with %q: err=%v, want ErrBadCredentials", u.Email, p, err)
		}
	}
}

// passwordEntries are the instance's audit entries of password changes
// and reset links, newest first, checked to hold no secret.
func passwordEntries(t *testing.T, db *DB, secrets ...string) []*AuditEntry {
	t.Helper()
	list, err := db.FindAuditLog(context.Background(), AuditFilter{Instance: true, ObjectType: ObjectUser})
	if err != nil {
		t.Fatal(err)
	}
	var out []*AuditEntry
	for _, e := range list {
		b, _ := json.Marshal(e)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Fatalf("entry %s holds %q: %s", e.Action, s, b)
			}
		}
		if strings.Contains(string(b), "$2a$") {
			t.Fatalf("entry %s holds a bcrypt hash: %s", e.Action, b)
		}
		if strings.HasPrefix(e.Action, "user.password") || e.Action == "user.reset_link_created" {
			out = append(out, e)
		}
	}
	return out
}

func TestSetDashboardPassword(t *testing.T) {
	ctx := context.Background()
	w := newPasswordWorld(t)
	for _, tc := range []struct {
		name, email, password, code, field string
	}{
		{"Short", "bob@example.com", "short", EINVALID, "password"},
		{"TooLong", "bob@example.com", strings.Repeat("x", 73), EINVALID, "password"},
		{"UnknownEmail", "cy@example.com", "a long new password", ENOTFOUND, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.db.SetDashboardPassword(ctx, tc.email, tc.password)
			wantCode(t, err, tc.code)
			if tc.field != "" {
				if fields, _ := err.(*Error).Details["fields"].(map[string]any); fields[tc.field] == nil {
					t.Fatalf("fields=%v, want %s", fields, tc.field)
				}
			}
			// Nothing changed.
			w.wantPassword(t, w.bob, "bobs old password")
			w.wantLive(t, w.bob, true, true)
		})
	}

	_, link, err := w.db.CreatePasswordReset(ctx, "bob@example.com", w.ann.ID)
	if err != nil {
		t.Fatal(err)
	}
	ended, err := w.db.SetDashboardPassword(ctx, "BOB@example.com", "bobs new password")
	if err != nil || ended != 2 {
		t.Fatalf("ended=%d, %v; want 2 sessions", ended, err)
	}
	w.wantPassword(t, w.bob, "bobs new password", "bobs old password")
	w.wantLive(t, w.bob, false, false)
	w.wantLive(t, w.ann, true, true)
	// A pending reset link stops working once the password changed.
	_, err = w.db.FindPasswordReset(ctx, link)
	if err != ErrResetInvalid {
		t.Fatalf("reset link after the change: err=%v, want ErrResetInvalid", err)
	}

	entries := passwordEntries(t, w.db, "bobs new password", link)
	if len(entries) != 2 || entries[0].Action != "user.password_changed" || entries[0].Actor.Type != ActorCLI ||
		entries[0].Object.Name != "bob@example.com" || string(entries[0].Changes["sessionsEnded"].After) != "2" {
		t.Fatalf("entries=%s", joinFmt(entries))
	}
}

func TestChangeDashboardPassword(t *testing.T) {
	ctx := context.Background()
	w := newPasswordWorld(t)
	keep := w.sessions[w.bob.ID][1]
	for _, tc := range []struct {
		name, current, password, field string
		code                           string
	}{
		{"NoCurrent", "", "bobs new password", "current", EINVALID},
		{"Short", "bobs old password", "short", "password", EINVALID},
		{"Same", "bobs old password", "bobs old password", "password", EINVALID},
		{"WrongCurrent", "not bobs password", "bobs new password", "", EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.db.ChangeDashboardPassword(ctx, w.bob.ID, tc.current, tc.password, keep)
			wantCode(t, err, tc.code)
			if tc.field == "" && err != ErrBadCredentials {
				t.Fatalf("err=%v, want ErrBadCredentials", err)
			}
			if tc.field != "" {
				if fields, _ := err.(*Error).Details["fields"].(map[string]any); fields[tc.field] == nil {
					t.Fatalf("fields=%v, want %s", fields, tc.field)
				}
			}
			w.wantPassword(t, w.bob, "bobs old password")
			w.wantLive(t, w.bob, true, true)
		})
	}
	_, err := w.db.ChangeDashboardPassword(ctx, 9999, "bobs old password", "bobs new password", "")
	wantCode(t, err, ENOTFOUND)

	// Bob changes it himself: the session he changed it from stays.
	bctx := WithCaller(ctx, Caller{Actor: UserActor(*w.bob), Addr: "192.0.2.1", RequestID: "r1"})
	ended, err := w.db.ChangeDashboardPassword(bctx, w.bob.ID, "bobs old password", "bobs new password", keep)
	if err != nil || ended != 1 {
		t.Fatalf("ended=%d, %v; want 1", ended, err)
	}
	w.wantPassword(t, w.bob, "bobs new password", "bobs old password")
	w.wantLive(t, w.bob, false, true)
	w.wantLive(t, w.ann, true, true)
	entries := passwordEntries(t, w.db, "bobs new password", "bobs old password")
	if len(entries) != 1 || entries[0].Action != "user.password_changed" || entries[0].Actor.Label() != "bob@example.com" ||
		entries[0].ClientAddress != "192.0.2.1" || string(entries[0].Changes["sessionsEnded"].After) != "1" {
		t.Fatalf("entries=%s", joinFmt(entries))
	}
}

func TestPasswordReset(t *testing.T) {
	ctx := context.Background()
	w := newPasswordWorld(t)
	start := time.Now()
	now := start
	w.db.Now = func() time.Time { return now }

	t.Run("Refused", func(t *testing.T) {
		_, _, err := w.db.CreatePasswordReset(ctx, "ann@example.com", w.ann.ID)
		wantCode(t, err, EINVALID)
		_, _, err = w.db.CreatePasswordReset(ctx, "cy@example.com", w.ann.ID)
		wantCode(t, err, ENOTFOUND)
		if n := countRows(t, w.db, `SELECT COUNT(*) FROM dashboard_password_resets`); n != 0 {
			t.Fatalf("%d links made by refusals", n)
		}
	})

	first, firstToken, err := w.db.CreatePasswordReset(ctx, "bob@example.com", w.ann.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := first.ExpiresAt.Sub(first.CreatedAt.Time), 24*time.Hour; got != want {
		t.Fatalf("link lasts %v, want %v", got, want)
	}
	// Stored hashed, as invitations are.
	if n := countRows(t, w.db, `SELECT COUNT(*) FROM dashboard_password_resets WHERE token_hash = ?`, []byte(firstToken)); n != 0 {
		t.Fatal("the token is stored as it is")
	}
	if n := countRows(t, w.db, `SELECT COUNT(*) FROM dashboard_password_resets WHERE token_hash = ?`, tokenHash(firstToken)); n != 1 {
		t.Fatal("the token's hash is not stored")
	}
	pr, token, err := w.db.CreatePasswordReset(ctx, "bob@example.com", w.ann.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.FindPasswordReset(ctx, firstToken); err != ErrResetInvalid {
		t.Fatalf("replaced link: err=%v, want ErrResetInvalid", err)
	}
	if got, err := w.db.FindPasswordReset(ctx, token); err != nil || got.ID != pr.ID || got.Email != "bob@example.com" {
		t.Fatalf("found %+v, %v", got, err)
	}
	for _, bad := range []string{"", "nonsense", token + "x"} {
		if _, err := w.db.FindPasswordReset(ctx, bad); err != ErrResetInvalid {
			t.Fatalf("token %q: err=%v, want ErrResetInvalid", bad, err)
		}
	}

	// A refused password leaves the link usable and changes nothing.
	_, err = w.db.ResetDashboardPassword(ctx, token, "short")
	wantCode(t, err, EINVALID)
	w.wantPassword(t, w.bob, "bobs old password")
	w.wantLive(t, w.bob, true, true)

	// Racing browsers: the link works once.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = w.db.ResetDashboardPassword(ctx, token, "bobs new password")
		}()
	}
	wg.Wait()
	ok := 0
	for _, e := range errs {
		switch {
		case e == nil:
			ok++
		case e != ErrResetUsed:
			t.Errorf("err=%v, want ErrResetUsed", e)
		}
	}
	if ok != 1 {
		t.Fatalf("%d resets succeeded, want 1", ok)
	}
	w.wantPassword(t, w.bob, "bobs new password", "bobs old password")
	w.wantLive(t, w.bob, false, false)
	w.wantLive(t, w.ann, true, true)
	if _, err := w.db.FindPasswordReset(ctx, token); err != ErrResetUsed {
		t.Fatalf("used link: err=%v, want ErrResetUsed", err)
	}

	// A link not used within 24 hours expires.
	_, late, err := w.db.CreatePasswordReset(ctx, "bob@example.com", w.ann.ID)
	if err != nil {
		t.Fatal(err)
	}
	now = start.Add(PasswordResetTTL - time.Millisecond)
	if _, err := w.db.FindPasswordReset(ctx, late); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	now = start.Add(PasswordResetTTL)
	if _, err := w.db.ResetDashboardPassword(ctx, late, "another new password"); err != ErrResetExpired {
		t.Fatalf("expired link: err=%v, want ErrResetExpired", err)
	}
	w.wantPassword(t, w.bob, "bobs new password")

	entries := passwordEntries(t, w.db, firstToken, token, late, "bobs new password")
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action+" by "+e.Actor.Label())
	}
	want := "user.reset_link_created by cli|user.password_reset by bob@example.com|user.reset_link_created by cli|user.reset_link_created by cli"
	if got := strings.Join(actions, "|"); got != want {
		t.Fatalf("entries %s, want %s", got, want)
	}
	if e := entries[1]; string(e.Changes["sessionsEnded"].After) != "2" || e.Object.Name != "bob@example.com" {
		t.Fatalf("reset entry %+v", e)
	}
	if e := entries[0]; e.Changes["expiresAt"].After == nil {
		t.Fatalf("link entry without its expiry: %+v", e)
	}

	// The retention job deletes links that expired before its cutoff.
	if _, err := w.db.DeleteAuditBefore(ctx, start.Add(PasswordResetTTL+time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, w.db, `SELECT COUNT(*) FROM dashboard_password_resets`); n != 0 {
		t.Fatalf("%d expired links left after retention", n)
	}
}

func TestDefaultPlan(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	if p, err := db.FindDefaultPlan(ctx); err != nil || p != "free" {
		t.Fatalf("default plan of a new database=%q, %v; want free", p, err)
	}
	for _, tc := range []struct {
		setDefault, plan string
		rate             int
		wantPlan         string
		wantRate         int
	}{
		{"", "", 0, "free", 60},
		{"pro", "", 0, "pro", 1000},
		{"pro", "starter", 0, "starter", 300},
		{"pro", "", 5, "pro", 5},
		{"enterprise", "", 0, "enterprise", 10000},
		{"free", "", 0, "free", 60},
	} {
		if tc.setDefault != "" {
			if err := db.SetDefaultPlan(ctx, tc.setDefault); err != nil {
				t.Fatal(err)
			}
		}
		a, err := db.CreateApp(ctx, "x", tc.plan, tc.rate)
		if err != nil || a.Plan != tc.wantPlan || a.RateLimit != tc.wantRate {
			t.Fatalf("default %q, plan %q: %+v, %v; want %s at %d", tc.setDefault, tc.plan, a, err, tc.wantPlan, tc.wantRate)
		}
		if got, err := db.FindAppByID(ctx, a.ID); err != nil || *got != *a {
			t.Fatalf("stored %+v, %v; want %+v", got, err, a)
		}
	}
	for _, bad := range []string{"", "gold", "FREE"} {
		wantCode(t, db.SetDefaultPlan(ctx, bad), EINVALID)
	}
	if p, err := db.FindDefaultPlan(ctx); err != nil || p != "free" {
		t.Fatalf("default plan after refusals=%q, %v", p, err)
	}
}
