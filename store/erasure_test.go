package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"service/internal/pgtest"
)

// erasureEnv is an app with a running campaign that measures a metric, a
// block with a form, a webhook on every event, and two users who used
// them all: the subject, whom the tests erase, and a bystander, whose
// rows must stay.
type erasureEnv struct {
	t        testing.TB
	db       *DB
	app      int64
	campaign *Campaign
	hook     *Webhook
	form     int64
}

// erasureProperty is a value only the subject's events carry.
const erasureProperty = "PROP-only-in-the-subjects-event-5c1e"

func newErasureEnv(t testing.TB, db *DB, app int64) *erasureEnv {
	t.Helper()
	ctx := context.Background()
	metric := metricDef(t, db, app, `{"key":"signed","name":"Signed","type":"conversion","eventId":"signup"}`)
	e := &erasureEnv{t: t, db: db, app: app, campaign: metricCampaign(t, db, app, fmt.Sprintf(`{"secondary":[%d]}`, metric))}
	var err error
	if e.hook, err = db.CreateWebhook(ctx, app, WebhookInput{URL: ptr("http://127.0.0.1:1/hook"), Events: &[]string{"*"}}); err != nil {
		t.Fatal(err)
	}
	name, pub := "Contact", ContentPublished
	c, err := db.CreateContent(ctx, app, ContentInput{Name: &name, Status: &pub,
		Items: json.RawMessage(`[{"type":"form","fields":[{"name":"email","type":"text"}]}]`)})
	if err != nil {
		t.Fatal(err)
	}
	e.form = c.ID
	return e
}

// use has userID do everything a user does: be assigned, identify with
// attributes, log events (a conversion among them) and submit the form.
func (e *erasureEnv) use(userID string, events int, property string) {
	e.t.Helper()
	ctx := context.Background()
	mustAssign(e.t, e.db, e.app, e.campaign.ID, VariantRequest{UserID: userID})
	if _, err := e.db.IdentifyUser(ctx, e.app, userID, map[string]any{"email": userID + "@example.com"}); err != nil {
		e.t.Fatal(err)
	}
	meta := json.RawMessage(fmt.Sprintf(`{"note":%q}`, property))
	for i := range events {
		id := "view"
		if i == 0 {
			id = "signup"
		}
		if _, err := e.db.LogEvent(ctx, e.app, &EventInput{EventID: id, UserID: userID, SessionID: "tab-" + userID, Metadata: meta}); err != nil {
			e.t.Fatal(err)
		}
	}
	data := json.RawMessage(fmt.Sprintf(`{"email":%q}`, userID+"@example.com"))
	if _, err := e.db.SubmitForm(ctx, e.app, FormSubmissionInput{ContentViewID: &e.form, UserID: &userID, Data: data}); err != nil {
		e.t.Fatal(err)
	}
}

// rowsOf counts the rows that name userID in each table that holds
// per-user data.
func (e *erasureEnv) rowsOf(userID string) map[string]int64 {
	e.t.Helper()
	applyMoves(e.t, e.db)
	key := storedKey('u', userID)
	n := map[string]int64{
		"users":            countRows(e.t, e.db, `SELECT COUNT(*) FROM users WHERE app_id = ? AND user_id = ?`, e.app, userID),
		"events":           countRows(e.t, e.db, `SELECT COUNT(*) FROM events WHERE app_id = ? AND user_id = ?`, e.app, userID),
		"assignments":      countRows(e.t, e.db, `SELECT COUNT(*) FROM assignments WHERE user_key = ?`, key),
		"metric_values":    countRows(e.t, e.db, `SELECT COUNT(*) FROM metric_values WHERE user_key = ?`, key),
		"form_submissions": countRows(e.t, e.db, `SELECT COUNT(*) FROM form_submissions WHERE app_id = ? AND user_id = ?`, e.app, userID),
	}
	if e.db.pgEngine() == nil {
		n["event_users"] = countRows(e.t, e.db, `SELECT COUNT(*) FROM event_users WHERE app_id = ? AND user_id = ?`, e.app, userID)
	}
	return n
}

