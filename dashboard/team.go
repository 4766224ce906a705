package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"service/store"
)

// The team: an app's members and invitations (its admins manage them),
// the instance's users and owners (owners manage them), and the audit log
// as the Activity pages and History panels show it.

type membersData struct {
	Members     []*store.Member
	Invitations []*store.Invitation
	Roles       []string
	// Link is a new invitation's link, shown this once: only its hash is
	// stored.
	Link    string
	Invited *store.Invitation
	Self    int64 // the signed-in user's id
}

func (d *Dashboard) membersView(r *req) (*view, *membersData, error) {
	v := d.page(r, "members", "Members")
	members, err := d.DB.FindAppMembers(r.Context(), r.App.ID)
	if err != nil {
		return nil, nil, err
	}
	invs, err := d.DB.FindInvitations(r.Context(), r.App.ID)
	if err != nil {
		return nil, nil, err
	}
	data := &membersData{Members: members, Invitations: invs, Roles: store.MemberRoles, Self: r.Session.User.ID}
	v.Data = data
	return v, data, nil
}

func (d *Dashboard) handleMembers(w http.ResponseWriter, r *req) {
	v, _, err := d.membersView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "members", v)
}

// handleInvite creates an invitation and shows its link in the answer to
// the POST, not after a redirect: the link exists only here.
func (d *Dashboard) handleInvite(w http.ResponseWriter, r *req) {
	inv, token, err := d.DB.CreateInvitation(r.Context(), r.App.ID, r.PostFormValue("email"), r.PostFormValue("role"), r.Session.User.ID)
	v, data, lerr := d.membersView(r)
	if lerr != nil {
		d.fail(w, r, lerr)
		return
	}
	if err != nil {
		v.Form = r.PostForm
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "members", v)
		return
	}
	data.Invited = inv
	data.Link = baseURL(r.Request) + "/invite?token=" + url.QueryEscape(token)
	d.render(w, r.Request, http.StatusCreated, "members", v)
}

// baseURL is the dashboard's address as the browser reached it, for links
// to send to others.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// member finds a member of the current app by the path's user id; anyone
// else is a 404.
func (d *Dashboard) member(r *req) (*store.Member, error) {
	return findByPathID(r, "member", func() ([]*store.Member, error) { return d.DB.FindAppMembers(r.Context(), r.App.ID) },
		func(m *store.Member) int64 { return m.UserID })
}

func (d *Dashboard) handleMemberRole(w http.ResponseWriter, r *req) {
	m, err := d.member(r)
	if err == nil {
		_, err = d.DB.GrantRole(r.Context(), m.Email, r.App.ID, r.PostFormValue("role"))
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, d.appPath(r, "/settings/members"), "member_saved")
}

func (d *Dashboard) handleMemberRemove(w http.ResponseWriter, r *req) {
	m, err := d.member(r)
	if err == nil {
		err = d.DB.RevokeRole(r.Context(), m.Email, r.App.ID)
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, d.appPath(r, "/settings/members"), "member_removed")
}

func (d *Dashboard) handleInvitationRevoke(w http.ResponseWriter, r *req) {
	id, ok := pathID(r, "id")
	if !ok {
		d.notFound(w, r.Request, r.Session)
		return
	}
	if err := d.DB.RevokeInvitation(r.Context(), r.App.ID, id); err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, d.appPath(r, "/settings/members"), "invitation_revoked")
}

func (d *Dashboard) appPath(r *req, p string) string {
	return "/apps/" + strconv.FormatInt(r.App.ID, 10) + p
}

// inviteView is the data of the invitation page.
type inviteView struct {
	CSRF, Token string
	Invitation  *store.Invitation
}

// handleInviteForm shows an invitation: a new person sets a password, one
// with an account signs in with theirs. A spent, expired or unknown link
// answers a page that says which.
func (d *Dashboard) handleInviteForm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	token := r.URL.Query().Get("token")
	inv, err := d.DB.FindInvitation(r.Context(), token)
	if err != nil {
		d.inviteRefused(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "invite", &view{Title: "Join " + inv.AppName, Errors: map[string]string{},
		Data: inviteView{CSRF: preToken(w, r), Token: token, Invitation: inv}})
}

func (d *Dashboard) inviteRefused(w http.ResponseWriter, r *http.Request, err error) {
	switch err {
	case store.ErrInvitationUsed, store.ErrInvitationExpired:
		d.render(w, r, http.StatusGone, "message", &view{Title: "Invitation no longer valid", Error: err.Error()})
	case store.ErrInvitationInvalid:
		d.render(w, r, http.StatusNotFound, "message", &view{Title: "Invitation not found", Error: err.Error()})
	default:
		d.serverError(w, r, "invitation", err)
	}
}

