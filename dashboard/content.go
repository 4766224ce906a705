package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"service/store"
)

// itemTypes are the content item types, in the order the editor offers them.
var itemTypes = []string{"heading", "text", "image", "button", "form"}

// fieldTypes are the form field types.
var fieldTypes = []string{"text", "email", "number", "textarea", "checkbox", "select"}

var contentStatuses = []string{store.ContentDraft, store.ContentPublished, store.ContentArchived}

// editItem is one content item as the editor's inputs hold it. Every
// input is named by the item's path in the API (items[0].content), so the
// store's field errors land beside the input they concern.
type editItem struct {
	Index          int
	Type           string
	Content        string
	URL            string
	Alt            string
	Label          string
	SubmitLabel    string
	SuccessMessage string
	Styles         string // a JSON object, or empty
	Fields         []editField
}

type editField struct {
	Index     int
	Name      string
	Type      string
	Label     string
	Required  bool
	Options   string // comma-separated
	MinLength string
	MaxLength string
	Pattern   string
}

// Path is the item's path in the API's field errors.
func (it editItem) Path() string { return fmt.Sprintf("items[%d]", it.Index) }

// Path is the field's path in the API's field errors.
func (f editField) Path(item int) string { return fmt.Sprintf("items[%d].fields[%d]", item, f.Index) }

// OptionList splits the options for the preview.
func (f editField) OptionList() []string { return splitOptions(f.Options) }

