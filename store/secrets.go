package store

import (
	"context"
	"errors"
	"fmt"

	"service/keyring"
)

// Webhook secrets at rest. Every write of a secret goes through sealSecret
// and every read that needs the plaintext through openSecret, so the
// encryption stays in this one place. A secret is sealed only when the
// database has keys (SetSecretKeys); values without keyring.Prefix are
// plaintext, written before a key was configured or by a process without
// one, and read as they are.

// secretColumns lists the webhook columns holding a secret, which
// SetSecretKeys checks and re-encrypts.
var secretColumns = []string{"secret", "previous_secret"}

// errNoSecretKey is the error of a sealed secret read without keys.
var errNoSecretKey = errors.New("webhook secret is encrypted but no secret key is configured")

// sealSecret returns the value to store for the secret plain.
func (db *DB) sealSecret(plain string) (string, error) {
	if plain == "" || db.secrets == nil {
		return plain, nil
	}
	return db.secrets.Seal(plain)
}

// openSecret returns the plaintext of a stored secret.
func (db *DB) openSecret(stored string) (string, error) {
	if !keyring.Sealed(stored) {
		return stored, nil
	}
	if db.secrets == nil {
		return "", errNoSecretKey
	}
	return db.secrets.Open(stored)
}

// SecretKeyError is the start-up refusal of SetSecretKeys: a secret that
// cannot be decrypted with the keys given (or without any).
type SecretKeyError struct {
	WebhookID int64
	Err       error
}

func (e *SecretKeyError) Error() string {
	return fmt.Sprintf("webhook %d: %v", e.WebhookID, e.Err)
}

func (e *SecretKeyError) Unwrap() error { return e.Err }

// SetSecretKeys makes ring the keys of webhook secrets, and brings the
// stored secrets in line with it in one transaction: each must open, and
// every one not already sealed under the ring's first key (plaintext, or
// under an older key of the ring) is sealed under it. It returns how many
// it re-sealed. Any secret that does not open fails the whole call and
// changes nothing, so a wrong key is found at start rather than at the
// first delivery.
//
// With a nil ring, secrets stay plaintext; it fails if any is sealed, and
// otherwise returns how many plaintext secrets are stored.
//
// Call it before the database is shared with other goroutines.
func (db *DB) SetSecretKeys(ctx context.Context, ring *keyring.Ring) (int, error) {
	n := 0
	err := db.withTx(ctx, func(tx *Tx) error {
		n = 0
		// The replaced values are zeroed in the file: the SQLite writer
		// always deletes securely (see sqlite.Pools).
		for _, col := range secretColumns {
			rows, err := tx.query(`SELECT id, ` + col + ` FROM webhooks WHERE ` + col + ` != ''`)
			if err != nil {
				return err
			}
			type row struct {
				id     int64
				stored string
			}
			var list []row
			for rows.Next() {
				var r row
				if err := rows.Scan(&r.id, &r.stored); err != nil {
					rows.Close()
					return err
				}
				list = append(list, r)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, r := range list {
				if ring == nil {
					if keyring.Sealed(r.stored) {
						return &SecretKeyError{r.id, errNoSecretKey}
					}
					n++
					continue
				}
				if ring.SealedUnderFirst(r.stored) {
					// Opened all the same: a value that fails to open
					// must stop the start, not the first delivery.
					if _, err := ring.Open(r.stored); err != nil {
						return &SecretKeyError{r.id, err}
					}
					continue
				}
				plain, err := ring.Open(r.stored)
				if err != nil {
					return &SecretKeyError{r.id, err}
				}
				sealed, err := ring.Seal(plain)
				if err != nil {
					return err
				}
				if _, err := tx.exec(`UPDATE webhooks SET `+col+` = ? WHERE id = ?`, sealed, r.id); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if n > 0 && ring != nil {
		// The replaced values may live on beside the table (a WAL, old
		// row versions) until the engine scrubs them.
		db.eng.scrubReplaced(ctx)
	}
	db.secrets = ring
	return n, nil
}
