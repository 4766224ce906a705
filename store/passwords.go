package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// A dashboard password changes three ways: from the command line (users
// set-password), by its user on the Change password page, and through a
// one-time reset link an owner makes. Each, in the transaction that
// stores the new hash, ends the user's sessions (a stolen cookie must not
// outlive the password it was signed in with) and retires the user's
// pending reset links.

// PasswordResetTTL is how long a reset link stays usable.
const PasswordResetTTL = 24 * time.Hour

// PasswordReset is a one-time link that sets a user's password.
type PasswordReset struct {
	ID        int64
	UserID    int64
	Email     string
	CreatedAt Time
	ExpiresAt Time
	UsedAt    *Time
}

// Reset link errors, each a page of its own.
var (
	ErrResetInvalid = Errorf(ENOTFOUND, "this password reset link is invalid, or a newer one or a password change replaced it")
	ErrResetUsed    = Errorf(ENOTFOUND, "this password reset link has already been used")
	ErrResetExpired = Errorf(ENOTFOUND, "this password reset link has expired; ask an owner for a new one")
)

// errCurrentChanged refuses a change whose current password was checked
// against a hash that another change replaced since.
var errCurrentChanged = Errorf(EINVALID, "your password was changed meanwhile; sign in again with the new one")

// passwordFields are what the audit log records of a password change: how
// many sessions it ended. Never the password, its hash or a link.
type passwordFields struct {
	SessionsEnded int64 `json:"sessionsEnded"`
}

// resetLinkFields are what the audit log records of a reset link: when
// it expires. Never its token.
type resetLinkFields struct {
	ExpiresAt Time `json:"expiresAt"`
}

// setPassword stores hash as u's password, ends every live session of
// u's but the one whose cookie token is keep ("" ends them all), retires
// u's pending reset links and records action. It returns how many
// sessions ended.
func (tx *Tx) setPassword(u *DashboardUser, hash []byte, keep, action string) (int64, error) {
	if _, err := tx.exec(`UPDATE dashboard_users SET password_hash = ? WHERE id = ?`, string(hash), u.ID); err != nil {
		return 0, err
	}
	// Expired sessions go too, uncounted: they ended already.
	if _, err := tx.exec(`DELETE FROM dashboard_sessions WHERE user_id = ? AND expires_at <= ?`, u.ID, ms(tx.now)); err != nil {
		return 0, err
	}
	var res sql.Result
	var err error
	if keep == "" {
		res, err = tx.exec(`DELETE FROM dashboard_sessions WHERE user_id = ?`, u.ID)
	} else {
		res, err = tx.exec(`DELETE FROM dashboard_sessions WHERE user_id = ? AND token_hash <> ?`, u.ID, tokenHash(keep))
	}
	if err != nil {
		return 0, err
	}
	ended, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if _, err := tx.exec(`DELETE FROM dashboard_password_resets WHERE user_id = ? AND used_at IS NULL`, u.ID); err != nil {
		return 0, err
	}
	return ended, tx.audit(auditRecord{instance: true, action: action, objType: ObjectUser, objID: u.ID, objName: u.Email,
		after: passwordFields{ended}})
}

// SetDashboardPassword sets the password of the user with this email, as
// an operator does from the command line, and ends every session of
// theirs. It returns how many sessions ended.
func (db *DB) SetDashboardPassword(ctx context.Context, email, password string) (int64, error) {
	// Hashing is slow on purpose; it happens before the write transaction
	// so other writers do not wait for it.
	hash, err := hashPassword("password", password)
	if err != nil {
		return 0, err
	}
	var ended int64
	err = db.withTx(ctx, func(tx *Tx) error {
		u, err := tx.findUserByEmail(email)
		if err != nil {
			return err
		}
		ended, err = tx.setPassword(u, hash, "", "user.password_changed")
		return err
	})
	return ended, err
}

// ChangeDashboardPassword is a signed-in user's change of their own
// password: current must be the password they have (ErrBadCredentials
// otherwise), and password, under the rules of a new one, must differ
// from it. Every other session of theirs ends; the one whose cookie token
// is keep stays signed in. It returns how many sessions ended.
func (db *DB) ChangeDashboardPassword(ctx context.Context, userID int64, current, password, keep string) (int64, error) {
	fe := FieldErrors{}
	if current == "" {
		fe.Add("current", "is required")
	}
	passwordRules(fe, "password", password)
	if current != "" && password == current {
		fe.Add("password", "must differ from the current password")
	}
	if err := fe.Err(); err != nil {
		return 0, err
	}
	u := &DashboardUser{}
	var old string
	err := db.read.QueryRowContext(ctx, `SELECT id, email, password_hash FROM dashboard_users WHERE id = ?`, userID).Scan(&u.ID, &u.Email, &old)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound("dashboard user")
	} else if err != nil {
		return 0, err
	}
	if bcrypt.CompareHashAndPassword([]byte(old), []byte(current)) != nil {
		return 0, ErrBadCredentials
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), PasswordCost)
	if err != nil {
		return 0, err
	}
	var ended int64
	err = db.withTx(ctx, func(tx *Tx) error {
		// The current password was checked against old: a change that
		// landed since wins, and this one asks to sign in again.
		var now string
		if err := tx.queryRow(`SELECT password_hash FROM dashboard_users WHERE id = ?`, u.ID).Scan(&now); errors.Is(err, sql.ErrNoRows) {
			return notFound("dashboard user")
		} else if err != nil {
			return err
		}
		if now != old {
			return errCurrentChanged
		}
		ended, err = tx.setPassword(u, hash, keep, "user.password_changed")
		return err
	})
	return ended, err
}