func splitOptions(s string) []string {
	var out []string
	for _, o := range strings.Split(s, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// itemsFromJSON turns stored items into the editor's rows.
func itemsFromJSON(raw json.RawMessage) []editItem {
	var items []struct {
		Type           string            `json:"type"`
		Content        string            `json:"content"`
		URL            string            `json:"url"`
		Alt            string            `json:"alt"`
		Label          string            `json:"label"`
		SubmitLabel    string            `json:"submitLabel"`
		SuccessMessage string            `json:"successMessage"`
		Styles         json.RawMessage   `json:"styles"`
		Fields         []store.FormField `json:"fields"`
	}
	_ = json.Unmarshal(raw, &items)
	out := make([]editItem, len(items))
	for i, it := range items {
		e := editItem{Index: i, Type: it.Type, Content: it.Content, URL: it.URL, Alt: it.Alt, Label: it.Label,
			SubmitLabel: it.SubmitLabel, SuccessMessage: it.SuccessMessage}
		if len(it.Styles) > 0 && string(it.Styles) != "null" {
			e.Styles = string(it.Styles)
		}
		for j, f := range it.Fields {
			ef := editField{Index: j, Name: f.Name, Type: f.Type, Label: f.Label, Required: f.Required,
				Options: strings.Join(f.Options, ", "), Pattern: f.Pattern}
			if f.MinLength != nil {
				ef.MinLength = strconv.Itoa(*f.MinLength)
			}
			if f.MaxLength != nil {
				ef.MaxLength = strconv.Itoa(*f.MaxLength)
			}
			e.Fields = append(e.Fields, ef)
		}
		out[i] = e
	}
	return out
}

// itemsFromForm reads the editor's rows back from a submitted form.
func itemsFromForm(f url.Values) []editItem {
	var items []editItem
	for i := 0; i < store.MaxItems; i++ {
		p := fmt.Sprintf("items[%d]", i)
		if _, ok := f[p+".type"]; !ok {
			break
		}
		it := editItem{Index: i, Type: f.Get(p + ".type"), Content: f.Get(p + ".content"), URL: strings.TrimSpace(f.Get(p + ".url")),
			Alt: f.Get(p + ".alt"), Label: f.Get(p + ".label"), SubmitLabel: f.Get(p + ".submitLabel"),
			SuccessMessage: f.Get(p + ".successMessage"), Styles: strings.TrimSpace(f.Get(p + ".styles"))}
		for j := 0; j < store.MaxFormFields; j++ {
			fp := fmt.Sprintf("%s.fields[%d]", p, j)
			if _, ok := f[fp+".type"]; !ok {
				break
			}
			it.Fields = append(it.Fields, editField{Index: j, Name: strings.TrimSpace(f.Get(fp + ".name")), Type: f.Get(fp + ".type"),
				Label: f.Get(fp + ".label"), Required: f.Get(fp+".required") != "", Options: f.Get(fp + ".options"),
				MinLength: strings.TrimSpace(f.Get(fp + ".minLength")), MaxLength: strings.TrimSpace(f.Get(fp + ".maxLength")),
				Pattern: f.Get(fp + ".pattern")})
		}
		items = append(items, it)
	}
	return items
}

// itemJSON is one item as the API stores it; empty strings are left out
// so the store reports a required one as missing.
type itemJSON struct {
	Type           string            `json:"type"`
	Content        string            `json:"content,omitempty"`
	URL            string            `json:"url,omitempty"`
	Alt            string            `json:"alt,omitempty"`
	Label          string            `json:"label,omitempty"`
	Fields         []store.FormField `json:"fields,omitempty"`
	SubmitLabel    string            `json:"submitLabel,omitempty"`
	SuccessMessage string            `json:"successMessage,omitempty"`
	Styles         json.RawMessage   `json:"styles,omitempty"`
}

// toJSON builds the items array the store validates. What only the editor
// can get wrong (a number typed as text, styles that are not JSON) is
// reported in errs under the same paths.
func toJSON(items []editItem, errs map[string]string) json.RawMessage {
	out := make([]itemJSON, 0, len(items))
	for _, it := range items {
		j := itemJSON{Type: it.Type}
		switch it.Type {
		case "text", "heading":
			j.Content = it.Content
		case "image":
			j.URL, j.Alt = it.URL, it.Alt
		case "button":
			j.Label, j.URL = it.Label, it.URL
		case "form":
			j.SubmitLabel, j.SuccessMessage = it.SubmitLabel, it.SuccessMessage
			j.Fields = []store.FormField{}
			for _, f := range it.Fields {
				ff := store.FormField{Name: f.Name, Type: f.Type, Label: f.Label, Required: f.Required, Pattern: f.Pattern}
				if f.Type == "select" {
					ff.Options = splitOptions(f.Options)
				}
				ff.MinLength = parseLength(f.MinLength, f.Path(it.Index)+".minLength", errs)
				ff.MaxLength = parseLength(f.MaxLength, f.Path(it.Index)+".maxLength", errs)
				j.Fields = append(j.Fields, ff)
			}
		}
		if it.Styles != "" {
			var probe map[string]any
			if json.Unmarshal([]byte(it.Styles), &probe) != nil || probe == nil {
				errs[it.Path()+".styles"] = "must be a JSON object, like {\"color\": \"#333\"}"
			} else {
				j.Styles = json.RawMessage(it.Styles)
			}
		}
		out = append(out, j)
	}
	b, _ := json.Marshal(out)
	return b
}

func parseLength(s, path string, errs map[string]string) *int {
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		errs[path] = "must be a whole number"
		return nil
	}
	return &n
}

// applyAction performs an editor button other than save: adding, removing
// or moving items and form fields. It reports whether it knew the action.
func applyAction(items []editItem, action string) ([]editItem, bool) {
	verb, arg, _ := strings.Cut(action, ":")
	a, b, _ := strings.Cut(arg, ":")
	i, err := strconv.Atoi(a)
	valid := err == nil && i >= 0 && i < len(items)
	switch {
	case verb == "add" && slices.Contains(itemTypes, arg) && len(items) < store.MaxItems:
		it := editItem{Type: arg}
		if arg == "form" {
			it.Fields = []editField{{Name: "email", Type: "email", Label: "Email", Required: true}}
			it.SubmitLabel = "Submit"
		}
		items = append(items, it)
	case verb == "remove" && valid:
		items = slices.Delete(items, i, i+1)
	case verb == "up" && valid && i > 0:
		items[i-1], items[i] = items[i], items[i-1]
	case verb == "down" && valid && i < len(items)-1:
		items[i+1], items[i] = items[i], items[i+1]
	case verb == "addfield" && valid && len(items[i].Fields) < store.MaxFormFields:
		items[i].Fields = append(items[i].Fields, editField{Type: "text"})
	case verb == "removefield" && valid:
		j, err := strconv.Atoi(b)
		if err != nil || j < 0 || j >= len(items[i].Fields) {
			return items, false
		}
		items[i].Fields = slices.Delete(items[i].Fields, j, j+1)
	case verb == "preview":
	default:
		return items, false
	}
	// Indexes follow positions, so names and error paths stay in step.
	for k := range items {
		items[k].Index = k
		for l := range items[k].Fields {
			items[k].Fields[l].Index = l
		}
	}
	return items, true
}

type contentListData struct {
	List     []*store.ContentView
	Status   string
	Statuses []string
	Pager    pager
}

func (d *Dashboard) handleContentList(w http.ResponseWriter, r *req) {
	status := r.URL.Query().Get("status")
	if !slices.Contains(contentStatuses, status) {
		status = ""
	}
	o := listOptions(r, 20)
	list, p, err := d.DB.FindContents(r.Context(), r.App.ID, status, o)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := d.page(r, "content", "Content blocks")
	v.Data = contentListData{List: list, Status: status, Statuses: contentStatuses, Pager: newPager(r, o, p, len(list))}
	d.render(w, r.Request, http.StatusOK, "content_list", v)
}

type contentEditData struct {
	Block      *store.ContentView // nil while creating
	Name       string
	Items      []editItem
	ItemTypes  []string
	FieldTypes []string
	Dirty      bool // the editor shows unsaved changes
}

func (d *Dashboard) editView(r *req, c *store.ContentView, name string, items []editItem) *view {
	title := "New content block"
	if c != nil {
		title = c.Name
	}
	v := d.page(r, "content", title)
	if c != nil {
		d.history(r, v, store.ObjectContent, c.ID)
	}
	v.Data = &contentEditData{Block: c, Name: name, Items: items, ItemTypes: itemTypes, FieldTypes: fieldTypes}
	return v
}

func (d *Dashboard) handleContentNew(w http.ResponseWriter, r *req) {
	items := []editItem{{Type: "heading"}, {Index: 1, Type: "text"}}
	d.render(w, r.Request, http.StatusOK, "content_edit", d.editView(r, nil, "", items))
}

func (d *Dashboard) handleContentEdit(w http.ResponseWriter, r *req) {
	id, _ := pathID(r, "id")
	c, err := d.DB.FindContentByID(r.Context(), r.App.ID, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r.Request, http.StatusOK, "content_edit", d.editView(r, c, c.Name, itemsFromJSON(c.Items)))
}

func (d *Dashboard) handleContentCreate(w http.ResponseWriter, r *req) { d.saveContent(w, r, nil) }

func (d *Dashboard) handleContentSave(w http.ResponseWriter, r *req) {
	id, _ := pathID(r, "id")
	c, err := d.DB.FindContentByID(r.Context(), r.App.ID, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.saveContent(w, r, c)
}

// saveContent handles every button of the editor: save writes through the
// store, the others rebuild the editor with the change, unsaved.
func (d *Dashboard) saveContent(w http.ResponseWriter, r *req, c *store.ContentView) {
	name := r.PostFormValue("name")
	items := itemsFromForm(r.PostForm)
	action := r.PostFormValue("action")
	if action != "" && action != "save" {
		items, _ = applyAction(items, action)
		v := d.editView(r, c, name, items)
		v.Data.(*contentEditData).Dirty = true
		d.render(w, r.Request, http.StatusOK, "content_edit", v)
		return
	}
	v := d.editView(r, c, name, items)
	v.Data.(*contentEditData).Dirty = true
	raw := toJSON(items, v.Errors)
	if len(v.Errors) > 0 {
		v.Error = "Please correct the fields marked below."
		d.render(w, r.Request, http.StatusUnprocessableEntity, "content_edit", v)
		return
	}
	in := store.ContentInput{Name: &name, Items: raw}
	var saved *store.ContentView
	var err error
	if c == nil {
		saved, err = d.DB.CreateContent(r.Context(), r.App.ID, in)
	} else {
		saved, err = d.DB.UpdateContent(r.Context(), r.App.ID, c.ID, in)
	}
	if err != nil {
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "content_edit", v)
		return
	}
	notice := "content_saved"
	if c == nil {
		notice = "content_created"
	}
	redirect(w, r, contentPath(r, saved.ID), notice)
}

func contentPath(r *req, id int64) string {
	return fmt.Sprintf("/apps/%d/content/%d", r.App.ID, id)
}

// handleContentStatus publishes, archives or unarchives a block through
// the API's own update, so its refusals are the API's.
func (d *Dashboard) handleContentStatus(w http.ResponseWriter, r *req) {
	id, _ := pathID(r, "id")
	c, err := d.DB.FindContentByID(r.Context(), r.App.ID, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	status := r.PostFormValue("status")
	updated, err := d.DB.UpdateContent(r.Context(), r.App.ID, id, store.ContentInput{Status: &status})
	if err != nil {
		v := d.editView(r, c, c.Name, itemsFromJSON(c.Items))
		if !formErrors(v, err) {
			d.fail(w, r, err)
			return
		}
		if reason := v.Errors["status"]; reason != "" {
			v.Error = "status " + reason
		}
		d.render(w, r.Request, http.StatusUnprocessableEntity, "content_edit", v)
		return
	}
	redirect(w, r, contentPath(r, id), "content_"+updated.Status)
}
