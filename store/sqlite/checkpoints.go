package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync/atomic"
	"time"
)

// Checkpoints runs the database's checkpointer, in a child process when
// the store's Options.CheckpointCommand names one, else as a goroutine.
//
// Why a process: a checkpoint ends in fsyncs, and a Go thread blocked in
// fsync keeps its scheduler slot until the runtime's monitor notices, which
// under steady load can take up to 10 ms. With GOMAXPROCS=1 every request
// waits that long, several times a second. In a process of its own the
// fsync blocks only that process. SQLite's WAL is built for several
// processes (shared memory index, file locks), so the checkpoint is the
// same one, with the same ordering of writes and fsyncs; only where it
// waits changes.
//
// The child checkpoints until its standard input ends: when this side
// closes it, or dies, even by kill -9. If the child fails, the goroutine
// takes over, so the WAL never grows unchecked.
type Checkpoints struct {
	worker *checkpointer
	stop   chan struct{}
	done   chan struct{}
	pid    atomic.Int64 // the child's, while one runs
	log    *slog.Logger
}

// checkpointStopTimeout bounds how long closing waits for the child to
// finish the checkpoint it is in; a RESTART one may wait on readers.
const checkpointStopTimeout = 30 * time.Second

// StartCheckpoints starts the checkpointer of the file at path, whose WAL
// it keeps under walLimit bytes (0: WALLimit): in the process command
// returns, if command is not nil, else in a goroutine.
func StartCheckpoints(path string, walLimit int64, command func(path string, walLimit int64) *exec.Cmd, log *slog.Logger) (*Checkpoints, error) {
	w, err := newCheckpointer(path, walLimit)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cs := &Checkpoints{worker: w, stop: make(chan struct{}), done: make(chan struct{}), log: log}
	var cmd *exec.Cmd
	if command != nil {
		cmd = command(path, w.limit)
	}
	go cs.run(cmd)
	return cs, nil
}

func (cs *Checkpoints) run(cmd *exec.Cmd) {
	defer close(cs.done)
	if cmd != nil {
		err := cs.runProcess(cmd)
		if err == nil {
			return
		}
		cs.log.Warn("checkpointer process failed; checkpointing in the server process", "err", err)
	}
	cs.worker.loop(cs.stop)
}

// runProcess runs the child until stop, and returns nil then; an error
// means the child could not start or ended on its own.
func (cs *Checkpoints) runProcess(cmd *exec.Cmd) error {
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	cs.pid.Store(int64(cmd.Process.Pid))
	defer cs.pid.Store(0)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-cs.stop:
		in.Close()
		select {
		case <-exited:
		case <-time.After(checkpointStopTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
		return nil
	case err := <-exited:
		if err == nil {
			err = errors.New("exited")
		}
		return fmt.Errorf("pid %d: %w", cmd.Process.Pid, err)
	}
}

// Truncate checkpoints everything and empties the WAL, waiting
// busy_timeout for readers and writers, which the server's own writer
// connection does not (see store.DB.begin). Any connection may checkpoint.
func (cs *Checkpoints) Truncate(ctx context.Context) error {
	_, err := cs.worker.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// Close stops the checkpointer, then truncates the WAL: a cleanly closed
// database is one compact file (after a crash, WAL recovery handles it
// anyway).
func (cs *Checkpoints) Close() {
	close(cs.stop)
	<-cs.done
	_ = cs.Truncate(context.Background())
	cs.worker.conn.Close()
}

// PID is the checkpointer process's, while one runs, else 0.
func (cs *Checkpoints) PID() int64 { return cs.pid.Load() }

// Writebacks counts the WAL writebacks the goroutine's checkpointer
// started (see writeback).
func (cs *Checkpoints) Writebacks() int64 { return cs.worker.writebacks.Load() }
