package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// DashboardUser is a person who signs in to the dashboard. The password
// hash never leaves the store.
type DashboardUser struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
	// Owner runs the whole instance: every app, users and their roles.
	Owner     bool `json:"owner"`
	CreatedAt Time `json:"createdAt"`
	// Apps are the member's roles by app, in app order; set by
	// FindDashboardUsers only.
	Apps []AppRole `json:"apps,omitempty"`
}

// DashboardSession is a signed-in browser.
type DashboardSession struct {
	User      DashboardUser
	CSRFToken string
	ExpiresAt time.Time
}

// Limits on dashboard credentials. bcrypt reads at most 72 bytes, so a
// longer password would be silently cut: refuse it instead.
const (
	MinPasswordLen = 10
	MaxPasswordLen = 72
	MaxEmailLen    = 254
)

// PasswordCost is the bcrypt cost of new password hashes; tests lower it.
var PasswordCost = bcrypt.DefaultCost

// ErrBadCredentials is the one answer to a wrong email or a wrong password,
// so a sign-in form does not reveal which emails exist.
var ErrBadCredentials = Errorf(EINVALID, "wrong email or password")

// dummyHash is compared against when the email is unknown, so that an
// unknown email takes as long as a wrong password.
// It is made on first use: most commands never sign anyone in.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("no user has this password"), PasswordCost)
	return h
})

// randomToken returns 256 random bits, URL-safe.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// checkCredentials validates an email and a password and returns the
// normalised email and the password's hash.
func checkCredentials(email, password string) (string, []byte, error) {
	fe := FieldErrors{}
	email = strings.TrimSpace(email)
	at := strings.LastIndexByte(email, '@')
	switch {
	case email == "":
		fe.Add("email", "is required")
	case len(email) > MaxEmailLen:
		fe.Add("email", "must be at most 254 characters")
	case at < 1 || at == len(email)-1 || strings.ContainsAny(email, " \t\r\n<>\"'"):
		fe.Add("email", "must be an email address")
	}
	passwordRules(fe, "password", password)
	if err := fe.Err(); err != nil {
		return "", nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), PasswordCost)
	return email, hash, err
}

// passwordRules adds to fe, under field, what is wrong with a new
// password: every way of setting one applies the same rules.
func passwordRules(fe FieldErrors, field, password string) {
	switch {
	case utf8.RuneCountInString(password) < MinPasswordLen:
		fe.Add(field, "must be at least 10 characters")
	case len(password) > MaxPasswordLen:
		fe.Add(field, "must be at most 72 bytes")
	}
}

// hashPassword checks a new password against the rules and hashes it;
// a refusal names field.
func hashPassword(field, password string) ([]byte, error) {
	fe := FieldErrors{}
	passwordRules(fe, field, password)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return bcrypt.GenerateFromPassword([]byte(password), PasswordCost)
}

// insertDashboardUser adds a user, an owner when owner is set or when
// nobody else exists yet: the first user must be able to run the
// instance. The new user becomes the actor of the entry when self is set
// (the setup link and invitations, where people create themselves).
func (tx *Tx) insertDashboardUser(email string, hash []byte, owner, self bool) (*DashboardUser, error) {
	var n, all int
	if err := tx.queryRow(`SELECT COUNT(*) FROM dashboard_users WHERE email = ?`, email).Scan(&n); err != nil {
		return nil, err
	}
	if n > 0 {
		fe := FieldErrors{}
		fe.Add("email", "is already taken")
		return nil, fe.Err()
	}
	if err := tx.queryRow(`SELECT COUNT(*) FROM dashboard_users`).Scan(&all); err != nil {
		return nil, err
	}
	owner = owner || all == 0
	id, err := tx.insertID(`INSERT INTO dashboard_users (email, password_hash, owner, created_at) VALUES (?, ?, ?, ?)`, email, string(hash), owner, ms(tx.now))
	if err != nil {
		return nil, err
	}
	u := &DashboardUser{ID: id, Email: email, Owner: owner, CreatedAt: NewTime(tx.now.Truncate(time.Millisecond))}
	if self {
		c := CallerOf(tx.ctx)
		c.Actor = UserActor(*u)
		tx.conn.ctx = WithCaller(tx.ctx, c)
	}
	return u, tx.audit(auditRecord{instance: true, action: "user.created", objType: ObjectUser, objID: id, objName: email,
		after: userFields{email, owner}})
}

