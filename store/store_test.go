package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"service/internal/pgtest"
	"service/jsonjs"
	"service/migrations"
)

// latestVersion is the highest migration number shipped.
func latestVersion(tb testing.TB) uint {
	tb.Helper()
	latest, _ := storeVersions(tb)
	return latest
}

// storeVersions returns the newest migration version and the one before
// it (0 when there is one), which numbering gaps make more than latest-1.
func storeVersions(tb testing.TB) (latest, prev uint) {
	tb.Helper()
	var migs fs.FS = migrations.FS
	if pgtest.Selected() {
		migs = migrations.Postgres
	}
	names, err := fs.Glob(migs, "*.up.sql")
	if err != nil || len(names) == 0 {
		tb.Fatalf("no migrations: %v", err)
	}
	var v uint
	for _, n := range names {
		num, _, _ := strings.Cut(n, "_")
		x, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			tb.Fatalf("migration %s: %v", n, err)
		}
		if uint(x) > v {
			prev, v = v, uint(x)
		} else if uint(x) > prev {
			prev = uint(x)
		}
	}
	return v, prev
}

func tableExists(tb testing.TB, db *DB, name string) bool {
	tb.Helper()
	var n int
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if db.pgEngine() != nil {
		q = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`
	}
	if err := db.read.QueryRow(q, name).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n == 1
}

func TestStoreOpenTwice(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "twice.db")
	latest := latestVersion(t)

	first, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	app, err := first.CreateApp(ctx, "kept", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	// A second handle while the first is open migrates nothing and fails
	// on nothing: migrations are idempotent.
	second := mustOpenDBAt(t, path)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	third := mustOpenDBAt(t, path)
	for i, db := range []*DB{second, third} {
		v, dirty, err := db.Version()
		if err != nil {
			t.Fatal(err)
		}
		if v != latest || dirty {
			t.Fatalf("handle %d: version=%d dirty=%v, want %d clean", i, v, dirty, latest)
		}
		got, err := db.FindAppByID(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		if *got != *app {
			t.Fatalf("handle %d: app=%+v, want %+v", i, got, app)
		}
		if err := db.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStoreMigrateDownUp(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	latest, prev := storeVersions(t)
	if _, err := db.CreateApp(ctx, "before", "free", 0); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, -1); err != nil {
		t.Fatal(err)
	}
	v, dirty, err := db.Version()
	if err != nil {
		t.Fatal(err)
	}
	if v != prev || dirty {
		t.Fatalf("after down 1: version=%d dirty=%v, want %d clean", v, dirty, prev)
	}
	if latest == 1 && tableExists(t, db, "apps") {
		t.Fatal("down to version 0 left the apps table")
	}
	if err := db.Migrate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, 0); err != nil {
		t.Fatalf("second up: %v", err)
	}
	if v, dirty, err = db.Version(); err != nil || v != latest || dirty {
		t.Fatalf("after up: version=%d dirty=%v err=%v, want %d", v, dirty, err, latest)
	}
	for _, table := range []string{"apps", "api_keys", "content_views", "campaigns", "webhook_deliveries", "form_submissions"} {
		if !tableExists(t, db, table) {
			t.Fatalf("table %s missing after up", table)
		}
	}
	if _, err := db.CreateApp(ctx, "after", "free", 0); err != nil {
		t.Fatal(err)
	}

	// A fresh file opened without migrating is at version 0.
	bare, err := OpenNoMigrate(ctx, filepath.Join(t.TempDir(), "bare.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if v, dirty, err := bare.Version(); err != nil || v != 0 || dirty {
		t.Fatalf("bare: version=%d dirty=%v err=%v, want 0", v, dirty, err)
	}
}

func TestStoreCreateApp(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	for _, tc := range []struct {
		name, plan string
		rate       int
		wantPlan   string
		wantRate   int
		code       string
	}{
		{"DefaultPlan", "", 0, "free", 60, ""},
		{"Free", "free", 0, "free", 60, ""},
		{"Starter", "starter", 0, "starter", 300, ""},
		{"Pro", "pro", 0, "pro", 1000, ""},
		{"Enterprise", "enterprise", 0, "enterprise", 10000, ""},
		{"EnterpriseCustom", "enterprise", 25000, "enterprise", 25000, ""},
		{"FreeCustom", "free", 5, "free", 5, ""},
		{"UnknownPlan", "gold", 0, "", 0, EINVALID},
		{"PlanCase", "Free", 0, "", 0, EINVALID},
		{"NegativeRate", "pro", -1, "", 0, EINVALID},
		{"NoName", "free", 0, "", 0, EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.name
			if tc.name == "NoName" {
				name = ""
			}
			a, err := db.CreateApp(ctx, name, tc.plan, tc.rate)
			if tc.code != "" {
				wantCode(t, err, tc.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.ID < 1 || a.Name != name || a.Plan != tc.wantPlan || a.RateLimit != tc.wantRate {
				t.Fatalf("app=%+v, want plan %s rate %d", a, tc.wantPlan, tc.wantRate)
			}
			got, err := db.FindAppByID(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if *got != *a {
				t.Fatalf("FindAppByID=%+v, want %+v", got, a)
			}
			b, _ := json.Marshal(a)
			if want := fmt.Sprintf(`{"id":%d,"name":%q,"plan":%q,"rateLimit":%d}`, a.ID, name, tc.wantPlan, tc.wantRate); string(b) != want {
				t.Fatalf("JSON=%s, want %s", b, want)
			}
		})
	}
	_, err := db.FindAppByID(ctx, 999999)
	wantCode(t, err, ENOTFOUND)
}

func TestStoreCreateKeyStoresHashOnly(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	app, err := db.CreateApp(ctx, "keys", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, role := range []string{RoleAdmin, RoleRead, RoleClient} {
		t.Run(role, func(t *testing.T) {
			k, plain, err := db.CreateKey(ctx, app.ID, role, "label "+role)
			if err != nil {
				t.Fatal(err)
			}
			if seen[plain] {
				t.Fatalf("key %s handed out twice", plain)
			}
			seen[plain] = true
			if k.ID < 1 || k.AppID != app.ID || k.Role != role || k.Name != "label "+role || !strings.HasPrefix(plain, k.Prefix) {
				t.Fatalf("key=%+v plaintext=%s", k, plain)
			}
			secret := plain[strings.LastIndexByte(plain, '_')+1:]
			raw, err := hex.DecodeString(secret)
			if err != nil || len(raw) < 16 {
				t.Fatalf("plaintext %s: secret part is not 128+ random bits", plain)
			}

			rows, err := db.read.Query(`SELECT * FROM api_keys WHERE id = ?`, k.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			if !rows.Next() {
				t.Fatal("key row missing")
			}
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(plain))
			var hashFound bool
			for i, v := range vals {
				var b []byte
				switch x := v.(type) {
				case []byte:
					b = x
				case string:
					b = []byte(x)
				default:
					b = fmt.Append(nil, x)
				}
				for _, leak := range [][]byte{[]byte(plain), []byte(secret), raw, []byte(strings.ToUpper(secret))} {
					if bytes.Contains(b, leak) {
						t.Fatalf("column %s holds the plaintext key: %q", cols[i], b)
					}
				}
				hashFound = hashFound || bytes.Equal(b, sum[:])
			}
			if !hashFound {
				t.Fatalf("no column holds the SHA-256 of the key: %v", vals)
			}

			// Listing never reveals it either.
			keys, err := db.FindKeys(ctx, app.ID)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(keys)
			if bytes.Contains(out, []byte(secret)) {
				t.Fatalf("FindKeys JSON holds the plaintext: %s", out)
			}
		})
	}
	for _, tc := range []struct {
		name, role string
		app        int64
		code       string
	}{
		{"UnknownRole", "owner", app.ID, EINVALID},
		{"EmptyRole", "", app.ID, EINVALID},
		{"UnknownApp", RoleAdmin, 999999, ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := db.CreateKey(ctx, tc.app, tc.role, "")
			wantCode(t, err, tc.code)
		})
	}
}

func TestStoreAuthenticate(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	clock := time.Date(2030, 3, 4, 5, 6, 7, 0, time.UTC)
	db.Now = func() time.Time { return clock }
	app, err := db.CreateApp(ctx, "auth", "starter", 0)
	if err != nil {
		t.Fatal(err)
	}
	k, plain, err := db.CreateKey(ctx, app.ID, RoleClient, "sdk")
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Authenticate(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != k.ID || got.AppID != app.ID || got.Role != RoleClient || got.RateLimit != 300 {
		t.Fatalf("Authenticate=%+v, want key %d of app %d, client, limit 300", got, k.ID, app.ID)
	}
	for _, bad := range []string{"", "sk_c_", plain + "0", strings.ToUpper(plain), plain[:len(plain)-1], plain + strings.Repeat("x", 200)} {
		_, err := db.Authenticate(ctx, bad)
		wantCode(t, err, EINVALID)
	}

	revoked, err := db.RevokeKey(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(clock) || revoked.AppID != app.ID {
		t.Fatalf("RevokeKey=%+v, want revokedAt %v", revoked, clock)
	}
	_, err = db.Authenticate(ctx, plain)
	wantCode(t, err, EINVALID)

	// Revoking again keeps the first revocation time.
	clock = clock.Add(time.Hour)
	again, err := db.RevokeKey(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !again.RevokedAt.Equal(revoked.RevokedAt.Time) {
		t.Fatalf("second revoke moved revokedAt to %v", again.RevokedAt)
	}
	_, err = db.RevokeKey(ctx, 999999)
	wantCode(t, err, ENOTFOUND)

	keys, err := db.FindKeys(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Fatalf("FindKeys=%+v, want the revoked key", keys)
	}
}

// TestStoreRevokeSeenByOtherHandle is the CLI case: another process revokes
// a key the server has cached; the server stops accepting it within the
// cache's lifetime.
func TestStoreRevokeSeenByOtherHandle(t *testing.T) {
	ctx := context.Background()
	path := tempDBPath(t)
	server := mustOpenDBAt(t, path)
	cli := mustOpenDBAt(t, path)
	app, err := cli.CreateApp(ctx, "cross", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	k, plain, err := cli.CreateKey(ctx, app.ID, RoleAdmin, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Authenticate(ctx, plain); err != nil {
		t.Fatalf("key made by another handle: %v", err)
	}
	if _, err := cli.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		_, err := server.Authenticate(ctx, plain)
		if err != nil {
			wantCode(t, err, EINVALID)
			break
		}
		if time.Since(start) > keyCacheTTL+10*time.Second {
			t.Fatalf("revoked key still accepted after %v", time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConcurrentWritersTwoHandles writes from two handles on one file at once, as the
// CLI does beside a running server: busy_timeout and BEGIN IMMEDIATE must
// turn contention into waiting, never SQLITE_BUSY.
func TestConcurrentWritersTwoHandles(t *testing.T) {
	ctx := context.Background()
	path := tempDBPath(t)
	a := mustOpenDBAt(t, path)
	b := mustOpenDBAt(t, path)
	app, err := a.CreateApp(ctx, "busy", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*each*3)
	for h, db := range []*DB{a, b} {
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					name := fmt.Sprintf("h%d w%d #%d", h, w, i)
					c, err := db.CreateContent(ctx, app.ID, ContentInput{Name: &name})
					if err != nil {
						errs <- fmt.Errorf("create %s: %w", name, err)
						continue
					}
					pub := ContentPublished
					if _, err := db.UpdateContent(ctx, app.ID, c.ID, ContentInput{Status: &pub}); err != nil {
						errs <- fmt.Errorf("update %s: %w", name, err)
					}
					if _, _, err := db.CreateKey(ctx, app.ID, RoleRead, name); err != nil {
						errs <- fmt.Errorf("key %s: %w", name, err)
					}
					if _, _, err := db.FindContents(ctx, app.ID, "", ListOptions{Limit: 5, Page: 1}); err != nil {
						errs <- fmt.Errorf("list %s: %w", name, err)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, db := range []*DB{a, b} {
		_, p, err := db.FindContents(ctx, app.ID, ContentPublished, ListOptions{Limit: 1, Page: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.Total, 2*workers*each; got != want {
			t.Fatalf("published blocks=%d, want %d", got, want)
		}
		keys, err := db.FindKeys(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(keys), 2*workers*each; got != want {
			t.Fatalf("keys=%d, want %d", got, want)
		}
	}
}

func TestStoreContentWebhookOutbox(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	clock := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return clock }
	app, err := db.CreateApp(ctx, "hooks", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.CreateApp(ctx, "other", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	hook := func(appID int64, events, status string) {
		t.Helper()
		if _, err := db.write.Exec(`INSERT INTO webhooks (app_id, url, events, max_retries, timeout_seconds, status, created_at, updated_at)
			VALUES (?, 'http://127.0.0.1:1/', ?, 3, 30, ?, 0, 0)`, appID, events, status); err != nil {
			t.Fatal(err)
		}
	}
	hook(app.ID, `["content.published","content.unpublished"]`, "ACTIVE")
	hook(app.ID, `["*"]`, "ACTIVE")
	hook(app.ID, `["campaign.started"]`, "ACTIVE")
	hook(app.ID, `["*"]`, "FAILED")
	hook(other.ID, `["*"]`, "ACTIVE")

	type delivery struct {
		hook    int64
		event   string
		payload string
	}
	deliveries := func() []delivery {
		t.Helper()
		rows, err := db.read.Query(`SELECT webhook_id, event, payload FROM webhook_deliveries ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []delivery
		for rows.Next() {
			var d delivery
			var p []byte
			if err := rows.Scan(&d.hook, &d.event, &p); err != nil {
				t.Fatal(err)
			}
			d.payload = string(p)
			out = append(out, d)
		}
		return out
	}

	name, draft, published, archived := "Promo", ContentDraft, ContentPublished, ContentArchived
	c, err := db.CreateContent(ctx, app.ID, ContentInput{Name: &name, Status: &draft, Items: json.RawMessage(`[{"type":"text","content":"x"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := deliveries(); len(got) != 0 {
		t.Fatalf("a draft queued %v", got)
	}
	stamp := func() string { return clock.Format(jsonjs.TimeLayout) }
	var want []delivery
	for _, step := range []struct {
		status string
		event  string
	}{
		{published, EventContentPublished},
		{published, ""},
		{archived, EventContentUnpublish},
		{draft, ""},
		{published, EventContentPublished},
		{draft, EventContentUnpublish},
	} {
		clock = clock.Add(time.Minute)
		if _, err := db.UpdateContent(ctx, app.ID, c.ID, ContentInput{Status: &step.status}); err != nil {
			t.Fatal(err)
		}
		// Keys in the documented order: the signature covers these bytes.
		var data string
		switch step.event {
		case EventContentPublished:
			data = fmt.Sprintf(`{"contentViewId":%d,"contentViewName":%q,"publishedAt":%q,"hasItems":true}`, c.ID, name, stamp())
		case EventContentUnpublish:
			data = fmt.Sprintf(`{"contentViewId":%d,"contentViewName":%q,"unpublishedAt":%q,"previousStatus":"published"}`, c.ID, name, stamp())
		default:
			continue
		}
		want = append(want, delivery{1, step.event, data}, delivery{2, step.event, data})
	}
	got := deliveries()
	if len(got) != len(want) {
		t.Fatalf("deliveries=%+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delivery %d=%+v\nwant %+v", i, got[i], want[i])
		}
	}

	// Created published: one delivery per subscribed hook, hasItems false.
	clock = clock.Add(time.Minute)
	empty := "Empty"
	e, err := db.CreateContent(ctx, app.ID, ContentInput{Name: &empty, Status: &published})
	if err != nil {
		t.Fatal(err)
	}
	got = deliveries()[len(want):]
	wantData := fmt.Sprintf(`{"contentViewId":%d,"contentViewName":%q,"publishedAt":%q,"hasItems":false}`, e.ID, empty, stamp())
	if len(got) != 2 || got[0] != (delivery{1, EventContentPublished, wantData}) || got[1] != (delivery{2, EventContentPublished, wantData}) {
		t.Fatalf("create published queued %+v, want %v", got, wantData)
	}
}

// TestOpenPathWithURICharacters: a database path holding characters that
// mean something in a URI opens exactly that file, not another one.
func TestOpenPathWithURICharacters(t *testing.T) {
	for _, name := range []string{"a%25b.db", "a?b.db", "a#b.db", "a b%.db", "100%.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			db := mustOpenDBAt(t, path)
			if _, err := db.CreateApp(context.Background(), "a", "free", 0); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != name && !strings.HasPrefix(e.Name(), name+"-") {
					t.Fatalf("opening %q created %q", name, e.Name())
				}
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("the file %q was not created: %v", name, err)
			}
			again := mustOpenDBAt(t, path)
			if apps, err := again.FindAllApps(context.Background()); err != nil || len(apps) != 1 {
				t.Fatalf("reopened: %d apps, %v; want the one created", len(apps), err)
			}
		})
	}
}

// UpdateApp reads allowed origins with the same parser as every other way
// in: an entry that could never match an Origin header is refused, and
// nothing changes.
func TestUpdateAppAllowedOrigins(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	app, err := db.CreateApp(ctx, "a", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{}, {"a.example"}, {"https://a.example/path"}, {"ftp://a.example"}} {
		_, err := db.UpdateApp(ctx, app.ID, AppUpdate{AllowedOrigins: &bad})
		wantCode(t, err, EINVALID)
	}
	good := []string{"https://a.example", "http://localhost:3000"}
	if _, err := db.UpdateApp(ctx, app.ID, AppUpdate{AllowedOrigins: &good}); err != nil {
		t.Fatal(err)
	}
	got, err := db.AllowedOrigins(ctx, app.ID)
	if err != nil || strings.Join(got, " ") != "https://a.example http://localhost:3000" {
		t.Fatalf("origins=%v, %v; want %v", got, err, good)
	}
}

// TestKeyHashIsSHA256: the stack-buffer hash of a key is SHA-256 at every
// length, past the buffer's 128 bytes too.
func TestKeyHashIsSHA256(t *testing.T) {
	for _, n := range []int{0, 1, 47, 128, 129, 500} {
		s := strings.Repeat("k", n)
		if got, want := keyHash(s), sha256.Sum256([]byte(s)); got != want {
			t.Errorf("keyHash of %d bytes = %x, want %x", n, got, want)
		}
	}
}

func TestIsUnavailable(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), true},
		{"bad conn", driver.ErrBadConn, true},
		{"conn done", sql.ErrConnDone, true},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"connection lost", &pgconn.PgError{Code: "08006"}, true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"statement_timeout", &pgconn.PgError{Code: "57014"}, true},
		{"lock_timeout", &pgconn.PgError{Code: "55P03"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"client error", Errorf(EINVALID, "bad"), false},
		{"not found", sql.ErrNoRows, false},
		{"canceled", context.Canceled, false},
		{"nil", nil, false},
	} {
		if got := IsUnavailable(c.err); got != c.want {
			t.Errorf("%s: IsUnavailable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
