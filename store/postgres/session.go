package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Sessions of their own, outside the pools: a pooled connection goes back
// to the pool between statements, and a session-level advisory lock would
// go with it, as would a LISTEN. Behind PgBouncer they must be direct or
// session-mode connections for the same reason.

// LeaderLockKey is the advisory lock that is the leadership of the
// scheduled work, in the database's own lock space (advisory locks are per
// database). It fits in 32 bits, so pg_locks shows it as objid with
// classid 0.
const LeaderLockKey = 0x5ce0_1ead

// MetricMovesLockKey is the transaction-level advisory lock that a pass
// over the journaled metric moves holds, beside the leader's in the same
// space.
const MetricMovesLockKey = 0x5ce0_3e75

// PresenceKeyClass is the high half of every presence key: advisory locks
// with a 64-bit key show it as classid in pg_locks, and the leader's lock
// has classid 0, so the two can never be mistaken.
const PresenceKeyClass = 0x5e7c

// keepalives are the server's TCP keepalive settings for a session that
// holds a lock, unless the URL sets them: a holder whose machine vanished
// without closing its connections holds the lock until the server gives up
// on its session, after about idle + interval × count seconds (8 s) of
// silence rather than the system's default of two hours.
var keepalives = map[string]string{
	"tcp_keepalives_idle":     "5",
	"tcp_keepalives_interval": "1",
	"tcp_keepalives_count":    "3",
}

// LockSession opens a session for holding advisory locks, with keepalives.
func LockSession(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	cfg = cfg.Copy()
	for k, v := range keepalives {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// TryAdvisoryLock asks once for the session-level advisory lock key on c:
// false when another session holds it. PostgreSQL releases such a lock
// the moment the session ends, and a process that dies (kill -9 included)
// ends its sessions at once, as the kernel closes its sockets.
func TryAdvisoryLock(ctx context.Context, c *pgx.Conn, key int64) (bool, error) {
	var ok bool
	err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok)
	return ok, err
}

// Watch pings a session that holds a lock every check until stop closes,
// and calls lost, once, when a ping fails or takes longer than timeout:
// from then on PostgreSQL may have released the lock, and another process
// may act on that. It closes done on return.
func Watch(c *pgx.Conn, check, timeout time.Duration, lost func(error), stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(check)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err := c.Ping(ctx)
		cancel()
		if err != nil {
			lost(err)
			return
		}
	}
}

// CloseSession ends a session, giving up soon on a server that does not
// answer: the socket closes either way.
func CloseSession(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

// Listen LISTENs on channel on a session of its own until it fails or ctx
// ends: it calls listening once the LISTEN is in place, and changed for
// every notification that is not self's (a process's own). A payload is
// the notifying process's token, then ":" and the change counter's value
// its change left, which changed is given (0 for a payload without one).
func Listen(ctx context.Context, cfg *pgx.ConnConfig, channel, self string, listening func(), changed func(version int64)) error {
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, `LISTEN `+channel); err != nil {
		return err
	}
	listening()
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		token, version, _ := strings.Cut(n.Payload, ":")
		if token != self {
			v, _ := strconv.ParseInt(version, 10, 64)
			changed(v)
		}
	}
}