// userFields are what the audit log compares of a dashboard user: never
// the password's hash.
type userFields struct {
	Email string `json:"email"`
	Owner bool   `json:"owner"`
}

// CreateDashboardUser adds a dashboard user, an owner when owner is set
// (the first user always is). It also retires a pending setup link: once
// anyone can sign in, nobody else may create the first user.
func (db *DB) CreateDashboardUser(ctx context.Context, email, password string, owner bool) (*DashboardUser, error) {
	// Hashing is slow on purpose; it happens before the write transaction
	// so other writers do not wait for it.
	email, hash, err := checkCredentials(email, password)
	if err != nil {
		return nil, err
	}
	var u *DashboardUser
	err = db.withTx(ctx, func(tx *Tx) error {
		if u, err = tx.insertDashboardUser(email, hash, owner, false); err != nil {
			return err
		}
		_, err = tx.exec(`DELETE FROM dashboard_setup`)
		return err
	})
	return u, err
}

// FindDashboardUsers lists every dashboard user, oldest first, with their
// roles.
func (db *DB) FindDashboardUsers(ctx context.Context) ([]*DashboardUser, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT id, email, owner, created_at FROM dashboard_users ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*DashboardUser{}
	byID := map[int64]*DashboardUser{}
	for rows.Next() {
		u := &DashboardUser{}
		var created int64
		if err := rows.Scan(&u.ID, &u.Email, &u.Owner, &created); err != nil {
			return nil, err
		}
		u.CreatedAt = NewTime(fromMS(created))
		list = append(list, u)
		byID[u.ID] = u
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	roles, err := tx.QueryContext(ctx, `SELECT m.user_id, m.app_id, a.name, m.role FROM app_members m JOIN apps a ON a.id = m.app_id ORDER BY m.app_id`)
	if err != nil {
		return nil, err
	}
	defer roles.Close()
	for roles.Next() {
		var user int64
		var r AppRole
		if err := roles.Scan(&user, &r.AppID, &r.AppName, &r.Role); err != nil {
			return nil, err
		}
		if u := byID[user]; u != nil {
			u.Apps = append(u.Apps, r)
		}
	}
	return list, roles.Err()
}

// findUserByEmail reads a user in tx.
func (tx *Tx) findUserByEmail(email string) (*DashboardUser, error) {
	u := &DashboardUser{}
	var created int64
	err := tx.queryRow(`SELECT id, email, owner, created_at FROM dashboard_users WHERE email = ?`, strings.TrimSpace(email)).
		Scan(&u.ID, &u.Email, &u.Owner, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("dashboard user")
	} else if err != nil {
		return nil, err
	}
	u.CreatedAt = NewTime(fromMS(created))
	return u, nil
}

// errLastOwner refuses to leave members without an owner: nobody could
// then manage the instance from the dashboard.
var errLastOwner = Errorf(EINVALID, "the last owner cannot be removed while other users remain; make another user an owner first")

// keepsAnOwner checks that removing u's ownership leaves an owner, or
// nobody at all.
func (tx *Tx) keepsAnOwner(u *DashboardUser) error {
	if !u.Owner {
		return nil
	}
	var owners, all int
	if err := tx.queryRow(`SELECT COUNT(*) FROM dashboard_users WHERE owner = ?`, true).Scan(&owners); err != nil {
		return err
	}
	if err := tx.queryRow(`SELECT COUNT(*) FROM dashboard_users`).Scan(&all); err != nil {
		return err
	}
	if owners == 1 && all > 1 {
		return errLastOwner
	}
	return nil
}

// DeleteDashboardUser deletes the user with this email, their roles and
// every session of theirs. The last owner goes only with the last user.
func (db *DB) DeleteDashboardUser(ctx context.Context, email string) error {
	return db.withTx(ctx, func(tx *Tx) error {
		u, err := tx.findUserByEmail(email)
		if err != nil {
			return err
		}
		if err := tx.keepsAnOwner(u); err != nil {
			return err
		}
		if _, err := tx.exec(`DELETE FROM dashboard_users WHERE id = ?`, u.ID); err != nil {
			return err
		}
		return tx.audit(auditRecord{instance: true, action: "user.deleted", objType: ObjectUser, objID: u.ID, objName: u.Email,
			before: userFields{u.Email, u.Owner}})
	})
}

// SetDashboardOwner makes the user with this email an owner, or a member
// again. The last owner stays one while other users remain.
func (db *DB) SetDashboardOwner(ctx context.Context, email string, owner bool) (*DashboardUser, error) {
	var u *DashboardUser
	err := db.withTx(ctx, func(tx *Tx) error {
		var err error
		if u, err = tx.findUserByEmail(email); err != nil {
			return err
		}
		if u.Owner == owner {
			return nil
		}
		if !owner {
			if err := tx.keepsAnOwner(u); err != nil {
				return err
			}
		}
		if _, err := tx.exec(`UPDATE dashboard_users SET owner = ? WHERE id = ?`, owner, u.ID); err != nil {
			return err
		}
		action := "user.owner_granted"
		if !owner {
			action = "user.owner_revoked"
		}
		u.Owner = owner
		return tx.audit(auditRecord{instance: true, action: action, objType: ObjectUser, objID: u.ID, objName: u.Email,
			before: userFields{u.Email, !owner}, after: userFields{u.Email, owner}})
	})
	return u, err
}

// AuthenticateDashboardUser checks an email and password. Both a wrong
// email and a wrong password answer ErrBadCredentials, after the same work.
func (db *DB) AuthenticateDashboardUser(ctx context.Context, email, password string) (*DashboardUser, error) {
	u := &DashboardUser{}
	var hash string
	var created int64
	err := db.read.QueryRowContext(ctx, `SELECT id, email, owner, password_hash, created_at FROM dashboard_users WHERE email = ?`,
		strings.TrimSpace(email)).Scan(&u.ID, &u.Email, &u.Owner, &hash, &created)
	if errors.Is(err, sql.ErrNoRows) {
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
		return nil, ErrBadCredentials
	} else if err != nil {
		return nil, err
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		return nil, ErrBadCredentials
	}
	u.CreatedAt = NewTime(fromMS(created))
	return u, nil
}

// SetupTokenTTL is how long a setup link stays usable.
const SetupTokenTTL = 24 * time.Hour

// CreateSetupToken returns the one-time setup link token while no
// dashboard user exists, and "" once one does. The token is made once and
// kept until it is used or expires: every boot of every process sharing
// the database prints the same link, so a second replica starting cannot
// spoil the link the first one printed. Only an expired token is replaced.
//
// The token is stored as it is, so that a later boot can print it again:
// it opens nothing but the creation of the first user, and whoever reads
// the database can already create users.
func (db *DB) CreateSetupToken(ctx context.Context) (string, error) {
	fresh, err := randomToken()
	if err != nil {
		return "", err
	}
	var token string
	err = db.withTx(ctx, func(tx *Tx) error {
		var n int
		if err := tx.queryRow(`SELECT COUNT(*) FROM dashboard_users`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			token = ""
			_, err := tx.exec(`DELETE FROM dashboard_setup`)
			return err
		}
		// Two processes booting at once: the second's insert finds the
		// first's row, still fresh, and leaves it; both then read it.
		if _, err := tx.exec(`INSERT INTO dashboard_setup (id, token, created_at, expires_at) VALUES (1, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET token = excluded.token, created_at = excluded.created_at, expires_at = excluded.expires_at
			WHERE dashboard_setup.expires_at <= excluded.created_at`,
			fresh, ms(tx.now), ms(tx.now.Add(SetupTokenTTL))); err != nil {
			return err
		}
		return tx.queryRow(`SELECT token FROM dashboard_setup WHERE id = 1`).Scan(&token)
	})
	return token, err
}

// errSetupUsed is the answer to a setup token that is wrong or spent.
var errSetupUsed = Errorf(ENOTFOUND, "this setup link is invalid or has already been used")

// CheckSetupToken reports whether token is the pending setup link.
func (db *DB) CheckSetupToken(ctx context.Context, token string) error {
	var stored string
	err := db.read.QueryRowContext(ctx, `SELECT token FROM dashboard_setup WHERE id = 1 AND expires_at > ?`, ms(db.Now())).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && subtle.ConstantTimeCompare([]byte(stored), []byte(token)) != 1) {
		return errSetupUsed
	}
	return err
}

