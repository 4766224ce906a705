package cmd

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"service/migrations"
	"service/store"
)

func newMigrateCmd(schema string) *cobra.Command {
	m := &cobra.Command{
		Use:   "migrate [up | down N | version | schema]",
		Short: "Apply or roll back schema migrations (default: up), or print the schema they build",
		Args:  cobra.MaximumNArgs(2),
	}
	db := addDBFlag(m)
	m.RunE = func(cmd *cobra.Command, args []string) error {
		action := "up"
		if len(args) > 0 {
			action = args[0]
		}
		if err := checkFormDB(*db); err != nil {
			return err
		}
		if action == "schema" {
			// The schema the latest migration leaves, with no database
			// needed: PostgreSQL's for a postgres:// URL, else SQLite's.
			text := schema
			if store.IsPostgresURL(*db) {
				text = migrations.PostgresSchema
			}
			_, err := io.WriteString(cmd.OutOrStdout(), text)
			return err
		}
		if err := checkDB(*db, true); err != nil {
			return err
		}
		// Open migrates up by itself; only "down" must avoid that.
		d, err := store.OpenNoMigrate(cmd.Context(), *db)
		if err != nil {
			return err
		}
		defer d.Close()
		switch action {
		case "up":
			err = d.Migrate(cmd.Context(), 0)
		case "down":
			if len(args) != 2 {
				return fmt.Errorf("usage: migrate down N")
			}
			n, perr := strconv.Atoi(args[1])
			if perr != nil || n < 1 {
				return fmt.Errorf("migrate down: N must be a positive integer")
			}
			// Refused whole rather than rolling back what exists and then
			// failing: the operator asked for N steps that are not there.
			v, _, verr := d.Version()
			if verr != nil {
				return verr
			}
			steps, verr := d.MigrationsUpTo(v)
			if verr != nil {
				return verr
			}
			if n > steps {
				return fmt.Errorf("migrate down %d: the database is at version %d, so at most %d migration(s) can be rolled back", n, v, steps)
			}
			err = d.Migrate(cmd.Context(), -n)
		case "version":
		default:
			return fmt.Errorf("unknown migrate action %q: use up, down N, version or schema", action)
		}
		if err != nil {
			return err
		}
		v, dirty, err := d.Version()
		if err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"version": v, "dirty": dirty})
	}
	return m
}