// handleInviteAccept spends the link and signs the person in, on the
// invitation's app.
func (d *Dashboard) handleInviteAccept(w http.ResponseWriter, r *http.Request) {
	if !d.checkPreForm(w, r) {
		return
	}
	r = withCaller(r, nil)
	token, password := r.PostFormValue("token"), r.PostFormValue("password")
	inv, err := d.DB.FindInvitation(r.Context(), token)
	if err != nil {
		d.inviteRefused(w, r, err)
		return
	}
	v := &view{Title: "Join " + inv.AppName, Errors: map[string]string{}, Form: r.PostForm,
		Data: inviteView{CSRF: preToken(w, r), Token: token, Invitation: inv}}
	if !inv.HasAccount && password != r.PostFormValue("confirm") {
		v.Errors["confirm"] = "does not match the password"
		d.render(w, r, http.StatusUnprocessableEntity, "invite", v)
		return
	}
	// An existing account's password is checked under the sign-in
	// throttle: a link must not become a way around it.
	keys := keysOf(inv.Email, r)
	if inv.HasAccount {
		wait, err := d.lockout(r, keys)
		if err != nil {
			d.serverError(w, r, "sign-in throttle", err)
			return
		}
		if wait > 0 {
			d.tooManySignIns(w, r, "invite", v, wait)
			return
		}
	}
	u, err := d.DB.AcceptInvitation(r.Context(), token, password)
	switch {
	case err == store.ErrBadCredentials:
		if err := d.signInFailed(r, keys); err != nil {
			d.serverError(w, r, "sign-in throttle", err)
			return
		}
		v.Errors["password"] = "is not this account's password"
		d.render(w, r, http.StatusUnauthorized, "invite", v)
		return
	case store.ErrorCode(err) == store.EINVALID && formErrors(v, err):
		d.render(w, r, http.StatusUnprocessableEntity, "invite", v)
		return
	case err != nil:
		d.inviteRefused(w, r, err)
		return
	}
	d.Log.Info("invitation accepted", "email", u.Email, "app", inv.AppID)
	d.startSession(w, r, u.ID, "/apps/"+strconv.FormatInt(inv.AppID, 10))
}

type usersData struct {
	Users []*store.DashboardUser
	Self  int64
	// Reset and Link are a new password reset link, shown this once:
	// only its hash is stored.
	Reset *store.PasswordReset
	Link  string
}

func (d *Dashboard) handleUsers(w http.ResponseWriter, r *req) {
	v, _, err := d.usersView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "users", v)
}

// dashboardUser finds a user by the path's id.
func (d *Dashboard) dashboardUser(r *req) (*store.DashboardUser, error) {
	if id, ok := pathID(r, "id"); ok {
		users, err := d.DB.FindDashboardUsers(r.Context())
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			if u.ID == id {
				return u, nil
			}
		}
	}
	return nil, store.Errorf(store.ENOTFOUND, "user not found")
}

func (d *Dashboard) handleUserOwner(w http.ResponseWriter, r *req) {
	u, err := d.dashboardUser(r)
	if err == nil {
		_, err = d.DB.SetDashboardOwner(r.Context(), u.Email, r.PostFormValue("owner") == "true")
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, "/users", "owner_saved")
}

func (d *Dashboard) handleUserDelete(w http.ResponseWriter, r *req) {
	u, err := d.dashboardUser(r)
	if err == nil && u.ID == r.Session.User.ID {
		err = store.Errorf(store.EINVALID, "you cannot delete yourself here; another owner can, or use service users delete")
	}
	if err == nil {
		err = d.DB.DeleteDashboardUser(r.Context(), u.Email)
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, "/users", "user_deleted")
}

// activityPage is how many entries an Activity page shows.
const activityPage = 50

type activityData struct {
	Entries []historyEntry
	// The filters, as given.
	ObjectType, Action, Actor string
	ObjectTypes               []string
	Older, Newer              string
	Instance                  bool
}

// handleActivity is the app's audit log: filters by object type, action
// and actor, newest first, and pages with before=<id of the last entry>.
func (d *Dashboard) handleActivity(w http.ResponseWriter, r *req) {
	d.activity(w, r, store.AuditFilter{AppID: r.App.ID}, "activity", "Activity")
}

