package dashboard

import (
	"net/http"
	"strconv"
	"strings"

	"service/store"
)

var plans = store.Plans

type appsData struct {
	Plans []string
	// Default is the plan the create form starts on: the instance's
	// default (serve's --default-plan).
	Default string
}

// appsView is the Apps page's view.
func (d *Dashboard) appsView(r *req) (*view, error) {
	v := d.page(r, "", "Apps")
	def, err := d.DB.FindDefaultPlan(r.Context())
	if err != nil {
		return nil, err
	}
	v.Data = appsData{Plans: plans, Default: def}
	return v, nil
}

func (d *Dashboard) handleApps(w http.ResponseWriter, r *req) {
	v, err := d.appsView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "apps", v)
}

// handleAppCreate creates an app; without a plan in the form it takes the
// instance's default, as every other way of creating one does.
func (d *Dashboard) handleAppCreate(w http.ResponseWriter, r *req) {
	v, err := d.appsView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Form = r.PostForm
	name := strings.TrimSpace(r.PostFormValue("name"))
	rate := 0
	if raw := strings.TrimSpace(r.PostFormValue("rateLimit")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			v.Errors["rateLimit"] = "must be a whole number of requests per minute, at least 1"
		}
		rate = n
	}
	if name == "" {
		v.Errors["name"] = "is required"
	}
	if len(v.Errors) > 0 {
		v.Error = "Please correct the fields marked below."
		d.render(w, r.Request, http.StatusUnprocessableEntity, "apps", v)
		return
	}
	app, err := d.DB.CreateApp(r.Context(), name, r.PostFormValue("plan"), rate)
	if err != nil {
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		// A refusal without field details names its field first.
		for prefix, f := range map[string]string{"plan": "plan", "rate": "rateLimit", "name": "name"} {
			if len(v.Errors) == 0 && strings.HasPrefix(strings.ToLower(v.Error), prefix) {
				v.Errors[f] = v.Error
			}
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "apps", v)
		return
	}
	redirect(w, r, "/apps/"+strconv.FormatInt(app.ID, 10)+"/settings/keys", "app_created")
}

// handleAppSwitch moves to the same section of another app.
func (d *Dashboard) handleAppSwitch(w http.ResponseWriter, r *req) {
	id, err := strconv.ParseInt(r.URL.Query().Get("app"), 10, 64)
	if err != nil {
		http.Redirect(w, r.Request, "/apps", http.StatusSeeOther)
		return
	}
	// An app the user has no role in is missing, as under /apps/{app}.
	if role, err := d.roleIn(r, id); err != nil || role == "" {
		if err == nil {
			err = store.Errorf(store.ENOTFOUND, "app not found")
		}
		d.fail(w, r, err)
		return
	}
	if _, err := d.DB.FindAppByID(r.Context(), id); err != nil {
		d.fail(w, r, err)
		return
	}
	path := sections[0].Path
	for _, s := range sections {
		if s.Key == r.URL.Query().Get("section") {
			path = s.Path
		}
	}
	http.Redirect(w, r.Request, "/apps/"+strconv.FormatInt(id, 10)+path, http.StatusSeeOther)
}

func (d *Dashboard) handleAppHome(w http.ResponseWriter, r *req) {
	http.Redirect(w, r.Request, "/apps/"+strconv.FormatInt(r.App.ID, 10)+sections[0].Path, http.StatusSeeOther)
}

type keysData struct {
	Keys    []*store.Key
	Roles   []string
	Created *store.Key
	Secret  string // the new key's plaintext, shown this once
	Revoke  *store.Key
	AppID   int64
	BaseURL string // the service's address as the browser reached it
}

// SnippetKey is the client key the page's snippets carry.
func (k *keysData) SnippetKey() snippetKey { return pickClientKey(k.Keys, k.Created, k.Secret) }

// Snippets are the code that connects an app to the service, ready to copy.
func (k *keysData) Snippets() []sdkSnippet {
	return sdkSnippets(k.AppID, k.BaseURL, k.SnippetKey())
}

var roles = []string{store.RoleAdmin, store.RoleRead, store.RoleClient}

func (d *Dashboard) keysView(r *req) (*view, *keysData, error) {
	v := d.page(r, "keys", "API Keys")
	keys, err := d.DB.FindKeys(r.Context(), r.App.ID)
	data := &keysData{Keys: keys, Roles: roles, AppID: r.App.ID, BaseURL: baseURL(r.Request)}
	v.Data = data
	return v, data, err
}

func (d *Dashboard) handleKeys(w http.ResponseWriter, r *req) {
	v, _, err := d.keysView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "keys", v)
}

func (d *Dashboard) handleKeyCreate(w http.ResponseWriter, r *req) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	role := r.PostFormValue("role")
	key, plaintext, err := d.DB.CreateKey(r.Context(), r.App.ID, role, name)
	v, data, lerr := d.keysView(r)
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
		v.Errors["role"] = v.Error
		d.render(w, r.Request, http.StatusUnprocessableEntity, "keys", v)
		return
	}
	// Rendered in the answer to the POST, not after a redirect: the
	// plaintext exists only here and must not sit in a URL or a session.
	data.Created, data.Secret = key, plaintext
	d.render(w, r.Request, http.StatusCreated, "keys", v)
}

// appKey finds a key of the current app; another app's key is a 404.
func (d *Dashboard) appKey(r *req) (*store.Key, error) {
	return findByPathID(r, "key", func() ([]*store.Key, error) { return d.DB.FindKeys(r.Context(), r.App.ID) },
		func(k *store.Key) int64 { return k.ID })
}

// findByPathID finds, among what list returns of the current app, the one
// whose id is the path's id; anything else is a 404 naming what.
func findByPathID[T any](r *req, what string, list func() ([]T, error), idOf func(T) int64) (T, error) {
	var zero T
	if id, ok := pathID(r, "id"); ok {
		all, err := list()
		if err != nil {
			return zero, err
		}
		for _, x := range all {
			if idOf(x) == id {
				return x, nil
			}
		}
	}
	return zero, store.Errorf(store.ENOTFOUND, "%s not found", what)
}

func (d *Dashboard) handleKeyRevokeConfirm(w http.ResponseWriter, r *req) {
	k, err := d.appKey(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v, data, err := d.keysView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Title = "Revoke key"
	data.Revoke = k
	d.render(w, r.Request, http.StatusOK, "revoke", v)
}

func (d *Dashboard) handleKeyRevoke(w http.ResponseWriter, r *req) {
	k, err := d.appKey(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if _, err := d.DB.RevokeKey(r.Context(), k.ID); err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, "/apps/"+strconv.FormatInt(r.App.ID, 10)+"/settings/keys", "key_revoked")
}
