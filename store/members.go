package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Roles of a member in an app, from the least to the most.
const (
	MemberViewer = "viewer"
	MemberEditor = "editor"
	MemberAdmin  = "admin"
)

// MemberRoles are the roles a member may hold, least first.
var MemberRoles = []string{MemberViewer, MemberEditor, MemberAdmin}

// RoleRank orders roles: 0 for none, then viewer, editor and admin.
func RoleRank(role string) int {
	for i, r := range MemberRoles {
		if r == role {
			return i + 1
		}
	}
	return 0
}

func checkRole(role string) error {
	if RoleRank(role) == 0 {
		return FieldErrors{"role": "must be one of viewer, editor, admin"}.Err()
	}
	return nil
}

// AppRole is a member's role in one app.
type AppRole struct {
	AppID   int64  `json:"appId"`
	AppName string `json:"appName"`
	Role    string `json:"role"`
}

// Member is a dashboard user with a role in an app.
type Member struct {
	UserID    int64  `json:"userId"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt Time   `json:"createdAt"`
}

// memberFields are what the audit log compares of a membership.
type memberFields struct {
	Role string `json:"role"`
}

// FindAppRole returns the user's role in the app, or "" when they have
// none. It is read on every dashboard request, so a lowered or removed
// role takes effect on the next one.
func (db *DB) FindAppRole(ctx context.Context, userID, appID int64) (string, error) {
	var role string
	err := db.read.QueryRowContext(ctx, `SELECT role FROM app_members WHERE user_id = ? AND app_id = ?`, userID, appID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return role, err
}

// FindUserApps lists the apps the user is a member of, in id order, with
// their role in each.
func (db *DB) FindUserApps(ctx context.Context, userID int64) ([]*App, map[int64]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT a.id, a.name, a.plan, a.rate_limit, m.role
		FROM app_members m JOIN apps a ON a.id = m.app_id WHERE m.user_id = ? ORDER BY a.id`, userID)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	list, roles := []*App{}, map[int64]string{}
	for rows.Next() {
		a := &App{}
		var role string
		if err := rows.Scan(&a.ID, &a.Name, &a.Plan, &a.RateLimit, &role); err != nil {
			return nil, nil, err
		}
		list = append(list, a)
		roles[a.ID] = role
	}
	return list, roles, rows.Err()
}

