package dashboard

import (
	"net/http"
	"net/url"

	"service/store"
)

// Passwords: the signed-in user's Change password page, and the one-time
// reset links owners make for other users, with the page behind them.

// handlePasswordForm is the Change password page.
func (d *Dashboard) handlePasswordForm(w http.ResponseWriter, r *req) {
	d.render(w, r.Request, http.StatusOK, "password", d.page(r, "", "Change password"))
}

// handlePasswordChange sets the signed-in user's password. The current one
// is checked under the sign-in throttle, so a session left open on a
// shared computer is no way to try passwords faster than the sign-in
// page allows. Every other session of the user ends; this one stays.
func (d *Dashboard) handlePasswordChange(w http.ResponseWriter, r *req) {
	v := d.page(r, "", "Change password")
	current, password := r.PostFormValue("current"), r.PostFormValue("password")
	if password != r.PostFormValue("confirm") {
		v.Errors["confirm"] = "does not match the new password"
		v.Error = "Please correct the fields marked below."
		d.render(w, r.Request, http.StatusUnprocessableEntity, "password", v)
		return
	}
	keys := keysOf(r.Session.User.Email, r.Request)
	wait, err := d.lockout(r.Request, keys)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if wait > 0 {
		d.tooManySignIns(w, r.Request, "password", v, wait)
		return
	}
	var keep string
	if c, err := r.Cookie(sessionCookie); err == nil {
		keep = c.Value
	}
	ended, err := d.DB.ChangeDashboardPassword(r.Context(), r.Session.User.ID, current, password, keep)
	switch {
	case err == store.ErrBadCredentials:
		if err := d.signInFailed(r.Request, keys); err != nil {
			d.fail(w, r, err)
			return
		}
		v.Errors["current"] = "is not your current password"
		v.Error = "Please correct the fields marked below."
		d.render(w, r.Request, http.StatusUnprocessableEntity, "password", v)
		return
	case err != nil:
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "password", v)
		return
	}
	if err := d.DB.ResetSignInFailures(r.Context(), keys.email); err != nil {
		d.fail(w, r, err)
		return
	}
	d.Log.Info("dashboard password changed", "email", r.Session.User.Email, "sessionsEnded", ended)
	redirect(w, r, "/account/password", "password_changed")
}

// usersView is the Users page's view.
func (d *Dashboard) usersView(r *req) (*view, *usersData, error) {
	users, err := d.DB.FindDashboardUsers(r.Context())
	if err != nil {
		return nil, nil, err
	}
	v := d.page(r, "", "Users")
	data := &usersData{Users: users, Self: r.Session.User.ID}
	v.Data = data
	return v, data, nil
}

// handleResetLink makes a one-time password reset link for another user
// and shows it in the answer to the POST, not after a redirect: the link
// exists only here.
func (d *Dashboard) handleResetLink(w http.ResponseWriter, r *req) {
	u, err := d.dashboardUser(r)
	var pr *store.PasswordReset
	var token string
	if err == nil {
		pr, token, err = d.DB.CreatePasswordReset(r.Context(), u.Email, r.Session.User.ID)
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v, data, err := d.usersView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data.Reset = pr
	data.Link = baseURL(r.Request) + "/reset-password?token=" + url.QueryEscape(token)
	d.render(w, r.Request, http.StatusCreated, "users", v)
}

// resetView is the data of the reset page.
type resetView struct {
	CSRF, Token string
	Reset       *store.PasswordReset
}

// handleResetForm shows a reset link's page: a new password, twice. A
// used, expired or unknown link answers a page that says which.
func (d *Dashboard) handleResetForm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	token := r.URL.Query().Get("token")
	pr, err := d.DB.FindPasswordReset(r.Context(), token)
	if err != nil {
		d.resetRefused(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "reset", &view{Title: "Set a new password", Errors: map[string]string{},
		Data: resetView{CSRF: preToken(w, r), Token: token, Reset: pr}})
}

func (d *Dashboard) resetRefused(w http.ResponseWriter, r *http.Request, err error) {
	switch err {
	case store.ErrResetUsed, store.ErrResetExpired:
		d.render(w, r, http.StatusGone, "message", &view{Title: "Reset link no longer valid", Error: err.Error()})
	case store.ErrResetInvalid:
		d.render(w, r, http.StatusNotFound, "message", &view{Title: "Reset link not found", Error: err.Error()})
	default:
		d.serverError(w, r, "password reset", err)
	}
}

// handleReset spends the link: it sets the password, ends every session
// of the user, and signs them in afresh.
func (d *Dashboard) handleReset(w http.ResponseWriter, r *http.Request) {
	if !d.checkPreForm(w, r) {
		return
	}
	r = withCaller(r, nil)
	token, password := r.PostFormValue("token"), r.PostFormValue("password")
	pr, err := d.DB.FindPasswordReset(r.Context(), token)
	if err != nil {
		d.resetRefused(w, r, err)
		return
	}
	v := &view{Title: "Set a new password", Errors: map[string]string{}, Form: r.PostForm,
		Data: resetView{CSRF: preToken(w, r), Token: token, Reset: pr}}
	if password != r.PostFormValue("confirm") {
		v.Errors["confirm"] = "does not match the password"
		d.render(w, r, http.StatusUnprocessableEntity, "reset", v)
		return
	}
	u, err := d.DB.ResetDashboardPassword(r.Context(), token, password)
	switch {
	case store.ErrorCode(err) == store.EINVALID && formErrors(v, err):
		d.render(w, r, http.StatusUnprocessableEntity, "reset", v)
		return
	case err != nil:
		d.resetRefused(w, r, err)
		return
	}
	// The link proved who this is, as a sign-in does: failed sign-ins
	// counted against the email (perhaps why it was needed) are cleared.
	if err := d.DB.ResetSignInFailures(r.Context(), keysOf(u.Email, r).email); err != nil {
		d.serverError(w, r, "sign-in throttle", err)
		return
	}
	d.Log.Info("dashboard password reset through a link", "email", u.Email)
	d.startSession(w, r, u.ID, "/apps")
}
