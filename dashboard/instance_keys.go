package dashboard

import (
	"net/http"
	"strings"

	"service/store"
)

// The instance keys, which owners manage beside the instance's users and
// activity: they create and delete apps and their keys over the API, so
// they are the instance's, not any one app's.

type instanceKeysData struct {
	Keys    []*store.Key
	Created *store.Key
	Secret  string // the new key's plaintext, shown this once
	Revoke  *store.Key
}

func (d *Dashboard) instanceKeysView(r *req) (*view, *instanceKeysData, error) {
	v := d.page(r, "", "Instance keys")
	keys, err := d.DB.FindInstanceKeys(r.Context())
	data := &instanceKeysData{Keys: keys}
	v.Data = data
	return v, data, err
}

func (d *Dashboard) handleInstanceKeys(w http.ResponseWriter, r *req) {
	v, _, err := d.instanceKeysView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "instance_keys", v)
}

func (d *Dashboard) handleInstanceKeyCreate(w http.ResponseWriter, r *req) {
	key, plaintext, err := d.DB.CreateInstanceKey(r.Context(), strings.TrimSpace(r.PostFormValue("name")))
	v, data, lerr := d.instanceKeysView(r)
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
		d.render(w, r.Request, http.StatusUnprocessableEntity, "instance_keys", v)
		return
	}
	// In the answer to the POST, as an app's new key is: the plaintext
	// must not sit in a URL or a session.
	data.Created, data.Secret = key, plaintext
	d.render(w, r.Request, http.StatusCreated, "instance_keys", v)
}

// instanceKey finds an instance key by the path's id; any other id,
// an app's key's among them, is a 404.
func (d *Dashboard) instanceKey(r *req) (*store.Key, error) {
	return findByPathID(r, "key", func() ([]*store.Key, error) { return d.DB.FindInstanceKeys(r.Context()) },
		func(k *store.Key) int64 { return k.ID })
}

func (d *Dashboard) handleInstanceKeyRevokeConfirm(w http.ResponseWriter, r *req) {
	k, err := d.instanceKey(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v, data, err := d.instanceKeysView(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Title = "Revoke instance key"
	data.Revoke = k
	d.render(w, r.Request, http.StatusOK, "instance_keys", v)
}

func (d *Dashboard) handleInstanceKeyRevoke(w http.ResponseWriter, r *req) {
	k, err := d.instanceKey(r)
	if err == nil {
		_, err = d.DB.RevokeKey(r.Context(), k.ID)
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	redirect(w, r, "/keys", "key_revoked")
}
