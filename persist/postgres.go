package persist

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jackc/pgxlisten"
	"github.com/jmoiron/sqlx"
)

// PostgreSQL: several hubs (replicas behind a load balancer) share one
// database. The schema is the SQLite one (the same migrations, in
// PostgreSQL's SQL where the dialects differ) plus the table hub_meta,
// which holds the schema version (SQLite's PRAGMA user_version) and the
// registry version: a counter every change other hubs must apply bumps, in
// the transaction of the change, with a NOTIFY on the store's channel.
// Hubs LISTEN on that channel ([Store.Notify]) and read the counter
// ([Store.Changed]) as a safety net for notifications lost while the
// server was unreachable.
//
// Writes are serialised as on SQLite, by a transaction advisory lock, so
// what SQLite does in one transaction is one transaction here with the
// same isolation; migrations run under the same lock (a session advisory
// lock), so hubs that start together apply each migration once.

// SchemeOK reports whether location names a PostgreSQL database (a
// postgres:// or postgresql:// URL).
func SchemeOK(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// pgState is what a PostgreSQL store has beyond its pool.
type pgState struct {
	cfg     *pgx.ConnConfig
	schema  string
	lockKey int64  // of the advisory lock that serialises writes and migrations
	channel string // of the notifications of changes
	origin  string // this Store's notifications say it

	verMu    sync.Mutex
	last     int64 // the registry version Changed last saw
	have     bool
	own      map[int64]bool // versions of this Store's own commits, not yet seen by Changed
	resync   time.Duration  // see Options.Resync
	reported time.Time      // when Changed last reported a change (or took its baseline)

	noteMu    sync.Mutex
	note      chan struct{} // closed and replaced when another process announces a change
	listening bool

	stop context.CancelFunc
	done chan struct{}
}

// pgConnectTimeout bounds a connection attempt when the URL sets no
// connect_timeout: a server that does not answer is reported as
// unavailable instead of holding every request.
const pgConnectTimeout = 5 * time.Second

// OpenPostgres opens the store in the PostgreSQL database the URL dsn
// names (postgres://user:password@host:port/database?sslmode=…; a
// search_path parameter selects a schema other than public), creating its
// tables and migrating them to the newest version this binary knows.
//
// A server that cannot be reached yields an error wrapping
// [ErrUnavailable]; a database written by a newer mcp-hub, one wrapping
// [ErrTooNew] (nothing is modified). Errors never show the password.
// Several hubs may open the same database at once; only one of them runs
// each migration.
func OpenPostgres(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	if !SchemeOK(dsn) {
		return nil, errors.New("open store: want a postgres:// or postgresql:// URL")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the URL: say what is wrong without it.
		return nil, errors.New("open store: not a valid PostgreSQL URL (postgres://user:password@host:port/database?sslmode=…)")
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	where := fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	if sp := cfg.RuntimeParams["search_path"]; sp != "" {
		where += "?search_path=" + sp
	}
	migs, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	pool := sqlx.NewDb(stdlib.OpenDB(*cfg), "pgx")
	pool.SetMaxOpenConns(16)
	pool.SetMaxIdleConns(4)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	classify := func(err error) error {
		if err != nil && pgUnavailable(err) && !errors.Is(err, ErrUnavailable) {
			return &unavailable{where: where, err: err}
		}
		return err
	}
	s := &Store{
		db: dbx{DB: pool, classify: classify}, dialect: dialectPostgres, path: where, now: time.Now,
		wsem: make(chan struct{}, 1),
		pg:   &pgState{cfg: cfg, origin: uuid.NewString(), own: map[int64]bool{}, note: make(chan struct{})},
	}
	s.pg.resync = 30 * time.Second
	if opts != nil {
		if opts.Now != nil {
			s.now = opts.Now
		}
		if opts.Resync != 0 {
			s.pg.resync = opts.Resync
		}
	}
	fail := func(err error) (*Store, error) {
		_ = pool.Close()
		return nil, err
	}
	var schema sql.NullString
	if err := s.db.GetContext(ctx, &schema, "SELECT current_schema()"); err != nil {
		return fail(err) // it names the store
	}
	if !schema.Valid {
		return fail(fmt.Errorf("open store %s: no schema of its search_path exists; create it first", where))
	}
	s.pg.schema = schema.String
	s.pg.lockKey, s.pg.channel = pgKeys(schema.String)
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return fail(classify(err))
	}
	err = pgMigrate(ctx, conn, s.db.classify, where, s.pg.lockKey, migs, len(migs))
	_ = conn.Close()
	if err != nil {
		return fail(err)
	}
	s.listen()
	return s, nil
}

// pgKeys returns the advisory lock key and the notification channel of the
// store in schema: each schema of a database is a store of its own.
func pgKeys(schema string) (int64, string) {
	h := fnv.New64a()
	_, _ = h.Write([]byte("mcp-hub\x00" + schema))
	sum := h.Sum64()
	return int64(sum), fmt.Sprintf("mcp_hub_%016x", sum)
}

// pgMigrate brings the schema to version target (<= len(migs)) under the
// store's advisory lock, held by conn for the whole of it: concurrent
// openers wait, then find the work done. Each migration runs in its own
// transaction together with the schema version bump.
func pgMigrate(ctx context.Context, conn *sqlx.Conn, classify func(error) error, where string, key int64, migs []migration, target int) (err error) {
	if classify == nil {
		classify = func(err error) error { return err }
	}
	wrap := func(what string, err error) error {
		return fmt.Errorf("migrate %s: %s: %w", where, what, classify(err))
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return wrap("lock", err)
	}
	defer func() {
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key); uerr != nil && err == nil {
			err = wrap("unlock", uerr)
		}
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS hub_meta (
		id               INTEGER PRIMARY KEY CHECK (id = 1),
		schema_version   INTEGER NOT NULL,
		registry_version BIGINT NOT NULL)`); err != nil {
		return wrap("create hub_meta", err)
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO hub_meta VALUES (1, 0, 0) ON CONFLICT (id) DO NOTHING"); err != nil {
		return wrap("create hub_meta", err)
	}
	var v int
	if err := conn.GetContext(ctx, &v, "SELECT schema_version FROM hub_meta WHERE id = 1"); err != nil {
		return wrap("read the schema version", err)
	}
	if v > len(migs) {
		return tooNew(where, v, len(migs))
	}
	for ; v < target; v++ {
		m := migs[v]
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return wrap("begin", err)
		}
		if err := pgMigrateStep(ctx, txx{Tx: tx, classify: classify}, m); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate %s to version %d (%s): %w", where, m.version, m.name, err)
		}
		if err := tx.Commit(); err != nil {
			return wrap(fmt.Sprintf("commit version %d", m.version), err)
		}
	}
	return nil
}

func pgMigrateStep(ctx context.Context, tx txx, m migration) error {
	if _, err := tx.Tx.ExecContext(ctx, m.pgSQL); err != nil { // several statements: no rebinding, no arguments
		return tx.err(err)
	}
	if hook := dataMigrations[m.version]; hook != nil {
		if err := hook(ctx, tx); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, "UPDATE hub_meta SET schema_version = ? WHERE id = 1", m.version)
	return err
}

// pgWrite is writeTx on PostgreSQL. Under the caller's wsem.
func (s *Store) pgWrite(ctx context.Context, announce bool, fn func(tx txx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", s.db.err(err))
	}
	t := txx{Tx: tx, classify: s.db.classify}
	if _, err := t.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", s.pg.lockKey); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("begin write: %w", err)
	}
	if err := fn(t); err != nil {
		_ = tx.Rollback()
		return err
	}
	var version int64
	if announce {
		if err := t.GetContext(ctx, &version, "UPDATE hub_meta SET registry_version = registry_version + 1 WHERE id = 1 RETURNING registry_version"); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("announce the change: %w", err)
		}
		if _, err := t.ExecContext(ctx, "SELECT pg_notify(?, ?)", s.pg.channel, s.pg.origin); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("announce the change: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		// Cut off while committing: the server may or may not have
		// applied it.
		return fmt.Errorf("commit (it may or may not have been applied): %w", s.db.err(err))
	}
	if announce {
		s.pg.verMu.Lock()
		if !s.pg.have || version > s.pg.last {
			s.pg.own[version] = true
		}
		s.pg.verMu.Unlock()
	}
	return nil
}

// pgChanged is Changed on PostgreSQL: whether the registry version moved
// by more than this Store's own commits, or a resync is due.
func (s *Store) pgChanged(ctx context.Context) (bool, error) {
	var v int64
	if err := s.db.GetContext(ctx, &v, "SELECT registry_version FROM hub_meta WHERE id = 1"); err != nil {
		return false, fmt.Errorf("read the registry version: %w", err)
	}
	p := s.pg
	p.verMu.Lock()
	defer p.verMu.Unlock()
	changed := false
	switch {
	case !p.have:
	case v < p.last:
		changed = true // the database was replaced
	case v > p.last:
		own := int64(0)
		for k := range p.own {
			if k > p.last && k <= v {
				own++
			}
		}
		changed = v-p.last > own
	}
	for k := range p.own {
		if k <= v {
			delete(p.own, k)
		}
	}
	now := time.Now()
	if p.have && p.resync > 0 && now.Sub(p.reported) >= p.resync {
		changed = true
	}
	if changed || !p.have {
		p.reported = now
	}
	p.last, p.have = v, true
	return changed, nil
}

// Notify returns a channel that is closed when another process commits a
// change other hubs must apply (PostgreSQL's LISTEN/NOTIFY), and when the
// store's listening connection comes back after losing the server (changes
// may have been missed meanwhile). Take the channel before calling
// [Store.Changed], then wait on it. On SQLite it returns nil: poll Changed.
func (s *Store) Notify() <-chan struct{} {
	if s.pg == nil {
		return nil
	}
	s.pg.noteMu.Lock()
	defer s.pg.noteMu.Unlock()
	return s.pg.note
}

// Listening reports whether the store is listening for the changes of
// other processes (PostgreSQL, connected); false on SQLite.
func (s *Store) Listening() bool {
	if s.pg == nil {
		return false
	}
	s.pg.noteMu.Lock()
	defer s.pg.noteMu.Unlock()
	return s.pg.listening
}

func (p *pgState) signal(listening bool) {
	p.noteMu.Lock()
	close(p.note)
	p.note = make(chan struct{})
	p.listening = listening
	p.noteMu.Unlock()
}

func (p *pgState) setListening(v bool) {
	p.noteMu.Lock()
	p.listening = v
	p.noteMu.Unlock()
}

// listen starts the goroutine that LISTENs on the store's channel on a
// connection of its own, reconnecting every second while the server is
// unreachable. Close stops it.
func (s *Store) listen() {
	p := s.pg
	ctx, cancel := context.WithCancel(context.Background())
	p.stop, p.done = cancel, make(chan struct{})
	l := &pgxlisten.Listener{
		Connect: func(ctx context.Context) (*pgx.Conn, error) {
			return pgx.ConnectConfig(ctx, p.cfg.Copy())
		},
		LogError:       func(context.Context, error) { p.setListening(false) },
		ReconnectDelay: time.Second,
	}
	l.Handle(p.channel, pgHandler{p})
	go func() {
		defer close(p.done)
		_ = l.Listen(ctx)
	}()
}

func (p *pgState) stopListening() {
	if p.stop != nil {
		p.stop()
		<-p.done
	}
}

// pgHandler handles the store's notifications.
type pgHandler struct{ p *pgState }

// HandleNotification signals a change another process announced.
func (h pgHandler) HandleNotification(_ context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	if n.Payload != h.p.origin {
		h.p.signal(true)
	}
	return nil
}

// HandleBacklog runs when the listener (re)connected: changes may have been
// committed while it was not listening, so waiters re-read.
func (h pgHandler) HandleBacklog(context.Context, string, *pgx.Conn) error {
	h.p.signal(true)
	return nil
}

// pgUnavailable reports whether err says the server cannot be reached (as
// opposed to an error of the statement).
func pgUnavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// connection_exception, admin_shutdown, crash_shutdown,
		// cannot_connect_now, too_many_connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" ||
			pe.Code == "57P03" || pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)
}