// CompleteSetup spends the setup token to create the first user. The check
// and the creation are one transaction, so two browsers racing with the
// same link create one user between them.
func (db *DB) CompleteSetup(ctx context.Context, token, email, password string) (*DashboardUser, error) {
	if err := db.CheckSetupToken(ctx, token); err != nil {
		return nil, err
	}
	email, hash, err := checkCredentials(email, password)
	if err != nil {
		return nil, err
	}
	var u *DashboardUser
	err = db.withTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(`DELETE FROM dashboard_setup WHERE id = 1 AND token = ? AND expires_at > ?`, token, ms(tx.now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errSetupUsed
		}
		var users int
		if err := tx.queryRow(`SELECT COUNT(*) FROM dashboard_users`).Scan(&users); err != nil {
			return err
		}
		if users > 0 {
			return errSetupUsed
		}
		u, err = tx.insertDashboardUser(email, hash, true, true)
		return err
	})
	return u, err
}

// CreateDashboardSession signs a user in for ttl and returns the cookie's
// token; expired sessions are swept in the same transaction.
func (db *DB) CreateDashboardSession(ctx context.Context, userID int64, ttl time.Duration) (string, *DashboardSession, error) {
	token, err := randomToken()
	if err != nil {
		return "", nil, err
	}
	csrf, err := randomToken()
	if err != nil {
		return "", nil, err
	}
	s := &DashboardSession{CSRFToken: csrf}
	err = db.withTx(ctx, func(tx *Tx) error {
		var created int64
		err := tx.queryRow(`SELECT id, email, owner, created_at FROM dashboard_users WHERE id = ?`, userID).Scan(&s.User.ID, &s.User.Email, &s.User.Owner, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("dashboard user")
		} else if err != nil {
			return err
		}
		s.User.CreatedAt = NewTime(fromMS(created))
		if _, err := tx.exec(`DELETE FROM dashboard_sessions WHERE expires_at <= ?`, ms(tx.now)); err != nil {
			return err
		}
		s.ExpiresAt = tx.now.Add(ttl).Truncate(time.Millisecond)
		_, err = tx.exec(`INSERT INTO dashboard_sessions (token_hash, user_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			tokenHash(token), userID, csrf, ms(tx.now), ms(s.ExpiresAt))
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return token, s, nil
}

// FindDashboardSession returns the live session of a cookie token; an
// unknown or expired one is ENOTFOUND.
func (db *DB) FindDashboardSession(ctx context.Context, token string) (*DashboardSession, error) {
	s := &DashboardSession{}
	var created, expires int64
	// Ownership is read with the session on every request, so taking it
	// away takes effect on the user's next request.
	err := db.read.QueryRowContext(ctx, `SELECT u.id, u.email, u.owner, u.created_at, s.csrf_token, s.expires_at
		FROM dashboard_sessions s JOIN dashboard_users u ON u.id = s.user_id
		WHERE s.token_hash = ? AND s.expires_at > ?`, tokenHash(token), ms(db.Now())).
		Scan(&s.User.ID, &s.User.Email, &s.User.Owner, &created, &s.CSRFToken, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("session")
	} else if err != nil {
		return nil, err
	}
	s.User.CreatedAt = NewTime(fromMS(created))
	s.ExpiresAt = fromMS(expires)
	return s, nil
}

// DeleteDashboardSession signs a session out; an unknown token is no error.
func (db *DB) DeleteDashboardSession(ctx context.Context, token string) error {
	return db.withTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(`DELETE FROM dashboard_sessions WHERE token_hash = ?`, tokenHash(token))
		return err
	})
}

// FindAllApps lists every app, oldest first: dashboard users run the whole
// instance and may switch to any app.
func (db *DB) FindAllApps(ctx context.Context) ([]*App, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, plan, rate_limit FROM apps ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*App{}
	for rows.Next() {
		a := &App{}
		if err := rows.Scan(&a.ID, &a.Name, &a.Plan, &a.RateLimit); err != nil {
			return nil, err
		}
		list = append(list, a)
	}
	return list, rows.Err()
}

// EachFormSubmission calls fn for every submission of one block of the
// app, oldest first, reading rows as it goes, so an export of any size
// holds one row in memory. A block of another app is reported missing.
func (db *DB) EachFormSubmission(ctx context.Context, appID, contentViewID int64, fn func(*FormSubmission) error) error {
	if _, err := db.FindContentByID(ctx, appID, contentViewID); err != nil {
		return err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at
		FROM form_submissions WHERE app_id = ? AND content_view_id = ? ORDER BY id`, appID, contentViewID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanFormSubmission(rows)
		if err != nil {
			return err
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return rows.Err()
}
