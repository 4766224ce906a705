package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func init() { PasswordCost = bcrypt.MinCost }

func TestDashboardUsers(t *testing.T) {
	ctx := context.Background()
	db, _ := mustOpenDBPath(t)

	t.Run("Validation", func(t *testing.T) {
		for _, tc := range []struct{ email, password, field string }{
			{"", "long enough password", "email"},
			{"no-at-sign", "long enough password", "email"},
			{"a@b.c", "short", "password"},
			{"a@b.c", string(make([]byte, 73)) + "xxxxxxxxxx", "password"},
		} {
			_, err := db.CreateDashboardUser(ctx, tc.email, tc.password, false)
			wantCode(t, err, EINVALID)
			fields, _ := err.(*Error).Details["fields"].(map[string]any)
			if _, ok := fields[tc.field]; !ok {
				t.Errorf("%q/%q: fields=%v, want %s", tc.email, tc.password, fields, tc.field)
			}
		}
	})

	u, err := db.CreateDashboardUser(ctx, "Ann@Example.com", "correct horse battery", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("EmailTakenIgnoringCase", func(t *testing.T) {
		_, err := db.CreateDashboardUser(ctx, "ann@example.COM", "another password!", false)
		wantCode(t, err, EINVALID)
	})
	t.Run("Authenticate", func(t *testing.T) {
		got, err := db.AuthenticateDashboardUser(ctx, "ann@example.com", "correct horse battery")
		if err != nil || got.ID != u.ID {
			t.Fatalf("got %+v, %v", got, err)
		}
		for _, c := range [][2]string{{"ann@example.com", "wrong password!!"}, {"bob@example.com", "correct horse battery"}} {
			if _, err := db.AuthenticateDashboardUser(ctx, c[0], c[1]); err != ErrBadCredentials {
				t.Errorf("%v: err=%v, want ErrBadCredentials", c, err)
			}
		}
	})
	t.Run("Sessions", func(t *testing.T) {
		token, s, err := db.CreateDashboardSession(ctx, u.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.FindDashboardSession(ctx, token)
		if err != nil || got.User.ID != u.ID || got.CSRFToken != s.CSRFToken || got.CSRFToken == "" {
			t.Fatalf("got %+v, %v", got, err)
		}
		if _, err := db.FindDashboardSession(ctx, token+"x"); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("wrong token: err=%v", err)
		}
		expired, _, err := db.CreateDashboardSession(ctx, u.ID, -time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindDashboardSession(ctx, expired); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("expired session: err=%v", err)
		}
		if err := db.DeleteDashboardSession(ctx, token); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindDashboardSession(ctx, token); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("signed out session: err=%v", err)
		}
	})
	t.Run("DeleteSignsOut", func(t *testing.T) {
		v, err := db.CreateDashboardUser(ctx, "bob@example.com", "bobs password!", false)
		if err != nil {
			t.Fatal(err)
		}
		token, _, err := db.CreateDashboardSession(ctx, v.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteDashboardUser(ctx, "BOB@example.com"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindDashboardSession(ctx, token); ErrorCode(err) != ENOTFOUND {
			t.Fatalf("session of deleted user: err=%v", err)
		}
		wantCode(t, db.DeleteDashboardUser(ctx, "bob@example.com"), ENOTFOUND)
		list, err := db.FindDashboardUsers(ctx)
		if err != nil || len(list) != 1 || list[0].Email != "Ann@Example.com" {
			t.Fatalf("users=%v, %v", list, err)
		}
	})
}

func TestDashboardSetupToken(t *testing.T) {
	ctx := context.Background()
	db, _ := mustOpenDBPath(t)
	first, err := db.CreateSetupToken(ctx)
	if err != nil || first == "" {
		t.Fatalf("token=%q, %v", first, err)
	}
	// A second boot (of this process or another) keeps the link the first
	// one printed.
	if again, err := db.CreateSetupToken(ctx); err != nil || again != first {
		t.Fatalf("second token=%q, %v; want the first, %q", again, err, first)
	}
	// Once expired, it opens nothing, and the next boot makes a new one.
	start := time.Now()
	db.Now = func() time.Time { return start.Add(SetupTokenTTL) }
	wantCode(t, db.CheckSetupToken(ctx, first), ENOTFOUND)
	_, err = db.CompleteSetup(ctx, first, "ann@example.com", "long enough password")
	wantCode(t, err, ENOTFOUND)
	token, err := db.CreateSetupToken(ctx)
	if err != nil || token == "" || token == first {
		t.Fatalf("token after expiry=%q, %v", token, err)
	}
	wantCode(t, db.CheckSetupToken(ctx, first), ENOTFOUND)
	if err := db.CheckSetupToken(ctx, token); err != nil {
		t.Fatal(err)
	}
	// Bad input leaves the link usable.
	_, err = db.CompleteSetup(ctx, token, "ann@example.com", "short")
	wantCode(t, err, EINVALID)

	// Racing browsers: exactly one creates the first user.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.CompleteSetup(ctx, token, "ann@example.com", "long enough password")
		}()
	}
	wg.Wait()
	ok := 0
	for _, e := range errs {
		if e == nil {
			ok++
		} else if ErrorCode(e) != ENOTFOUND {
			t.Errorf("err=%v, want not found", e)
		}
	}
	if ok != 1 {
		t.Fatalf("%d setups succeeded, want 1", ok)
	}
	wantCode(t, db.CheckSetupToken(ctx, token), ENOTFOUND)
	if again, err := db.CreateSetupToken(ctx); err != nil || again != "" {
		t.Fatalf("token once a user exists=%q, %v", again, err)
	}
}

func TestCreateDashboardUserRetiresSetupLink(t *testing.T) {
	ctx := context.Background()
	db, _ := mustOpenDBPath(t)
	token, err := db.CreateSetupToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateDashboardUser(ctx, "ann@example.com", "long enough password", false); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.CheckSetupToken(ctx, token), ENOTFOUND)
}
