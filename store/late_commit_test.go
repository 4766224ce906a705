package store

import (
	"context"
	"testing"
)

// TestEventCommittedLateWithALowerID: on PostgreSQL ids follow the order
// they are drawn, not the order their transactions commit. An event whose
// transaction draws its id first and commits last (another replica's group
// commit, slower) is counted by everything that reads events: the
// audience rules for one user, the audience recount, the event list. On
// SQLite one writer at a time commits, so ids follow commit order, which
// the test checks instead of the overlap it cannot make.
func TestEventCommittedLateWithALowerID(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, audienceT0)
	aud := mustCreateAudience(t, db, app, `{"rules":[{"ruleType":"event","eventId":"purchase","operator":"has_performed"}]}`)
	mustTouchUser(t, db, app, "late", nil)
	mustTouchUser(t, db, app, "early", nil)

	// The late event's transaction: its id is drawn now, its commit comes
	// after the other event's.
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var lateID int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO events (app_id, event_id, user_id, ts) VALUES (?, ?, ?, ?) RETURNING id`,
		app, "purchase", "late", ms(clock.Now())).Scan(&lateID); err != nil {
		t.Fatal(err)
	}
	if db.pgEngine() == nil {
		// SQLite holds the write lock for tx: it commits first.
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := db.indexAll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	early, err := db.LogEvent(ctx, app, &EventInput{EventID: "purchase", UserID: "early"})
	if err != nil {
		t.Fatal(err)
	}
	if early.ID <= lateID {
		t.Fatalf("the later event has id %d, the earlier %d: ids are not drawn in order", early.ID, lateID)
	}
	if db.pgEngine() != nil {
		// The audience is read once before the late commit, as a replica
		// may have read it meanwhile.
		if inAudience(t, db, app, aud.ID, "late") {
			t.Fatal("an uncommitted event counted")
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for _, user := range []string{"late", "early"} {
		if !inAudience(t, db, app, aud.ID, user) {
			t.Errorf("user %s's purchase is not seen by the audience rules", user)
		}
	}
	a, err := db.RecountAudience(ctx, app, aud.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.CustomerCount != 2 {
		t.Errorf("recount found %d customers, want 2", a.CustomerCount)
	}
	events, err := db.FindEvents(ctx, app, EventFilter{EventID: "purchase", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Errorf("the event list has %d events, want 2", len(events))
	}
}