// counters are the campaign's variants' counters, which an erasure leaves.
func (e *erasureEnv) counters() string {
	e.t.Helper()
	applyMoves(e.t, e.db)
	rows, err := e.db.read.Query(`SELECT id, impressions, conversions, cuped_sum_x FROM campaign_variants WHERE campaign_id = ? ORDER BY id`, e.campaign.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, imp, conv, x int64
		if err := rows.Scan(&id, &imp, &conv, &x); err != nil {
			e.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d:%d/%d/%d ", id, imp, conv, x)
	}
	return b.String() + fmt.Sprint(countRows(e.t, e.db, `SELECT COALESCE(SUM(sum), 0) FROM metric_sums WHERE campaign_id = ?`, e.campaign.ID))
}

// TestEraseUser erases one user's rows from every table that holds them,
// in one call, leaves the other user's rows and the campaign's counters
// as they were, redacts the webhook payload that named the user, logs the
// erasure under a digest of the id, and answers 0s when called again or
// for a user never seen. The id used again afterwards is a new user.
func TestEraseUser(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	e := newErasureEnv(t, db, app)
	subject, bystander := "subject-4d2", "bystander-9e1"
	// Before signing in, the subject visited as a session: assigned in a
	// second campaign, two events, a form, all by sessionId alone.
	anon := "anon-session-of-subject"
	other := metricCampaign(t, db, app, `{}`)
	mustAssign(t, db, app, other.ID, VariantRequest{SessionID: anon})
	for range 2 {
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", SessionID: anon}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SubmitForm(ctx, app, FormSubmissionInput{ContentViewID: &e.form, SessionID: &anon, Data: json.RawMessage(`{"email":"anon@example.com"}`)}); err != nil {
		t.Fatal(err)
	}
	e.use(subject, 30, erasureProperty)
	if _, err := db.IdentifySession(ctx, app, subject, anon, nil); err != nil {
		t.Fatal(err)
	}
	e.use(bystander, 5, "PROP-bystander")
	// Half of the subject's events in the index by user, half waiting;
	// on SQLite, so are the session's (in the index by session).
	if err := db.indexAll(ctx); err != nil {
		t.Fatal(err)
	}
	if db.pgEngine() == nil {
		stopIdleDrain(t, db)
		generationDue(db, false)
	}
	for range 3 {
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", UserID: subject}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", SessionID: anon}); err != nil {
		t.Fatal(err)
	}
	keep := e.rowsOf(bystander)
	before := e.counters()
	for table, n := range e.rowsOf(subject) {
		if n == 0 {
			t.Fatalf("the subject has no rows in %s before the erasure: the test checks nothing there", table)
		}
	}

	got, err := db.EraseUser(ctx, app, subject)
	if err != nil {
		t.Fatal(err)
	}
	// The session's assignment in the second campaign was copied to the
	// user by the link: two rows there, one in the first campaign.
	want := Erasure{Profile: 1, Events: 36, Assignments: 3, MetricValues: 1, FormSubmissions: 2, WebhookDeliveries: 2, Sessions: 1}
	if *got != want {
		t.Fatalf("erased %+v, want %+v", *got, want)
	}
	for table, n := range e.rowsOf(subject) {
		if n != 0 {
			t.Errorf("%d rows of the subject left in %s", n, table)
		}
	}
	skey := storedKey('s', anon)
	applyMoves(t, db)
	for q, n := range map[string]int64{
		"session_links":  countRows(t, db, `SELECT COUNT(*) FROM session_links WHERE app_id = ? AND (user_id = ? OR session_id = ?)`, app, subject, anon),
		"session events": countRows(t, db, `SELECT COUNT(*) FROM events WHERE app_id = ? AND session_id = ?`, app, anon),
		"session rows":   countRows(t, db, `SELECT COUNT(*) FROM assignments WHERE user_key = ?`, skey) + countRows(t, db, `SELECT COUNT(*) FROM metric_values WHERE user_key = ?`, skey),
		"session forms":  countRows(t, db, `SELECT COUNT(*) FROM form_submissions WHERE app_id = ? AND session_id = ?`, app, anon),
	} {
		if n != 0 {
			t.Errorf("%d of the linked session's %s left", n, q)
		}
	}
	if db.pgEngine() == nil {
		// What the indexer held of the subject's and the session's events
		// went with them: indexing what waits brings none back.
		indexGeneration(t, db)
		mustIndexExactly(t, db)
		if n := countRows(t, db, `SELECT COUNT(*) FROM event_users WHERE (app_id = ? AND user_id = ?) OR (app_id = ? AND user_id = ?)`, app, subject, -app, anon); n != 0 {
			t.Errorf("event_users holds %d rows of the subject or the session", n)
		}
	}
	if after := e.rowsOf(bystander); fmt.Sprint(after) != fmt.Sprint(keep) {
		t.Errorf("the bystander's rows went from %v to %v", keep, after)
	}
	if after := e.counters(); after != before {
		t.Errorf("campaign counters moved from %s to %s", before, after)
	}
	if list, err := db.FindEvents(ctx, app, EventFilter{UserID: subject, Limit: 100}); err != nil || len(list) != 0 {
		t.Errorf("FindEvents finds %d events of the subject (%v)", len(list), err)
	}

	all, _, err := db.FindDeliveries(ctx, app, e.hook.ID, "", ListOptions{Limit: 100, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	var deliveries []*Delivery
	for _, d := range all {
		if d.Event == EventFormSubmitted {
			deliveries = append(deliveries, d)
		}
	}
	if len(deliveries) != 3 {
		t.Fatalf("%d form deliveries, want 3", len(deliveries))
	}
	for _, d := range deliveries {
		var p map[string]any
		if err := json.Unmarshal(d.Payload, &p); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.Contains(string(d.Payload), bystander):
			if d.RedactedAt != nil {
				t.Errorf("the bystander's delivery was redacted: %s", d.Payload)
			}
		case d.RedactedAt == nil || p["userId"] != nil || p["sessionId"] != nil || fmt.Sprint(p["data"]) != "map[]" || p["formSubmissionId"] == nil:
			t.Errorf("the subject's delivery: redactedAt %v, payload %s", d.RedactedAt, d.Payload)
		}
	}

	entries, err := db.FindAuditLog(ctx, AuditFilter{AppID: app, Action: ActionEndUserErased})
	if err != nil || len(entries) != 1 {
		t.Fatalf("%d erasure entries (%v)", len(entries), err)
	}
	a := entries[0]
	b, _ := json.Marshal(a)
	if a.Object.Type != ObjectEndUser || !strings.HasPrefix(a.Object.Name, "hmac-sha256:") || strings.Contains(string(b), subject) || a.Actor.Type != ActorCLI {
		t.Errorf("audit entry %s", b)
	}
	if string(a.Changes["events"].After) != "36" {
		t.Errorf("audit entry's events: %s", a.Changes["events"].After)
	}

	for _, user := range []string{subject, "never-seen"} {
		again, err := db.EraseUser(ctx, app, user)
		if err != nil || *again != (Erasure{}) {
			t.Errorf("erasing %s again: %+v, %v; want all 0", user, again, err)
		}
	}
	entries, _ = db.FindAuditLog(ctx, AuditFilter{AppID: app, Action: ActionEndUserErased})
	if len(entries) != 3 || entries[0].Object.Name == entries[1].Object.Name || entries[1].Object.Name != entries[2].Object.Name {
		t.Errorf("audit entries %d; one id must have one digest, two ids two", len(entries))
	}
	_, err = db.EraseUser(ctx, app, strings.Repeat("x", MaxUserIDLen+1))
	wantCode(t, err, EINVALID)
	_, err = db.EraseUser(ctx, app+1000, subject)
	wantCode(t, err, ENOTFOUND)

	// The id comes back as a new user: assigned and counted again,
	// though this process had the old assignment in memory.
	mustAssign(t, db, app, e.campaign.ID, VariantRequest{UserID: subject})
	if n := e.rowsOf(subject)["assignments"]; n != 1 {
		t.Errorf("%d assignments of the id after it came back, want 1", n)
	}
	if after := e.counters(); after == before {
		t.Errorf("the new life's impression was not counted: %s", after)
	}

	// The leader's scrub settles every erasure once, then has nothing to do.
	if n := scrubSettled(t, db); n != 3 {
		t.Errorf("ScrubErasures = %d; want 3", n)
	}
	if n, err := db.ScrubErasures(ctx); err != nil || n != 0 {
		t.Errorf("ScrubErasures again = %d, %v; want 0", n, err)
	}
}

// TestEraseUserLeavesNoBytes: on SQLite, once an erasure and the leader's
// scrub are done, neither the database file nor its WAL holds the user's
// id or a value only the user's events carried, free pages and old WAL
// frames included.
func TestEraseUserLeavesNoBytes(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, path := mustOpenDBPath(t)
	db.Now = func() time.Time { return eventsT0 }
	app, err := db.CreateApp(ctx, "a", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := newErasureEnv(t, db, app.ID)
	subject := "subject-bytes-71aa"
	// The two users' events interleave on the pages, some large enough to
	// take overflow pages, and the index by user splits its pages.
	for range 4 {
		e.use(subject, 60, erasureProperty)
		e.use("bystander-2", 60, "PROP-bystander")
		big := json.RawMessage(fmt.Sprintf(`{"note":%q,"pad":%q}`, erasureProperty, strings.Repeat("x", 9000)))
		if _, err := db.LogEvent(ctx, app.ID, &EventInput{EventID: "big", UserID: subject, Metadata: big}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.indexAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{subject, erasureProperty} {
		if !secFileHas(t, path, s) {
			t.Fatalf("%q is not in the file before the erasure: the check is blind", s)
		}
	}
	if _, err := db.EraseUser(ctx, app.ID, subject); err != nil {
		t.Fatal(err)
	}
	if n := scrubSettled(t, db); n != 1 {
		t.Fatalf("ScrubErasures = %d; want 1", n)
	}
	for _, s := range []string{subject, erasureProperty} {
		if secFileHas(t, path, s) {
			t.Errorf("%q is still in the database or its WAL after the erasure and a checkpoint", s)
			debugWhere(t, db, path, s)
		}
	}
	if !secFileHas(t, path, "PROP-bystander") {
		t.Error("the bystander's events are gone from the file too")
	}
}

// scrubSettled runs the leader's scrub until it settles the erasures it
// finds, and returns how many it settled. A scrub that finds the database
// busy (a reader or the checkpointer in the way on SQLite, another
// session's old snapshot on PostgreSQL) settles nothing and leaves them
// for its next run, as the leader's job does; the test allows a generous
// while for that.
func scrubSettled(t *testing.T, db *DB) int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := db.ScrubErasures(context.Background())
		if err != nil {
			t.Fatalf("ScrubErasures: %v", err)
		}
		if n != 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func debugWhere(t *testing.T, db *DB, path, s string) {
	for _, p := range []string{path, path + "-wal"} {
		b, _ := os.ReadFile(p)
		off := 0
		for {
			i := bytes.Index(b[off:], []byte(s))
			if i < 0 {
				break
			}
			off += i
			pg := off/4096 + 1
			var name string
			_ = db.read.QueryRow(`SELECT name FROM dbstat WHERE pageno = ?`, pg).Scan(&name)
			lo := max(0, off-60)
			t.Logf("%s: offset %d page %d (%s): %q", p, off, pg, name, b[lo:off+len(s)+20])
			off += len(s)
		}
	}
}

// TestScrubIgnoresOtherDatabases: a transaction open in another database
// of the same PostgreSQL server, which VACUUM of this one's tables does not
// wait for, does not hold the scrub back either: the first scrub after an
// erasure settles it. On SQLite, whose files share nothing, a reader of
// another file is as harmless.
func TestScrubIgnoresOtherDatabases(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	app, err := db.CreateApp(ctx, "a", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := newErasureEnv(t, db, app.ID)
	e.use("scrubbed-1", 3, "PROP-scrubbed")

	var other *sql.DB
	if pgtest.Selected() {
		other, err = sql.Open("pgx", pgtest.NewDatabase(t))
	} else {
		other, err = sql.Open("sqlite", tempDBPath(t))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// A write gives the transaction an id and a snapshot that stays open.
	if _, err := tx.ExecContext(ctx, `CREATE TABLE held (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EraseUser(ctx, app.ID, "scrubbed-1"); err != nil {
		t.Fatal(err)
	}
	// Retried only through the busy moments any scrub allows (a reader or
	// the checkpointer on SQLite): the other database's transaction stays
	// open throughout, so were it waited for, nothing would settle.
	if n := scrubSettled(t, db); n != 1 {
		t.Fatalf("ScrubErasures with another database's transaction open = %d; want 1", n)
	}
}

// TestEraseForgottenByOtherProcess: a process that remembers a user
// (another server on the same database) stops answering them from memory
// soon after another process erases them: its next answer assigns them
// anew and records an impression, as for a user it never saw.
func TestEraseForgottenByOtherProcess(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenDBPath(t)
	server := mustOpenDBAt(t, path)
	app, err := db.CreateApp(ctx, "a", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := newErasureEnv(t, db, app.ID)
	recorded := func() bool {
		t.Helper()
		b, err := server.Variant(ctx, app.ID, e.campaign.ID, &VariantRequest{UserID: "remembered"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || m["variantId"] == nil {
			t.Fatalf("not assigned: %s (%v)", b, err)
		}
		return m["impressionRecorded"] == true
	}
	if !recorded() {
		t.Fatal("the first answer recorded no impression")
	}
	if recorded() {
		t.Fatal("the second answer recorded an impression again")
	}
	if _, err := db.EraseUser(ctx, app.ID, "remembered"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !recorded(); {
		if time.Now().After(deadline) {
			t.Fatal("the other process still answers the erased user from memory 10 s after the erasure")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
