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
// take turns through busy_timeout.
func openDB(cmd *cobra.Command, path string) (*store.DB, error) {
	if err := checkDBDir(path); err != nil {
		return nil, err
	}
	return store.Open(cmd.Context(), path)
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
		return fmt.Errorf("--db %s: directory %s does not exist; create it first", path, dir)
	case err != nil:
		return fmt.Errorf("--db %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("--db %s: %s is not a directory", path, dir)
	}
	return nil
}
