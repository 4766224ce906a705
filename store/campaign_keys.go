package store

// Campaign keys: a campaign's name for code. Ids differ between a team's
// staging and production databases; a key is what their code and the
// OpenFeature providers ask for, and it is the same wherever the campaign
// was made from the same name.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// MaxCampaignKeyLen bounds a campaign key.
const MaxCampaignKeyLen = 64

// campaignKeyRule is the rule a key follows, as the API's errors say it.
const campaignKeyRule = "must be 1 to 64 characters of a-z, 0-9, _, . and -, starting with a letter or digit, and not only digits"

// ValidCampaignKey reports whether k may be a campaign key: 1 to 64
// characters of [a-z0-9][a-z0-9_.-]*, and not only digits, since the
// variant route reads a number as a campaign id.
func ValidCampaignKey(k string) bool {
	if len(k) == 0 || len(k) > MaxCampaignKeyLen {
		return false
	}
	digits := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if i == 0 && !alnum || !alnum && c != '_' && c != '.' && c != '-' {
			return false
		}
		digits = digits && c >= '0' && c <= '9'
	}
	return !digits
}

// CampaignKeySlug makes the key a campaign named name gets when none is
// given: ASCII letters in lower case, each run of anything else one "-",
// trimmed of "-" and cut to 64 characters. Only ASCII is folded, so that
// "K" (the Kelvin sign) is not "k" here while a dash in the database's
// lower(). A name with nothing left is "campaign", and a name of digits
// only is prefixed with "campaign-" (a number in the path is an id).
func CampaignKeySlug(name string) string {
	b := make([]byte, 0, len(name))
	dash := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && len(b) > 0 {
				b = append(b, '-')
			}
			dash = false
			b = append(b, c)
			continue
		}
		dash = true
	}
	s := string(b)
	if s == "" {
		return "campaign"
	}
	if !ValidCampaignKey(trimKey(s, MaxCampaignKeyLen)) {
		s = "campaign-" + s
	}
	return trimKey(s, MaxCampaignKeyLen)
}

// trimKey cuts k to at most n characters without leaving a trailing "-".
func trimKey(k string, n int) string {
	if len(k) > n {
		k = k[:n]
	}
	for len(k) > 0 && k[len(k)-1] == '-' {
		k = k[:len(k)-1]
	}
	return k
}

// freeCampaignKey returns base, or base-2, base-3… (cut so the whole stays
// within 64 characters), whichever no other campaign of the app holds.
func (tx *Tx) freeCampaignKey(appID int64, base string) (string, error) {
	for n := 1; ; n++ {
		k := base
		if n > 1 {
			suffix := "-" + strconv.Itoa(n)
			k = trimKey(base, MaxCampaignKeyLen-len(suffix)) + suffix
		}
		taken, err := tx.campaignKeyTaken(appID, k, 0)
		if err != nil {
			return "", err
		}
		if !taken {
			return k, nil
		}
	}
}

// campaignKeyTaken reports whether a campaign of the app other than except
// holds the key.
func (tx *Tx) campaignKeyTaken(appID int64, key string, except int64) (bool, error) {
	var id int64
	err := tx.queryRow(`SELECT id FROM campaigns WHERE app_id = ? AND key = ?`, appID, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return id != except, nil
}

// keyTakenError is the refusal of a key another campaign of the app holds.
func keyTakenError(key string) error {
	return &Error{Code: EINVALID, Message: fmt.Sprintf("key %q is taken by another campaign of this app", key),
		Details: map[string]any{"fields": map[string]any{"key": "is taken by another campaign of this app"}}}
}

// backfillCampaignKeys gives every campaign without a key one made from
// its name, in id order, the way a new campaign gets one. It runs after
// the migrations (see 0017_campaign_keys); with nothing to do it is one
// indexed read. Replicas starting together may race: the loser's unique
// violation is retried, and then finds nothing left.
func (db *DB) backfillCampaignKeys(ctx context.Context) error {
	var err error
	for range 3 {
		err = db.withTx(ctx, func(tx *Tx) error {
			rows, err := tx.query(`SELECT id, app_id, name FROM campaigns WHERE key IS NULL ORDER BY id`)
			if err != nil {
				return err
			}
			type todo struct {
				id, app int64
				name    string
			}
			var list []todo
			for rows.Next() {
				var t todo
				if err := rows.Scan(&t.id, &t.app, &t.name); err != nil {
					rows.Close()
					return err
				}
				list = append(list, t)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, t := range list {
				k, err := tx.freeCampaignKey(t.app, CampaignKeySlug(t.name))
				if err != nil {
					return err
				}
				if _, err := tx.exec(`UPDATE campaigns SET key = ? WHERE id = ? AND key IS NULL`, k, t.id); err != nil {
					return err
				}
			}
			tx.changed = tx.changed || len(list) > 0
			return nil
		})
		if err == nil || !db.lostToConcurrent(err) {
			return err
		}
	}
	return err
}

// keyRef is a campaign key within its app, as the key cache holds it.
type keyRef struct {
	app int64
	key string
}

// CampaignIDByKey returns the id of the app's campaign with the key, from
// memory after the first lookup of each generation (the cache of live
// campaigns, whose generation any change to a campaign moves). A key that
// cannot be one is not found without a read.
func (db *DB) CampaignIDByKey(ctx context.Context, appID int64, key string) (int64, error) {
	if !ValidCampaignKey(key) {
		return 0, notFound("campaign")
	}
	gen := db.gen.Load()
	if id, ok := db.cache.getKey(gen, keyRef{appID, key}); ok {
		return id, nil
	}
	var id int64
	err := db.reader(ctx).queryRow(`SELECT id FROM campaigns WHERE app_id = ? AND key = ?`, appID, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		// Unknown keys are not remembered: anyone with a client key could
		// otherwise fill memory with made-up ones.
		return 0, notFound("campaign")
	} else if err != nil {
		return 0, err
	}
	db.cache.put(gen, func() { db.cache.byKey[keyRef{appID, key}] = id })
	return id, nil
}

// withTxRetry is withTx retried when a concurrent transaction of another
// process took what this one wrote first (on PostgreSQL: two replicas
// keying two campaigns of one name at once). The retry sees the winner's
// row and picks the next free key, or refuses the taken one.
func (db *DB) withTxRetry(ctx context.Context, fn func(tx *Tx) error) error {
	var err error
	for range 3 {
		if err = db.withTx(ctx, fn); err == nil || !db.lostToConcurrent(err) {
			return err
		}
	}
	return err
}
