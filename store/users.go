package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// UserProfile is what the service knows about one end user of an app.
type UserProfile struct {
	UserID     string         `json:"userId"`
	Attributes map[string]any `json:"attributes"`
	FirstSeen  Time           `json:"firstSeen"`
	LastSeen   Time           `json:"lastSeen"`
}

// lastSeenResolution is how stale last_seen may get before a sighting
// without attributes writes it again: a hot path that sees the same user
// many times a minute then costs no write at all.
const lastSeenResolution = 60_000 // milliseconds

// touchUser records a sighting of a user inside the caller's transaction:
// it inserts the user when unknown (first_seen = last_seen = tx.now), merges
// attrs when there are any (shallow: a key set to null is removed), and
// otherwise moves last_seen forward at most once a minute. Event logging and
// variant requests call it so that every user they see is a known user.
func (tx *Tx) touchUser(appID int64, userID string, attrs map[string]any) error {
	fe := FieldErrors{}
	checkUserID(fe, "userId", userID)
	if err := fe.Err(); err != nil {
		return err
	}
	if len(attrs) == 0 {
		now := ms(tx.now)
		// One statement whatever the state: the WHERE of the upsert skips
		// the write when last_seen is recent, so a hot user costs a read.
		_, err := tx.exec(`INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', ?, ?)
			ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
			WHERE users.last_seen <= excluded.last_seen - ?`, appID, userID, now, now, lastSeenResolution)
		return err
	}
	return tx.mergeUser(appID, userID, attrs)
}

// mergeUser merges attrs into the stored profile. The merge happens in Go
// rather than with SQLite's json_patch because json_patch merges nested
// objects recursively, and the profile merge is shallow: a nested object
// replaces the old value whole.
func (tx *Tx) mergeUser(appID int64, userID string, attrs map[string]any) error {
	var cur string
	var last int64
	err := tx.queryRow(`SELECT attributes, last_seen FROM users WHERE app_id = ? AND user_id = ?`, appID, userID).Scan(&cur, &last)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	merged := map[string]any{}
	if found {
		if err := json.Unmarshal([]byte(cur), &merged); err != nil || merged == nil {
			merged = map[string]any{}
		}
	}
	fe := FieldErrors{}
	for k, v := range attrs {
		if k == "" {
			fe.Add("attributes", "must not have an empty key")
			continue
		}
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = v
		}
	}
	if len(merged) > MaxAttributes {
		fe.Add("attributes", fmt.Sprintf("must leave the profile with at most %d attributes (it would have %d)", MaxAttributes, len(merged)))
	}
	b, err := json.Marshal(merged)
	if err != nil {
		fe.Add("attributes", "must be a JSON object")
	} else if len(b) > MaxAttributesBytes {
		fe.Add("attributes", fmt.Sprintf("must leave the profile at most %d bytes of JSON", MaxAttributesBytes))
	}
	if err := fe.Err(); err != nil {
		return err
	}
	now := ms(tx.now)
	// Stored profiles are always written by json.Marshal (sorted keys), so
	// equal text means an unchanged profile.
	if found && string(b) == cur && last > now-lastSeenResolution {
		return nil
	}
	_, err = tx.exec(`INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (app_id, user_id) DO UPDATE SET attributes = excluded.attributes, last_seen = `+tx.db.eng.greatest()+`(users.last_seen, excluded.last_seen)`,
		appID, userID, string(b), now, now)
	return err
}

// IdentifyUser records a user and merges attrs into its profile (shallow:
// a key set to null is removed), creating the profile when needed, and
// returns the profile. It is an SDK hot path, so it joins the group commit.
func (db *DB) IdentifyUser(ctx context.Context, appID int64, userID string, attrs map[string]any) (*UserProfile, error) {
	return db.IdentifySession(ctx, appID, userID, "", attrs)
}

// IdentifySession is IdentifyUser that also links sessionID, when given,
// to the user, in the same transaction (see links.go). A session linked
// to another user is ELINKED, and then nothing is written: not the
// attributes either.
func (db *DB) IdentifySession(ctx context.Context, appID int64, userID, sessionID string, attrs map[string]any) (*UserProfile, error) {
	fe := FieldErrors{}
	checkUserID(fe, "userId", userID)
	checkLen(fe, "sessionId", sessionID, MaxUserIDLen)
	// Refusing what is wrong whatever the stored profile holds before
	// joining a batch spares the batch a rollback and retry.
	checkAttributes(fe, attrs)
	if _, empty := attrs[""]; empty {
		fe.Add("attributes", "must not have an empty key")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var p *UserProfile
	var outcome int64
	err := db.batch.do(ctx, func(tx *Tx) error {
		p, outcome = nil, 0
		if sessionID != "" {
			var err error
			if outcome, err = tx.linkSession(appID, sessionID, userID); err != nil || outcome == linkOther {
				return err
			}
		}
		if err := tx.touchUser(appID, userID, attrs); err != nil {
			return err
		}
		var err error
		p, err = scanUserProfile(tx.queryRow(`SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = ? AND user_id = ?`, appID, userID))
		return err
	})
	if err == nil && outcome == linkOther {
		err = errLinkedElsewhere(sessionID)
	}
	return p, err
}

// FindUserByID returns a user's profile.
func (db *DB) FindUserByID(ctx context.Context, appID int64, userID string) (*UserProfile, error) {
	fe := FieldErrors{}
	checkUserID(fe, "userId", userID)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	p, err := scanUserProfile(db.read.QueryRowContext(ctx, `SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = ? AND user_id = ?`, appID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("user")
	}
	return p, err
}

func scanUserProfile(row scanner) (*UserProfile, error) {
	p := &UserProfile{}
	var attrs string
	var first, last int64
	if err := row.Scan(&p.UserID, &attrs, &first, &last); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(attrs), &p.Attributes); err != nil || p.Attributes == nil {
		p.Attributes = map[string]any{}
	}
	p.FirstSeen, p.LastSeen = NewTime(fromMS(first)), NewTime(fromMS(last))
	return p, nil
}
