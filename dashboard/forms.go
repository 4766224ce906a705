package dashboard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"service/jsonjs"
	"service/store"
)

// exportTimeout bounds how long one CSV export may take to write.
const exportTimeout = 30 * time.Minute

type submissionsData struct {
	Block   *store.ContentView
	Columns []string
	Rows    []submissionRow
	Pager   pager
}

type submissionRow struct {
	S      *store.FormSubmission
	Values []string
}

// formColumns are the field names of a block's form, in the form's order.
func formColumns(c *store.ContentView) []string {
	var cols []string
	for _, f := range c.FormFields() {
		cols = append(cols, f.Name)
	}
	return cols
}

// dataValues lays a submission's data out in the columns' order; values
// that are not strings are shown as their JSON.
func dataValues(data json.RawMessage, cols []string) []string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	out := make([]string, len(cols))
	for i, c := range cols {
		raw, ok := m[c]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[i] = s
		} else {
			out[i] = string(raw)
		}
	}
	return out
}

func (d *Dashboard) handleSubmissions(w http.ResponseWriter, r *req) {
	id, _ := pathID(r, "id")
	o := listOptions(r, 25)
	list, p, err := d.DB.FindContentSubmissions(r.Context(), r.App.ID, id, o)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	c, err := d.DB.FindContentByID(r.Context(), r.App.ID, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data := submissionsData{Block: c, Columns: formColumns(c), Pager: newPager(r, o, p, len(list))}
	for _, s := range list {
		data.Rows = append(data.Rows, submissionRow{S: s, Values: dataValues(s.Data, data.Columns)})
	}
	v := d.page(r, "content", "Submissions of "+c.Name)
	v.Data = data
	d.render(w, r.Request, http.StatusOK, "submissions", v)
}

// csvCell defuses cells a spreadsheet would run as a formula.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// writeCSVRecord writes cells as one CSV record, each defused by csvCell
// and quoted. Submitted text and field names are the public's, so no cell
// is trusted: quoting them all keeps a spreadsheet that splits on another
// separator (";" in many locales) from finding a formula after it, and
// encoding/csv quotes only the cells that need it for a comma.
func writeCSVRecord(w *bufio.Writer, cells []string) error {
	for i, c := range cells {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteByte('"')
		w.WriteString(strings.ReplaceAll(csvCell(c), `"`, `""`))
		w.WriteByte('"')
	}
	return w.WriteByte('\n')
}

// handleSubmissionsCSV streams every submission of a block as CSV, row by
// row from the database, flushing as it goes: an export of any size holds
// one row in memory.
func (d *Dashboard) handleSubmissionsCSV(w http.ResponseWriter, r *req) {
	id, _ := pathID(r, "id")
	c, err := d.DB.FindContentByID(r.Context(), r.App.ID, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	cols := formColumns(c)
	// serve's write timeout suits pages, not an export of a million rows;
	// a server without deadlines (a test recorder) just says no.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(exportTimeout))
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="content-%d-submissions.csv"`, c.ID))
	cw := bufio.NewWriter(w)
	header := append([]string{"id", "submittedAt", "userId", "sessionId", "environment"}, cols...)
	writeCSVRecord(cw, append(header, "data"))
	flusher, _ := w.(http.Flusher)
	n := 0
	err = d.DB.EachFormSubmission(r.Context(), r.App.ID, id, func(s *store.FormSubmission) error {
		row := []string{strconv.FormatInt(s.ID, 10), s.SubmittedAt.UTC().Format(jsonjs.TimeLayout),
			deref(s.UserID), deref(s.SessionID), deref(s.Environment)}
		row = append(row, dataValues(s.Data, cols)...)
		if err := writeCSVRecord(cw, append(row, string(s.Data))); err != nil {
			return err
		}
		if n++; n%500 == 0 {
			if err := cw.Flush(); err != nil {
				return err
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		return nil
	})
	if err != nil {
		// The status may be sent already: cut the connection, so the
		// download fails visibly instead of ending like a whole file.
		d.Log.Error("csv export", "content", id, "err", err)
		panic(http.ErrAbortHandler)
	}
	if err := cw.Flush(); err != nil {
		d.Log.Error("csv export", "content", id, "err", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
