package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"service/store"
)

// TestSubmissionsCSVDefusesFormulas checks the export byte for byte: every
// cell, the header's included, is quoted, and one a spreadsheet would run
// as a formula starts with '.
func TestSubmissionsCSVDefusesFormulas(t *testing.T) {
	tests := []struct {
		field, value         string
		wantHeader, wantCell string
	}{
		{`=HYPERLINK("http://evil.example","click")`, `=HYPERLINK("http://evil.example","click")`,
			`"'=HYPERLINK(""http://evil.example"",""click"")"`, `"'=HYPERLINK(""http://evil.example"",""click"")"`},
		// A spreadsheet splitting on ; would run the part after it, unless
		// the cell is quoted.
		{"note", "x;=1+1", `"note"`, `"x;=1+1"`},
		{"=f", "=1+1", `"'=f"`, `"'=1+1"`},
		{"+f", "+1", `"'+f"`, `"'+1"`},
		{"-f", "-1", `"'-f"`, `"'-1"`},
		{"@f", "@SUM(A1)", `"'@f"`, `"'@SUM(A1)"`},
		{"\tf", "\t=1", "\"'\tf\"", "\"'\t=1\""},
		{"\rf", "\r=1", "\"'\rf\"", "\"'\r=1\""},
		{"plain", `say "hi"`, `"plain"`, `"say ""hi"""`},
	}
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("Shop")
	var fields []map[string]any
	data := map[string]string{}
	for _, tt := range tests {
		fields = append(fields, map[string]any{"name": tt.field, "type": "text"})
		data[tt.field] = tt.value
	}
	items, _ := json.Marshal([]map[string]any{{"type": "form", "fields": fields}})
	c := e.content(app.ID, "Signup", string(items))
	pub := "published"
	if _, err := e.db.UpdateContent(e.ctx, app.ID, c.ID, store.ContentInput{Status: &pub}); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(data)
	user, session, env := "=cmd|' /C calc'!A0", "-s", "@e"
	sub, err := e.db.SubmitForm(e.ctx, app.ID, store.FormSubmissionInput{ContentViewID: &c.ID, Data: raw,
		UserID: &user, SessionID: &session, Environment: &env})
	if err != nil {
		t.Fatal(err)
	}

	header := []string{`"id"`, `"submittedAt"`, `"userId"`, `"sessionId"`, `"environment"`}
	row := []string{fmt.Sprintf(`"%d"`, sub.ID), `"` + sub.SubmittedAt.UTC().Format("2006-01-02T15:04:05.000Z") + `"`,
		`"'=cmd|' /C calc'!A0"`, `"'-s"`, `"'@e"`}
	for _, tt := range tests {
		header = append(header, tt.wantHeader)
		row = append(row, tt.wantCell)
	}
	header = append(header, `"data"`)
	row = append(row, `"`+strings.ReplaceAll(string(sub.Data), `"`, `""`)+`"`)
	want := strings.Join(header, ",") + "\n" + strings.Join(row, ",") + "\n"

	p := b.get(fmt.Sprintf("/apps/%d/content/%d/submissions.csv", app.ID, c.ID))
	wantStatus(t, p, http.StatusOK)
	if p.body != want {
		t.Fatalf("csv:\n%q\nwant:\n%q", p.body, want)
	}
}