// FindAppMembers lists the members of an app, in email order.
func (db *DB) FindAppMembers(ctx context.Context, appID int64) ([]*Member, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT u.id, u.email, m.role, m.created_at
		FROM app_members m JOIN dashboard_users u ON u.id = m.user_id WHERE m.app_id = ? ORDER BY lower(u.email), u.id`, appID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*Member{}
	for rows.Next() {
		m := &Member{}
		var created int64
		if err := rows.Scan(&m.UserID, &m.Email, &m.Role, &created); err != nil {
			return nil, err
		}
		m.CreatedAt = NewTime(fromMS(created))
		list = append(list, m)
	}
	return list, rows.Err()
}

// appName reads an app's name in tx; a missing app is ENOTFOUND.
func (tx *Tx) appName(appID int64) (string, error) {
	var name string
	err := tx.queryRow(`SELECT name FROM apps WHERE id = ?`, appID).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("app")
	}
	return name, err
}

// grant gives u role in the app, recording member.added or
// member.role_changed; the same role again changes nothing.
func (tx *Tx) grant(u *DashboardUser, appID int64, role string) error {
	cur, err := tx.roleIn(u.ID, appID)
	switch {
	case err != nil:
		return err
	case cur == "":
		if _, err := tx.exec(`INSERT INTO app_members (app_id, user_id, role, created_at) VALUES (?, ?, ?, ?)`,
			appID, u.ID, role, ms(tx.now)); err != nil {
			return err
		}
		return tx.audit(auditRecord{app: appID, action: "member.added", objType: ObjectMember, objID: u.ID, objName: u.Email,
			after: memberFields{role}})
	case cur == role:
		return nil
	}
	if _, err := tx.exec(`UPDATE app_members SET role = ? WHERE app_id = ? AND user_id = ?`, role, appID, u.ID); err != nil {
		return err
	}
	return tx.audit(auditRecord{app: appID, action: "member.role_changed", objType: ObjectMember, objID: u.ID, objName: u.Email,
		before: memberFields{cur}, after: memberFields{role}})
}

// GrantRole gives the user with this email a role in an app, or changes
// the one they have.
func (db *DB) GrantRole(ctx context.Context, email string, appID int64, role string) (*Member, error) {
	if err := checkRole(role); err != nil {
		return nil, err
	}
	m := &Member{Role: role}
	err := db.withTx(ctx, func(tx *Tx) error {
		if _, err := tx.appName(appID); err != nil {
			return err
		}
		u, err := tx.findUserByEmail(email)
		if err != nil {
			return err
		}
		m.UserID, m.Email = u.ID, u.Email
		if err := tx.grant(u, appID, role); err != nil {
			return err
		}
		var created int64
		err = tx.queryRow(`SELECT created_at FROM app_members WHERE app_id = ? AND user_id = ?`, appID, u.ID).Scan(&created)
		m.CreatedAt = NewTime(fromMS(created))
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// RevokeRole takes the user's role in an app away; they then see nothing
// of it from their next request on.
func (db *DB) RevokeRole(ctx context.Context, email string, appID int64) error {
	return db.withTx(ctx, func(tx *Tx) error {
		if _, err := tx.appName(appID); err != nil {
			return err
		}
		u, err := tx.findUserByEmail(email)
		if err != nil {
			return err
		}
		cur, err := tx.roleIn(u.ID, appID)
		if err != nil {
			return err
		}
		if cur == "" {
			return notFound("member")
		}
		if _, err := tx.exec(`DELETE FROM app_members WHERE app_id = ? AND user_id = ?`, appID, u.ID); err != nil {
			return err
		}
		return tx.audit(auditRecord{app: appID, action: "member.removed", objType: ObjectMember, objID: u.ID, objName: u.Email,
			before: memberFields{cur}})
	})
}

// InvitationTTL is how long an invitation link stays valid.
const InvitationTTL = 7 * 24 * time.Hour

// Invitation is a pending offer of a role in an app, made by link.
type Invitation struct {
	ID         int64  `json:"id"`
	Email      string `json:"email"`
	AppID      int64  `json:"appId"`
	AppName    string `json:"appName"`
	Role       string `json:"role"`
	CreatedAt  Time   `json:"createdAt"`
	ExpiresAt  Time   `json:"expiresAt"`
	AcceptedAt *Time  `json:"acceptedAt"`
	// HasAccount says whether a user with this email exists: accepting
	// then asks for their password instead of setting one.
	HasAccount bool `json:"-"`
}

// invitationFields are what the audit log records of an invitation:
// never its token.
type invitationFields struct {
	Email     string `json:"email"`
	Role      string `json:"role"`
	ExpiresAt Time   `json:"expiresAt"`
}

// Invitation errors, each a page of its own.
var (
	ErrInvitationInvalid = Errorf(ENOTFOUND, "this invitation link is invalid or has been revoked")
	ErrInvitationUsed    = Errorf(ENOTFOUND, "this invitation link has already been used")
	ErrInvitationExpired = Errorf(ENOTFOUND, "this invitation link has expired; ask for a new one")
)

// CreateInvitation invites email to an app with a role, for InvitationTTL.
// It returns the link's token, which exists only in this answer: the
// database keeps its SHA-256.
func (db *DB) CreateInvitation(ctx context.Context, appID int64, email, role string, invitedBy int64) (*Invitation, string, error) {
	fe := FieldErrors{}
	email = strings.TrimSpace(email)
	if at := strings.LastIndexByte(email, '@'); email == "" || len(email) > MaxEmailLen || at < 1 || at == len(email)-1 ||
		strings.ContainsAny(email, " \t\r\n<>\"'") {
		fe.Add("email", "must be an email address")
	}
	if RoleRank(role) == 0 {
		fe.Add("role", "must be one of viewer, editor, admin")
	}
	if err := fe.Err(); err != nil {
		return nil, "", err
	}
	token, err := randomToken()
	if err != nil {
		return nil, "", err
	}
	inv := &Invitation{Email: email, AppID: appID, Role: role}
	err = db.withTx(ctx, func(tx *Tx) error {
		if inv.AppName, err = tx.appName(appID); err != nil {
			return err
		}
		inv.CreatedAt = NewTime(tx.now.Truncate(time.Millisecond))
		inv.ExpiresAt = NewTime(tx.now.Add(InvitationTTL).Truncate(time.Millisecond))
		id, err := tx.insertID(`INSERT INTO dashboard_invitations (token_hash, email, app_id, role, invited_by, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, tokenHash(token), email, appID, role, nullID(invitedBy), ms(tx.now), ms(inv.ExpiresAt.Time))
		if err != nil {
			return err
		}
		inv.ID = id
		return tx.audit(auditRecord{app: appID, action: "invitation.created", objType: ObjectInvitation, objID: id, objName: email,
			after: invitationFields{email, role, inv.ExpiresAt}})
	})
	if err != nil {
		return nil, "", err
	}
	return inv, token, nil
}

const invitationColumns = `i.id, i.email, i.app_id, a.name, i.role, i.created_at, i.expires_at, i.accepted_at,
	EXISTS (SELECT 1 FROM dashboard_users u WHERE u.email = i.email)`

