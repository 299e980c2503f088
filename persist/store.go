package persist

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-hub/mcp-hub/upstream"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"
)

// FileName is the name of the database file inside the data directory.
const FileName = "hub.db"

// Errors reported by the Store; test for them with errors.Is.
var (
	// ErrNotFound means the named upstream is not registered. It is
	// upstream.ErrNotFound, so callers that only know package upstream can
	// test for it.
	ErrNotFound = upstream.ErrNotFound
	// ErrExists means an upstream with that name (or ID) is already
	// registered; it is upstream.ErrExists.
	ErrExists = upstream.ErrExists
	// ErrTooNew means hub.db was written by a newer mcp-hub whose schema this
	// binary does not understand. The file was not modified.
	ErrTooNew = errors.New("database schema too new")
	// ErrCorrupt means hub.db failed its integrity check or is not a SQLite
	// database. The file was not modified.
	ErrCorrupt = errors.New("database corrupt")
	// ErrUnavailable means the PostgreSQL server cannot be reached (down,
	// restarting, cut off): nothing was read, and a write was not applied
	// (a write whose commit was cut off says so). It is
	// upstream.ErrStoreUnavailable.
	ErrUnavailable = upstream.ErrStoreUnavailable
)

// Options tunes a Store. A nil *Options means the defaults.
type Options struct {
	// Now returns the current time for timestamps. Nil means time.Now.
	Now func() time.Time
	// Resync (PostgreSQL) makes [Store.Changed] report a change at least
	// this often, so that what was edited behind the store's back (SQL by
	// hand, which announces nothing) is applied too: 30s when zero,
	// never when negative.
	Resync time.Duration
}

// Store is an open store: a hub.db file, or a PostgreSQL database
// ([OpenPostgres]). It is safe for concurrent use.
type Store struct {
	db      dbx
	dialect dialect
	path    string // the file, or the server's URL without its password
	now     func() time.Time

	// SQLite: wconn is the one connection every write goes through, and
	// the one PRAGMA data_version is read on (data_version is per
	// connection, and does not change for the connection's own commits).
	// PostgreSQL: nil. wsem serialises the writes of this Store (and the
	// use of wconn).
	wconn *sqlx.Conn
	wsem  chan struct{}

	// Guarded by wsem.
	dataVersion int64
	haveVersion bool

	pg *pgState // PostgreSQL only

	closeOnce sync.Once
	closeErr  error
}

// kindError carries a message of its own and unwraps to one of the sentinels.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// DefaultDir returns the default data directory: $XDG_DATA_HOME/mcp-hub when
// XDG_DATA_HOME is set to an absolute path, on macOS
// ~/Library/Application Support/mcp-hub, elsewhere ~/.local/share/mcp-hub.
func DefaultDir() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "mcp-hub"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the data directory: %w", err)
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "mcp-hub"), nil
	}
	return filepath.Join(home, ".local", "share", "mcp-hub"), nil
}

// Open opens dir/hub.db, creating the directory (mode 0700) and the file
// (mode 0600) when missing, checks the file with PRAGMA quick_check and
// migrates its schema to the newest version this binary knows.
//
// A damaged file yields an error wrapping [ErrCorrupt]; a file with a newer
// schema yields one wrapping [ErrTooNew]. Neither modifies the file.
// Several processes may open the same directory at once; only one of them
// runs each migration.
func Open(ctx context.Context, dir string, opts *Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open store: empty data directory")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	migs, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	if err := ensureFile(path); err != nil {
		return nil, err
	}
	wal, err := precheck(ctx, path, len(migs))
	if isReadonly(err) {
		// A process died in the middle of a write in WAL mode: the first
		// connection must rebuild the WAL index, which a read-only one
		// cannot do. A read-write connection recovers it; then check.
		if rerr := recoverWAL(ctx, path); rerr != nil {
			return nil, rerr
		}
		wal, err = precheck(ctx, path, len(migs))
	}
	if err != nil {
		return nil, err
	}
	if !wal {
		if err := enableWAL(ctx, path); err != nil {
			return nil, err
		}
	}

	db, err := sqlx.Open("sqlite3", dsn(path,
		"_journal_mode=WAL", "_synchronous=FULL", "_busy_timeout=5000",
		"_foreign_keys=on", "_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	wconn, err := db.Connx(ctx)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open %s: %w", path, classify(path, err))
	}
	s := &Store{db: dbx{DB: db}, path: path, now: time.Now, wconn: wconn, wsem: make(chan struct{}, 1)}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	if err := migrate(ctx, wconn, path, migs, len(migs)); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Path returns the path of the database file; for PostgreSQL, the server's
