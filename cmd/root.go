// Package cmd is the command line: one file per cobra command. Flags and
// environment variables are read here and nowhere else.
package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
		// Every flag can also come from SERVICE_<FLAG>, so a container or a
		// unit file can configure the service without a command line.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return applyEnv(cmd.Flags())
		},
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.AddCommand(newServeCmd(), newMigrateCmd(schema), newSeedCmd(), newAppsCmd(), newKeysCmd(),
		newUsersCmd(), newSecretsCmd())
	root.AddCommand(newBackupCmd(), newRestoreCmd(), newHealthcheckCmd())
	return root
}

func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil {
			return
		}
		name := "SERVICE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
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
	return cmd.Flags().String("db", "data.db", "path of the SQLite database file")
}

// openDB opens and migrates the database for a one-shot command. It works
// while a server runs on the same file: WAL lets both read, and writers
// take turns through busy_timeout.
func openDB(cmd *cobra.Command, path string) (*store.DB, error) {
	return store.Open(cmd.Context(), path)
}
