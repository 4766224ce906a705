package cmd

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"service/store"
)

// newAuditCmd prints the audit log: the instance's changes (apps created
// and deleted, dashboard users and owners), as owners see them in the
// dashboard, or one app's.
func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Print the audit log of the instance (apps, users, owners) or of one app, newest first",
		Args:  cobra.NoArgs,
	}
	db := addDBFlag(cmd)
	asJSON := cmd.Flags().Bool("json", false, `print {"data":[entries]} as the API's audit-log route does`)
	app := cmd.Flags().Int64("app", 0, "print this app's log instead of the instance's")
	limit := cmd.Flags().Int("limit", 100, fmt.Sprintf("how many entries at most (up to %d)", store.MaxAuditLimit))
	before := cmd.Flags().Int64("before", 0, "only entries older than this entry id: the next page")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if *limit < 1 {
			return errors.New("--limit must be at least 1")
		}
		d, err := openDB(cmd, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		f := store.AuditFilter{AppID: *app, Instance: *app == 0, Limit: *limit, Before: *before}
		list, err := d.FindAuditLog(cmd.Context(), f)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(cmd, map[string]any{"data": list})
		}
		w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tTIME\tACTOR\tACTION\tOBJECT\tCHANGES")
		for _, e := range list {
			obj := e.Object.Type
			if e.Object.ID != nil {
				obj += " " + strconv.FormatInt(*e.Object.ID, 10)
			}
			if e.Object.Name != "" {
				obj += " " + strconv.Quote(e.Object.Name)
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Timestamp.Format("2006-01-02 15:04:05Z07:00"), e.Actor.Label(), e.Action, obj, changesText(e.Changes))
		}
		return w.Flush()
	}
	return cmd
}

// changesText writes changes on one line: field: before → after.
func changesText(changes map[string]store.Change) string {
	names := make([]string, 0, len(changes))
	for k := range changes {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		c := changes[k]
		switch {
		case c.Before == nil:
			parts[i] = fmt.Sprintf("%s: %s", k, c.After)
		case c.After == nil:
			parts[i] = fmt.Sprintf("%s: %s → (deleted)", k, c.Before)
		default:
			parts[i] = fmt.Sprintf("%s: %s → %s", k, c.Before, c.After)
		}
	}
	return strings.Join(parts, "; ")
}