func scanInvitation(row scanner) (*Invitation, error) {
	inv := &Invitation{}
	var created, expires int64
	var accepted sql.NullInt64
	if err := row.Scan(&inv.ID, &inv.Email, &inv.AppID, &inv.AppName, &inv.Role, &created, &expires, &accepted, &inv.HasAccount); err != nil {
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt = NewTime(fromMS(created)), NewTime(fromMS(expires))
	inv.AcceptedAt = TimePtr(nullMS(accepted))
	return inv, nil
}

// FindInvitations lists an app's invitations that can still be accepted,
// newest first.
func (db *DB) FindInvitations(ctx context.Context, appID int64) ([]*Invitation, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+invitationColumns+` FROM dashboard_invitations i JOIN apps a ON a.id = i.app_id
		WHERE i.app_id = ? AND i.accepted_at IS NULL AND i.expires_at > ? ORDER BY i.id DESC`, appID, ms(db.Now()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*Invitation{}
	for rows.Next() {
		inv, err := scanInvitation(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, inv)
	}
	return list, rows.Err()
}

// FindInvitation returns the invitation of a link's token, or the error
// that says why it cannot be accepted.
func (db *DB) FindInvitation(ctx context.Context, token string) (*Invitation, error) {
	return findInvitation(ctx, db.read, token, db.Now())
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func findInvitation(ctx context.Context, q rowQuerier, token string, now time.Time) (*Invitation, error) {
	if token == "" {
		return nil, ErrInvitationInvalid
	}
	inv, err := scanInvitation(q.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM dashboard_invitations i JOIN apps a ON a.id = i.app_id
		WHERE i.token_hash = ?`, tokenHash(token)))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrInvitationInvalid
	case err != nil:
		return nil, err
	case inv.AcceptedAt != nil:
		return nil, ErrInvitationUsed
	case !now.Before(inv.ExpiresAt.Time):
		return nil, ErrInvitationExpired
	}
	return inv, nil
}

// AcceptInvitation spends an invitation's link. Someone new sets their
// password with it; someone who already has an account proves it with
// theirs. Either way they get the invitation's role and are returned,
// ready to be signed in. The check and the use are one transaction, so a
// link works once however many browsers race with it.
func (db *DB) AcceptInvitation(ctx context.Context, token, password string) (*DashboardUser, error) {
	inv, err := db.FindInvitation(ctx, token)
	if err != nil {
		return nil, err
	}
	// Passwords are hashed or checked before the write transaction: that
	// is slow on purpose, and other writers should not wait for it.
	var hash []byte
	if inv.HasAccount {
		if _, err := db.AuthenticateDashboardUser(ctx, inv.Email, password); err != nil {
			return nil, err
		}
	} else if _, hash, err = checkCredentials(inv.Email, password); err != nil {
		return nil, err
	}
	var u *DashboardUser
	err = db.withTx(ctx, func(tx *Tx) error {
		cur, err := findInvitation(tx.ctx, tx.raw, token, tx.now)
		if err != nil {
			return err
		}
		res, err := tx.exec(`UPDATE dashboard_invitations SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL`, ms(tx.now), cur.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrInvitationUsed
		}
		if u, err = tx.findUserByEmail(cur.Email); ErrorCode(err) == ENOTFOUND {
			if hash == nil {
				// The account was deleted since its password was checked.
				return ErrInvitationInvalid
			}
			u, err = tx.insertDashboardUser(cur.Email, hash, false, true)
		} else if err == nil {
			if hash != nil {
				// Someone took the email since: the password set here is
				// not theirs to accept with.
				return Errorf(EINVALID, "an account with this email now exists; open the link again and sign in with its password")
			}
			c := CallerOf(tx.ctx)
			c.Actor = UserActor(*u)
			tx.conn.ctx = WithCaller(tx.ctx, c)
		}
		if err != nil {
			return err
		}
		if err := tx.audit(auditRecord{app: cur.AppID, action: "invitation.accepted", objType: ObjectInvitation, objID: cur.ID, objName: cur.Email,
			after: invitationFields{cur.Email, cur.Role, cur.ExpiresAt}}); err != nil {
			return err
		}
		// An invitation never lowers a role held already.
		if role, err := tx.roleIn(u.ID, cur.AppID); err != nil || RoleRank(role) >= RoleRank(cur.Role) {
			return err
		}
		return tx.grant(u, cur.AppID, cur.Role)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// roleIn is the user's role in the app, read in tx; "" for none.
func (tx *Tx) roleIn(userID, appID int64) (string, error) {
	var role string
	err := tx.queryRow(`SELECT role FROM app_members WHERE user_id = ? AND app_id = ?`, userID, appID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return role, err
}

// RevokeInvitation withdraws a pending invitation of an app: its link
// then answers as invalid.
func (db *DB) RevokeInvitation(ctx context.Context, appID, id int64) error {
	return db.withTx(ctx, func(tx *Tx) error {
		var email, role string
		var expires int64
		err := tx.queryRow(`SELECT email, role, expires_at FROM dashboard_invitations WHERE id = ? AND app_id = ? AND accepted_at IS NULL`,
			id, appID).Scan(&email, &role, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("invitation")
		} else if err != nil {
			return err
		}
		if _, err := tx.exec(`DELETE FROM dashboard_invitations WHERE id = ?`, id); err != nil {
			return err
		}
		return tx.audit(auditRecord{app: appID, action: "invitation.revoked", objType: ObjectInvitation, objID: id, objName: email,
			before: invitationFields{email, role, NewTime(fromMS(expires))}})
	})
}
