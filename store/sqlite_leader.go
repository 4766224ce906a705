package store

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"service/store/sqlite"
)

// Leader election on SQLite: the leader is the process that holds an
// exclusive lock (flock) on a file beside the database, <db>-leader. The
// kernel releases the lock the moment its holder's file is closed, and a
// process that ends in any way (kill -9 included) has its files closed:
// so the next process to ask takes over without a lease to run out, as a
// closed session hands over PostgreSQL's advisory lock. The others ask
// again every leaderRetry.
//
// The lock is on a file of its own, never on the database: SQLite locks
// the database with POSIX record locks, which a process loses on closing
// any descriptor of that file, and a lock here would need one.
//
// Every process used to lead on SQLite, relying on each scheduled change
// being a conditional update that a second mover finds done; that kept
// the changes single, but two processes still ran every scheduled job,
// and both said they led.

// leaderFileSuffix names the lock file: the database's path with it.
const leaderFileSuffix = "-leader"

// fileLeader is the process's side of the election on SQLite.
type fileLeader struct {
	mu     sync.Mutex
	closed bool
	held   *Leadership
	log    *slog.Logger
}

// fileElection is the election on SQLite, for AwaitLeadership.
func (db *DB) fileElection() election {
	name := db.path + leaderFileSuffix
	return election{
		try: db.tryLeadFile,
		log: db.lead.log,
		// So that the log of two processes on one file says which one
		// leads and which one waits.
		waiting: func() []any { return []any{"pid", os.Getpid(), "leader_pid", leaderPID(name)} },
		failing: "cannot ask for the leadership of the scheduled work; retrying",
		where:   []any{"file", name},
	}
}

// tryLeadFile asks for the lock once: a Leadership when it was granted;
// nil and nil when another process holds it.
func (db *DB) tryLeadFile(ctx context.Context) (*Leadership, error) {
	fl := &db.lead
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.closed {
		return nil, errClosed
	}
	name := db.path + leaderFileSuffix
	// Go opens files close-on-exec: the checkpointer child never inherits
	// the lock, which would outlive this process.
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	ok, err := sqlite.TryLockFile(f)
	if err != nil || !ok {
		f.Close()
		return nil, err
	}
	// The holder's pid, for an operator who wonders which process leads.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &Leadership{ctx: lctx, cancel: cancel}
	stop, done := make(chan struct{}), make(chan struct{})
	go db.watchLeaderFile(f, name, cancel, stop, done)
	l.release = func() {
		close(stop)
		<-done
		// Closing the file releases the lock.
		f.Close()
		db.leading.Store(false)
		fl.mu.Lock()
		if fl.held == l {
			fl.held = nil
		}
		fl.mu.Unlock()
	}
	fl.held = l
	db.leading.Store(true)
	return l, nil
}

// watchLeaderFile checks every leaderCheck, until stop closes, that the
// lock file's name still leads to the file this process locked. If it was
// removed or replaced (by hand, or by a tool that cleans up files beside
// the database), a process that starts now would create a new file and
// lock it: so the leadership ends at once, and the work under it stops.
func (db *DB) watchLeaderFile(f *os.File, name string, lost context.CancelFunc, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(leaderCheck)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		held, err1 := f.Stat()
		named, err2 := os.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			continue
		}
		if db.lead.log != nil {
			db.lead.log.Warn("the leader's lock file was removed or replaced; the scheduled work stops", "file", name)
		}
		db.leading.Store(false)
		lost()
		return
	}
}

// closeFileLeader releases the leadership this process holds, for Close,
// and stops every later attempt.
func (db *DB) closeFileLeader() {
	fl := &db.lead
	fl.mu.Lock()
	fl.closed = true
	held := fl.held
	fl.mu.Unlock()
	if held != nil {
		held.Release()
	}
}

// leaderPID returns the pid the process that leads (or led last) wrote in
// the lock file at name, or 0 when none is written.
func leaderPID(name string) int {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