// CreatePasswordReset makes a one-time link that sets the password of the
// user with this email, valid for PasswordResetTTL, on behalf of the
// owner createdBy, who may not make one for themselves (they change
// theirs on the Change password page). A newer link replaces the user's
// pending one. It returns the link's token, which exists only in this
// answer: the database keeps its SHA-256, as for invitations.
func (db *DB) CreatePasswordReset(ctx context.Context, email string, createdBy int64) (*PasswordReset, string, error) {
	token, err := randomToken()
	if err != nil {
		return nil, "", err
	}
	pr := &PasswordReset{}
	err = db.withTx(ctx, func(tx *Tx) error {
		u, err := tx.findUserByEmail(email)
		if err != nil {
			return err
		}
		if u.ID == createdBy {
			return Errorf(EINVALID, "a reset link is for another user; change your own password on the Change password page")
		}
		if _, err := tx.exec(`DELETE FROM dashboard_password_resets WHERE user_id = ? AND used_at IS NULL`, u.ID); err != nil {
			return err
		}
		pr.UserID, pr.Email = u.ID, u.Email
		pr.CreatedAt = NewTime(tx.now.Truncate(time.Millisecond))
		pr.ExpiresAt = NewTime(tx.now.Add(PasswordResetTTL).Truncate(time.Millisecond))
		if pr.ID, err = tx.insertID(`INSERT INTO dashboard_password_resets (token_hash, user_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			tokenHash(token), u.ID, nullID(createdBy), ms(tx.now), ms(pr.ExpiresAt.Time)); err != nil {
			return err
		}
		return tx.audit(auditRecord{instance: true, action: "user.reset_link_created", objType: ObjectUser, objID: u.ID, objName: u.Email,
			after: resetLinkFields{pr.ExpiresAt}})
	})
	if err != nil {
		return nil, "", err
	}
	return pr, token, nil
}

// FindPasswordReset returns the reset link of a token, or the error that
// says why it cannot be used.
func (db *DB) FindPasswordReset(ctx context.Context, token string) (*PasswordReset, error) {
	return findPasswordReset(ctx, db.read, token, db.Now())
}

func findPasswordReset(ctx context.Context, q rowQuerier, token string, now time.Time) (*PasswordReset, error) {
	if token == "" {
		return nil, ErrResetInvalid
	}
	pr := &PasswordReset{}
	var created, expires int64
	var used sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT r.id, r.user_id, u.email, r.created_at, r.expires_at, r.used_at
		FROM dashboard_password_resets r JOIN dashboard_users u ON u.id = r.user_id WHERE r.token_hash = ?`, tokenHash(token)).
		Scan(&pr.ID, &pr.UserID, &pr.Email, &created, &expires, &used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrResetInvalid
	case err != nil:
		return nil, err
	}
	pr.CreatedAt, pr.ExpiresAt, pr.UsedAt = NewTime(fromMS(created)), NewTime(fromMS(expires)), TimePtr(nullMS(used))
	switch {
	case pr.UsedAt != nil:
		return nil, ErrResetUsed
	case !now.Before(pr.ExpiresAt.Time):
		return nil, ErrResetExpired
	}
	return pr, nil
}

// ResetDashboardPassword spends a reset link to set its user's password,
// ends every session of theirs, and returns the user, ready to be signed
// in. The check and the use are one transaction, so a link works once
// however many browsers race with it.
func (db *DB) ResetDashboardPassword(ctx context.Context, token, password string) (*DashboardUser, error) {
	if _, err := db.FindPasswordReset(ctx, token); err != nil {
		return nil, err
	}
	hash, err := hashPassword("password", password)
	if err != nil {
		return nil, err
	}
	u := &DashboardUser{}
	err = db.withTx(ctx, func(tx *Tx) error {
		pr, err := findPasswordReset(tx.ctx, tx.raw, token, tx.now)
		if err != nil {
			return err
		}
		res, err := tx.exec(`UPDATE dashboard_password_resets SET used_at = ? WHERE id = ? AND used_at IS NULL`, ms(tx.now), pr.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrResetUsed
		}
		var created int64
		if err := tx.queryRow(`SELECT id, email, owner, created_at FROM dashboard_users WHERE id = ?`, pr.UserID).
			Scan(&u.ID, &u.Email, &u.Owner, &created); err != nil {
			return err
		}
		u.CreatedAt = NewTime(fromMS(created))
		// Whoever holds the link acts as its user, as someone accepting
		// an invitation does.
		c := CallerOf(tx.ctx)
		c.Actor = UserActor(*u)
		tx.conn.ctx = WithCaller(tx.ctx, c)
		_, err = tx.setPassword(u, hash, "", "user.password_reset")
		return err
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}
