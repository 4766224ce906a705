package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	modernc "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Backup writes a consistent copy of the database at src to dst, which must
// not exist. It runs VACUUM INTO inside one read transaction: the copy holds
// exactly the rows committed before it started, and WAL lets the server go
// on reading and writing meanwhile. The copy is written beside dst, checked
// with PRAGMA integrity_check, synced, and only then renamed into place, so
// dst is either absent or a whole, checked copy.
func Backup(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("backup: %s already exists", dst)
	}
	db, err := sql.Open("sqlite", DSN(src))
	if err != nil {
		return err
	}
	defer db.Close()
	tmp := dst + ".tmp-" + strconv.Itoa(os.Getpid())
	os.Remove(tmp)
	defer os.Remove(tmp)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := CheckIntegrity(ctx, tmp); err != nil {
		return fmt.Errorf("backup: the copy failed its check: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// CheckIntegrity runs PRAGMA integrity_check on the database file at path
// and fails unless it answers "ok".
func CheckIntegrity(ctx context.Context, path string) error {
	db, err := openPlain(path)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("integrity_check: %v", problems)
	}
	return nil
}

// openPlain opens an existing file without creating it, migrating it or
// changing its journal mode.
func openPlain(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return sql.Open("sqlite", "file:"+dsnPath.Replace(path)+"?mode=ro&_pragma=busy_timeout(10000)")
}

// ErrInUse is returned by Restore when another process holds the target
// database open.
var ErrInUse = errors.New("the database is open in another process (a running serve, a command or Litestream); stop it first")

// ErrNewer is returned by Restore when the target holds data the copy does
// not.
var ErrNewer = errors.New("the database is newer than the copy")

// InUse reports whether another connection holds the database at path open.
// In WAL mode every open connection keeps a shared lock on the database
// file, so a connection in exclusive locking mode that cannot begin an
// exclusive transaction, with no busy wait, proves someone else has it
// open. The probe takes the lock only for that instant.
func InUse(ctx context.Context, path string) (bool, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	db, err := sql.Open("sqlite", "file:"+dsnPath.Replace(path)+"?_pragma=busy_timeout(0)&_pragma=locking_mode(EXCLUSIVE)")
	if err != nil {
		return false, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
		var se *modernc.Error
		if errors.As(err, &se) {
			if c := se.Code() & 0xff; c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED {
				return true, nil
			}
		}
		return false, err
	}
	_, err = conn.ExecContext(ctx, `ROLLBACK`)
	return false, err
}

// Watermark is how far a database has come: its schema version and, per
// table, the highest rowid ever used (AUTOINCREMENT counters included).
// Rowids only grow as rows are written, so a database whose watermark
// exceeds a copy's in any table holds rows the copy never saw.
type Watermark struct {
	Version uint
	Rows    map[string]int64
}

// ReadWatermark reads the watermark of the database at path.
func ReadWatermark(ctx context.Context, path string) (Watermark, error) {
	w := Watermark{Rows: map[string]int64{}}
	db, err := openPlain(path)
	if err != nil {
		return w, err
	}
	defer db.Close()
	// One read transaction, so all the figures come from one snapshot.
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return w, err
	}
	defer tx.Rollback()
	var v sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_migrations LIMIT 1`).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return w, fmt.Errorf("read schema version: %w", err)
	}
	w.Version = uint(v.Int64)
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' AND sql NOT LIKE '%WITHOUT ROWID%'`)
	if err != nil {
		return w, err
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return w, err
		}
		tables = append(tables, n)
	}
	rows.Close()
	for _, t := range tables {
		var n sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(rowid) FROM "`+t+`"`).Scan(&n); err != nil {
			return w, err
		}
		w.Rows[t] = n.Int64
	}
	// AUTOINCREMENT counters remember ids of rows since deleted (retention
	// empties events), so they count too.
	if rows, err := tx.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence`); err == nil {
		for rows.Next() {
			var n string
			var seq int64
			if rows.Scan(&n, &seq) == nil && seq > w.Rows[n] {
				w.Rows[n] = seq
			}
		}
		rows.Close()
	}
	return w, nil
}

// NewerThan says whether w holds data that c lacks, and why.
func (w Watermark) NewerThan(c Watermark) (bool, string) {
	if w.Version > c.Version {
		return true, fmt.Sprintf("schema version %d, the copy's is %d", w.Version, c.Version)
	}
	for t, n := range w.Rows {
		if n > c.Rows[t] {
			return true, fmt.Sprintf("table %s reaches row %d, the copy only %d", t, n, c.Rows[t])
		}
	}
	return false, ""
}

// Restore replaces the database at dst with the copy at src. It refuses,
// unless force is set, when dst is open in another process (ErrInUse) or
// holds data the copy lacks (ErrNewer). The copy is checked first, then
// written beside dst, synced, and renamed over it; dst's -wal and -shm
// files go first, since a stale log replayed onto the restored file would
// corrupt it.
func Restore(ctx context.Context, src, dst string, force bool) error {
	if err := CheckIntegrity(ctx, src); err != nil {
		return fmt.Errorf("restore: the copy %s failed its check: %w", src, err)
	}
	cw, err := ReadWatermark(ctx, src)
	if err != nil {
		return fmt.Errorf("restore: read the copy: %w", err)
	}
	if cw.Version == 0 {
		return fmt.Errorf("restore: %s is not a database of this service (no schema version)", src)
	}
	if _, err := os.Stat(dst); err == nil {
		inUse, err := InUse(ctx, dst)
		if err != nil {
			return fmt.Errorf("restore: probe %s: %w", dst, err)
		}
		if inUse && !force {
			return fmt.Errorf("restore: %s: %w (or pass --force)", dst, ErrInUse)
		}
		if !inUse && !force {
			dw, err := ReadWatermark(ctx, dst)
			if err != nil {
				return fmt.Errorf("restore: read %s: %w (pass --force to overwrite it anyway)", dst, err)
			}
			if newer, why := dw.NewerThan(cw); newer {
				return fmt.Errorf("restore: %s: %w: %s (pass --force to overwrite it)", dst, ErrNewer, why)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp := dst + ".restore-" + strconv.Itoa(os.Getpid())
	defer os.Remove(tmp)
	if err := copyFile(src, tmp); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, side := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(dst + side); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restore: %w", err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return syncDir(filepath.Dir(dst))
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a rename durable; directories that cannot be synced (some
// platforms) are left as they are.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync()
	return nil
}