// URL without its password (fit for a log line).
func (s *Store) Path() string { return s.path }

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect.String() }

// Close closes the store. It waits for a write in progress to finish.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.pg != nil {
			s.pg.stopListening()
		}
		s.wsem <- struct{}{}
		defer func() { <-s.wsem }()
		var err1 error
		if s.wconn != nil {
			err1 = s.wconn.Close()
		}
		err2 := s.db.Close()
		if err := errors.Join(err1, err2); err != nil {
			s.closeErr = fmt.Errorf("close %s: %w", s.path, err)
		}
	})
	return s.closeErr
}

// Ping checks that the store can be reached: for PostgreSQL, a round trip
// to the server (an error wrapping [ErrUnavailable] when it cannot).
func (s *Store) Ping(ctx context.Context) error {
	return s.db.err(s.db.PingContext(ctx))
}

// Changed reports whether another connection (another process, or another
// Store on the same database) committed a change since the previous call.
// The Store's own writes do not count. The first call only records the
// baseline and returns false: call it before reading the state you want to
// keep current, then poll.
//
// On SQLite any commit counts (PRAGMA data_version). On PostgreSQL only
// changes other hubs must apply count: registrations, approvals, pins and
// OAuth tokens, not capability caches, statuses or the audit log; see
// [Store.Notify] to hear of them as they are committed.
func (s *Store) Changed(ctx context.Context) (bool, error) {
	if s.pg != nil {
		return s.pgChanged(ctx)
	}
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.unlock()
	var v int64
	if err := s.wconn.GetContext(ctx, &v, "PRAGMA data_version"); err != nil {
		return false, fmt.Errorf("read data_version: %w", err)
	}
	changed := s.haveVersion && v != s.dataVersion
	s.dataVersion, s.haveVersion = v, true
	return changed, nil
}

