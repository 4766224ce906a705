// Package cmd is the command line: one file per cobra command. Flags and
// environment variables are read here and nowhere else.
package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"service/store"
)

// Version is set at build time with -ldflags "-X service/cmd.Version=...".
var Version = "dev"

// Execute runs the command line under ctx, which ends on SIGINT or SIGTERM.
// schema is the text of schema.sql, embedded by main.
func Execute(ctx context.Context, schema string) error {
	return NewRoot(os.Stdout, os.Stderr, schema).ExecuteContext(ctx)
}

// NewRoot builds the command tree writing to out and errOut; schema is the
// text `migrate schema` prints.
func NewRoot(out, errOut io.Writer, schema string) *cobra.Command {
	root := &cobra.Command{
		Use:           "service",
		Short:         "Campaigns, content blocks, audiences, events, forms and webhooks over HTTP",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: false,
		// Configuration flags can also come from SERVICE_<FLAG>, so a
		// container or a unit file can configure the service without a
		// command line.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return applyEnv(cmd.Flags())
		},
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.AddCommand(newServeCmd(), newMigrateCmd(schema), newSeedCmd(), newAppsCmd(), newKeysCmd(),
		newUsersCmd(), newAuditCmd(), newSecretsCmd())
	root.AddCommand(newBackupCmd(), newRestoreCmd(), newHealthcheckCmd(), newCheckpointerCmd())
	describeEnv(root)
	return root
}

// envAnnotation marks a flag that SERVICE_<FLAG> may set. Only the server's
// configuration is marked (database, address, intervals, timeouts, log
// level and the like), never what a command acts on (ids, names, roles,
// plans): a stray SERVICE_ID in a shell must not pick the key to revoke.
const envAnnotation = "service_env"

// envFlags marks the named flags of fs, or all of them when none is named,
// as configuration that the environment may set.
func envFlags(fs *pflag.FlagSet, names ...string) {
	if len(names) == 0 {
		fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	}
	for _, n := range names {
		_ = fs.SetAnnotation(n, envAnnotation, []string{envName(n)})
	}
}

func envName(flag string) string {
	return "SERVICE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// describeEnv lists, in every command's --help, the environment variables
// it reads.
func describeEnv(cmd *cobra.Command) {
	var lines []string
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[envAnnotation]; ok {
			lines = append(lines, fmt.Sprintf("  %-30s --%s", envName(f.Name), f.Name))
		}
	})
	if cmd.Runnable() {
		long := cmd.Long
		if long == "" {
			long = cmd.Short
		}
		if len(lines) == 0 {
			long += "\n\nEnvironment variables: none; every value comes from a flag."
		} else {
			long += "\n\nEnvironment variables (a flag given on the command line wins):\n" + strings.Join(lines, "\n")
		}
		cmd.Long = long
	}
	for _, c := range cmd.Commands() {
		describeEnv(c)
	}
}

func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[envAnnotation]; f.Changed || err != nil || !ok {
			return
		}
		name := envName(f.Name)
		if v, ok := os.LookupEnv(name); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s: %w", name, e)
			}
		}
	})
	return err
}

// printJSON writes exactly one JSON object and a newline.
func printJSON(cmd *cobra.Command, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
	return err
}

func addDBFlag(cmd *cobra.Command) *string {
	p := cmd.Flags().String("db", "data.db", "path of the SQLite database file, or a postgres:// URL")
	envFlags(cmd.Flags(), "db")
	return p
}

// openDB opens and migrates the database for a one-shot command. It works
// while a server runs on the same file: WAL lets both read, and writers
// take turns through busy_timeout. A SQLite file that is not there is
// refused: for a command that reads or changes what exists it is a typo,
// and opening it would create an empty database and answer from it.
func openDB(cmd *cobra.Command, path string) (*store.DB, error) {
	if err := checkDB(path, false); err != nil {
		return nil, err
	}
	return store.Open(cmd.Context(), path)
}

// openOrCreateDB is openDB for a command that creates the database when
// it is not there (seed).
func openOrCreateDB(cmd *cobra.Command, path string) (*store.DB, error) {
	if err := checkDB(path, true); err != nil {
		return nil, err
	}
	return store.Open(cmd.Context(), path)
}

// ExitCode is the exit status of a command that returned err: 0 for nil,
// 2 when --db names no database the command can use (a usage error, which
// a script can tell from a failure of the work itself), else 1.
func ExitCode(err error) int {
	var u *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

// usageError is a failure of the command line itself, before any work.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// urlScheme matches a --db that is a URL, whose scheme is then one the
// store speaks or a mistake: SQLite would take "mysql://host/x" for a
// relative path and create directories named after the host.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// supportedDB names what --db accepts, for the messages that refuse one.
const supportedDB = "a SQLite file path, a postgres:// URL or a postgresql:// URL"

// checkFormDB refuses a --db that is neither a file path nor a PostgreSQL
// URL: an empty one (SQLite would open a temporary database that vanishes
// on close) or another URL scheme. It names only the scheme of a URL,
// whose rest may hold a password.
func checkFormDB(path string) error {
	switch {
	case store.IsPostgresURL(path):
		return nil
	case path == "":
		return usagef(`no database at "": --db is empty; give %s`, supportedDB)
	case urlScheme.MatchString(path):
		return usagef("--db %s…: not a supported database; give %s", urlScheme.FindString(path), supportedDB)
	}
	return nil
}

// checkDB checks --db before anything opens it: its form, its directory,
// and, unless the command creates databases (serve, migrate, seed), that
// the SQLite file exists.
func checkDB(path string, creates bool) error {
	if err := checkFormDB(path); err != nil || store.IsPostgresURL(path) {
		return err
	}
	if err := checkDBDir(path); err != nil {
		return err
	}
	if creates {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return usagef("no database at %s (serve, migrate or seed creates one)", path)
	}
	return nil
}

// checkDBDir says plainly when the database's directory is missing: SQLite
// would create the file but not its directory, and report only "unable to
// open database file".
func checkDBDir(path string) error {
	if store.IsPostgresURL(path) {
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("--db %s: directory %s does not exist; create it first", path, dir)
	case err != nil:
		return fmt.Errorf("--db %s: %w", path, err)
	case !fi.IsDir():
		return usagef("--db %s: %s is not a directory", path, dir)
	}
	return nil
}