// handleInstanceActivity is the instance's log: apps created and deleted,
// users and owners.
func (d *Dashboard) handleInstanceActivity(w http.ResponseWriter, r *req) {
	d.activity(w, r, store.AuditFilter{Instance: true}, "", "Instance activity")
}

func (d *Dashboard) activity(w http.ResponseWriter, r *req, f store.AuditFilter, section, title string) {
	q := r.URL.Query()
	data := &activityData{ObjectType: q.Get("objectType"), Action: strings.TrimSpace(q.Get("action")), Actor: strings.TrimSpace(q.Get("actor")),
		ObjectTypes: store.AuditObjectTypes, Instance: f.Instance}
	v := d.page(r, section, title)
	v.Data = data
	f.ObjectType, f.Action, f.Actor, f.Limit = data.ObjectType, data.Action, data.Actor, activityPage+1
	if b := q.Get("before"); b != "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 1 {
			v.Errors["before"] = "must be an entry id"
		}
		f.Before = n
	}
	status := http.StatusOK
	var list []*store.AuditEntry
	var err error
	if len(v.Errors) == 0 {
		list, err = d.DB.FindAuditLog(r.Context(), f)
		if err != nil && !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
	}
	if len(v.Errors) > 0 || err != nil {
		if v.Error == "" || len(v.Errors) > 0 {
			v.Error = "Please correct the filters marked below."
		}
		status = http.StatusUnprocessableEntity
	}
	keep := url.Values{}
	for _, k := range []string{"objectType", "action", "actor"} {
		if s := q.Get(k); s != "" {
			keep.Set(k, s)
		}
	}
	if len(list) > activityPage {
		list = list[:activityPage]
		older := url.Values{}
		for k, vs := range keep {
			older[k] = vs
		}
		older.Set("before", strconv.FormatInt(list[len(list)-1].ID, 10))
		data.Older = r.URL.Path + "?" + older.Encode()
	}
	if f.Before > 0 {
		data.Newer = r.URL.Path + "?" + keep.Encode()
	}
	data.Entries = historyOf(list)
	d.render(w, r.Request, status, "activity", v)
}

// historyLimit is how many changes an object's History panel shows.
const historyLimit = 20

// history fills v's History panel with the object's latest changes.
func (d *Dashboard) history(r *req, v *view, objType string, id int64) {
	list, err := d.DB.FindAuditLog(r.Context(), store.AuditFilter{AppID: r.App.ID, ObjectType: objType, ObjectID: id, Limit: historyLimit})
	if err != nil {
		d.Log.Error("history", "err", err)
		return
	}
	v.History = historyOf(list)
}

// historyEntry is an audit entry as the pages show it: the diff as lines
// a person reads.
type historyEntry struct {
	*store.AuditEntry
	Who     string
	Changes []fieldChange
}

// fieldChange is one field's change in words.
type fieldChange struct {
	Field, Before, After string
	HasBefore, HasAfter  bool
}

func historyOf(list []*store.AuditEntry) []historyEntry {
	out := make([]historyEntry, len(list))
	for i, e := range list {
		h := historyEntry{AuditEntry: e, Who: actorText(e.Actor)}
		names := make([]string, 0, len(e.Changes))
		for k := range e.Changes {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			c := e.Changes[k]
			h.Changes = append(h.Changes, fieldChange{Field: k, Before: valueText(c.Before), After: valueText(c.After),
				HasBefore: c.Before != nil, HasAfter: c.After != nil})
		}
		out[i] = h
	}
	return out
}

// actorText names an actor for a person: a user's email, a key's name and
// prefix, the command line or the scheduler.
func actorText(a store.Actor) string {
	switch a.Type {
	case store.ActorUser:
		return a.Name
	case store.ActorKey:
		s := "API key " + a.Prefix + "…"
		if a.Name != "" {
			s += " (" + a.Name + ")"
		}
		return s
	case store.ActorCLI:
		return "command line"
	case store.ActorScheduler:
		return "campaign scheduler"
	}
	return a.Type
}

// valueText shows a logged value: a string as it is, null as "none", a
// digest as its size and the start of its hash, anything else as compact
// JSON.
func valueText(raw json.RawMessage) string {
	if raw == nil || string(raw) == "null" {
		return "none"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return `""`
		}
		return s
	}
	var digest struct {
		SHA256 string `json:"sha256"`
		Bytes  int    `json:"bytes"`
	}
	if json.Unmarshal(raw, &digest) == nil && len(digest.SHA256) == 64 && digest.Bytes > 0 {
		return thousands(int64(digest.Bytes)) + " bytes, sha256 " + digest.SHA256[:12] + "…"
	}
	return string(raw)
}