func (s *Store) lock(ctx context.Context) error {
	select {
	case s.wsem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) unlock() { <-s.wsem }

// write runs fn in one write transaction and commits it when fn returns
// nil; fn's error is returned unchanged. The change is one other hubs must
// apply (a registration, an approval, pins, a token): on PostgreSQL it is
// announced to them in the same transaction.
func (s *Store) write(ctx context.Context, fn func(tx txx) error) error {
	return s.writeTx(ctx, true, fn)
}

// writeLocal is write for what other hubs need not act on: capability
// caches, statuses, the audit log.
func (s *Store) writeLocal(ctx context.Context, fn func(tx txx) error) error {
	return s.writeTx(ctx, false, fn)
}

// writeTx runs fn in one write transaction. Writes are serialised across
// every process that shares the store: on SQLite by BEGIN IMMEDIATE on the
// writer connection (and the busy timeout), on PostgreSQL by a transaction
// advisory lock, so a read-modify-write ([Store.Update]) is atomic in both.
func (s *Store) writeTx(ctx context.Context, announce bool, fn func(tx txx) error) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if s.pg != nil {
		return s.pgWrite(ctx, announce, fn)
	}
	tx, err := s.wconn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	if err := fn(txx{Tx: tx}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (s *Store) stamp() time.Time { return s.now().UTC() }

// ensureDir creates dir with mode 0700 when it does not exist. An existing
// directory is left as it is.
func ensureDir(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("data directory %s is not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	// MkdirAll's mode is subject to the umask.
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	return nil
}

// ensureFile creates an empty database file with mode 0600 when there is
// none, so that SQLite (which gives the -wal and -shm files the database
// file's mode) never creates it with the umask's mode.
func ensureFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

// dsn returns a go-sqlite3 URI DSN for path with the given parameters.
func dsn(path string, params ...string) string {
	// In a SQLite URI, '?' and '#' end the path and '%' starts an escape.
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	return "file:" + p + "?" + strings.Join(params, "&")
}

// precheck inspects the file through a read-only connection, so that a
// damaged file or one from a newer mcp-hub is reported without any write
// (not even the switch to WAL mode). It reports whether the file is in WAL
// mode already.
func precheck(ctx context.Context, path string, latest int) (wal bool, err error) {
	db, err := sqlx.Open("sqlite3", dsn(path, "mode=ro", "_busy_timeout=5000"))
	if err != nil {
		return false, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	var msgs []string
	if err := db.SelectContext(ctx, &msgs, "PRAGMA quick_check(20)"); err != nil {
		if err := classify(path, err); errors.Is(err, ErrCorrupt) {
			return false, err
		}
		return false, fmt.Errorf("check %s: %w", path, err)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		for i, m := range msgs {
			msgs[i] = strings.TrimSpace(strings.ReplaceAll(strings.TrimPrefix(m, "*** in database main ***"), "\n", " "))
		}
		return false, &kindError{
			msg: fmt.Sprintf("%s is corrupt; quick_check says: %s; restore it from a backup or move it aside",
				path, strings.Join(msgs, "; ")),
			kind: ErrCorrupt,
		}
	}
	var v int
	if err := db.GetContext(ctx, &v, "PRAGMA user_version"); err != nil {
		if err := classify(path, err); errors.Is(err, ErrCorrupt) {
			return false, err
		}
		return false, fmt.Errorf("read schema version of %s: %w", path, err)
	}
	if v > latest {
		return false, tooNew(path, v, latest)
	}
	var mode string
	if err := db.GetContext(ctx, &mode, "PRAGMA journal_mode"); err != nil {
		return false, fmt.Errorf("read journal mode of %s: %w", path, err)
	}
	return strings.EqualFold(mode, "wal"), nil
}

// enableWAL switches the file to WAL mode. SQLite does not run the busy
// handler for that switch (it upgrades a read lock to an exclusive one), so
// when another process holds the file, retry for as long as the busy
// timeout would have waited. Once the file is in WAL mode (a persistent
// property), the _journal_mode=WAL of the main DSN is a no-op.
func enableWAL(ctx context.Context, path string) error {
	db, err := sqlx.Open("sqlite3", dsn(path, "_busy_timeout=5000"))
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	deadline := time.Now().Add(busyTimeout)
	for pause := 2 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		var mode string
		err := db.GetContext(ctx, &mode, "PRAGMA journal_mode = WAL")
		if err == nil && strings.EqualFold(mode, "wal") {
			return nil
		}
		if err != nil && !isBusy(err) {
			return fmt.Errorf("switch %s to WAL mode: %w", path, classify(path, err))
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("journal mode is still %q", mode)
			}
			return fmt.Errorf("switch %s to WAL mode: %w", path, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// busyTimeout matches _busy_timeout in the DSNs.
const busyTimeout = 5 * time.Second

func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// isReadonly reports whether err is SQLite's "attempt to write a readonly
// database" (SQLITE_READONLY and its extended codes).
func isReadonly(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrReadonly
}

// recoverWAL opens path read-write once, which recovers the WAL of a
// process that died writing (SQLite does it when the first connection
// reads), and closes it.
func recoverWAL(ctx context.Context, path string) error {
	db, err := sqlx.Open("sqlite3", dsn(path, "_busy_timeout=5000"))
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	var n int
	if err := db.GetContext(ctx, &n, "SELECT count(*) FROM sqlite_master"); err != nil {
		return fmt.Errorf("recover the write-ahead log of %s: %w", path, classify(path, err))
	}
	return nil
}

func tooNew(path string, v, latest int) error {
	return &kindError{
		msg:  fmt.Sprintf("%s has schema version %d but this mcp-hub understands up to %d; upgrade mcp-hub", path, v, latest),
		kind: ErrTooNew,
	}
}

// classify turns SQLite's "corrupt" and "not a database" errors into
// errors wrapping ErrCorrupt.
func classify(path string, err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB) {
		return &kindError{
			msg:  fmt.Sprintf("%s is corrupt (%v); restore it from a backup or move it aside", path, err),
			kind: ErrCorrupt,
		}
	}
	return err
}
