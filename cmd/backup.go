package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"service/store"
)

func newBackupCmd() *cobra.Command {
	var db, out string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Write a consistent, checked copy of the database, safe while serve runs",
		Long: `backup copies the database with VACUUM INTO in one read transaction: the
copy holds every row committed before it started, while the server keeps
reading and writing. The copy passes PRAGMA integrity_check before it is
renamed to --out, which must not exist yet.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
	}
	cmd.Flags().StringVar(&db, "db", "data.db", "path of the SQLite database file")
	envFlags(cmd.Flags(), "db")
	cmd.Flags().StringVar(&out, "out", "", "path of the copy to write (must not exist)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if store.IsPostgresURL(db) {
			return errPostgresBackup("backup")
		}
		if err := checkDB(db, false); err != nil {
			return err
		}
		if out == "" {
			return fmt.Errorf("--out is required")
		}
		if err := store.Backup(cmd.Context(), db, out); err != nil {
			return err
		}
		st, err := os.Stat(out)
		if err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"db": db, "out": out, "bytes": st.Size()})
	}
	return cmd
}

func newRestoreCmd() *cobra.Command {
	var from, db string
	var force bool
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Replace the database with a copy made by backup",
		Long: `restore checks the copy, then replaces --db with it. It refuses when --db
is open in another process (a running serve, another command or Litestream:
each holds a lock on the file, which restore probes), or when --db holds
data the copy lacks (a higher schema version, or any table whose row ids
have gone past the copy's), unless --force.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
	}
	cmd.Flags().StringVar(&from, "from", "", "path of the copy to restore")
	cmd.Flags().StringVar(&db, "db", "data.db", "path of the SQLite database file to replace")
	envFlags(cmd.Flags(), "db")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite even a database that is open or newer than the copy")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if store.IsPostgresURL(db) {
			return errPostgresBackup("restore")
		}
		// Only the form: restoring where no database is yet is how a copy
		// comes back on a new machine.
		if err := checkFormDB(db); err != nil {
			return err
		}
		if from == "" {
			return fmt.Errorf("--from is required")
		}
		if err := store.Restore(cmd.Context(), from, db, force); err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"db": db, "from": from})
	}
	return cmd
}

// errPostgresBackup refuses backup and restore on PostgreSQL: they copy a
// SQLite file, and PostgreSQL has its own tools for that.
func errPostgresBackup(what string) error {
	return fmt.Errorf("%s copies a SQLite database file; for PostgreSQL use pg_dump and pg_restore (see docs/operations.md)", what)
}
