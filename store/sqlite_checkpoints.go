package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync/atomic"
	"time"
)

// checkpoints runs the database's checkpointer, in a child process when
// Options.CheckpointCommand names one, else as a goroutine.
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
type checkpoints struct {
	worker *checkpointer
	stop   chan struct{}
	done   chan struct{}
	pid    atomic.Int64 // the child's, while one runs
	log    *slog.Logger
}

// checkpointStopTimeout bounds how long closing waits for the child to
// finish the checkpoint it is in; a RESTART one may wait on readers.
const checkpointStopTimeout = 30 * time.Second

func startCheckpoints(path string, opts Options) (*checkpoints, error) {
	w, err := newCheckpointer(path, opts.walLimit)
	if err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cs := &checkpoints{worker: w, stop: make(chan struct{}), done: make(chan struct{}), log: log}
	var cmd *exec.Cmd
	if opts.CheckpointCommand != nil {
		cmd = opts.CheckpointCommand(path, w.limit)
	}
	go cs.run(cmd)
	return cs, nil
}

func (cs *checkpoints) run(cmd *exec.Cmd) {
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
func (cs *checkpoints) runProcess(cmd *exec.Cmd) error {
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

// truncate checkpoints everything and empties the WAL, waiting
// busy_timeout for readers and writers, which the server's own writer
// connection does not (see DB.begin). Any connection may checkpoint.
func (cs *checkpoints) truncate(ctx context.Context) error {
	_, err := cs.worker.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// close stops the checkpointer, then truncates the WAL: a cleanly closed
// database is one compact file (after a crash, WAL recovery handles it
// anyway).
func (cs *checkpoints) close() {
	close(cs.stop)
	<-cs.done
	_ = cs.truncate(context.Background())
	cs.worker.conn.Close()
}
