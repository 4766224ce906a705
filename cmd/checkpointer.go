package cmd

import (
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"

	"service/store"
)

// newCheckpointerCmd is the process serve starts to checkpoint its
// database (see store.checkpoints): internal, hence hidden. It runs until
// its standard input ends, which happens when serve closes it or exits in
// any way, kill -9 included. Interrupts and SIGTERM are caught by main and
// ignored here: a terminal's Ctrl-C or a service manager reaches the whole
// process group, and serve stops this process itself once it has drained.
func newCheckpointerCmd() *cobra.Command {
	var db string
	var limit int64
	cmd := &cobra.Command{
		Use:          "checkpointer",
		Short:        "Checkpoint a serving database's WAL until standard input ends (started by serve)",
		Args:         cobra.NoArgs,
		Hidden:       true,
		SilenceUsage: true,
	}
	cmd.Flags().StringVar(&db, "db", "", "path of the SQLite database file")
	cmd.Flags().Int64Var(&limit, "wal-limit", 0, "WAL length in bytes past which a checkpoint waits for readers (0: the default)")
	_ = cmd.MarkFlagRequired("db")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stop := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, cmd.InOrStdin())
			close(stop)
		}()
		return store.RunCheckpointer(db, limit, stop)
	}
	return cmd
}

// checkpointerCommand runs this binary's checkpointer command for serve.
// Nil when the executable cannot be found: the checkpoints then run inside
// serve.
func checkpointerCommand() func(path string, walLimit int64) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return func(path string, walLimit int64) *exec.Cmd {
		c := exec.Command(exe, "checkpointer", "--db", path, "--wal-limit", strconv.FormatInt(walLimit, 10))
		c.Stderr = os.Stderr
		return c
	}
}
