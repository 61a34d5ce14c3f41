package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

var (
	_ store.Store  = (*Store)(nil)
	_ store.Reader = (*Reader)(nil)
)

// Options configure a store. Zero values take the defaults.
type Options struct {
	// Now is the clock (default time.Now). Every stored time comes from it.
	Now func() time.Time
	// LocalHost is this machine's name as leases record it (default store.HostID).
	LocalHost string
	// BusyTimeout is how long a write waits for another process's lock on
	// the file before failing with SESS_BUSY (default 10 s).
	BusyTimeout time.Duration
	// ReadConns bounds the connections used for reads (default 4).
	ReadConns int
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LocalHost == "" {
		o.LocalHost = rules.LocalHost()
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	if o.ReadConns <= 0 {
		o.ReadConns = 4
	}
}

// Reader reads a store file without owning anything. It never writes,
// except to migrate an older schema in place when it opens.
type Reader struct {
	path string
	now  func() time.Time
	host string
	rdb  *sql.DB

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Store is the read-write SQLite session store. Its writes go through one
// connection, so within a process they are serialized before they reach
// SQLite; across processes BEGIN IMMEDIATE and the busy timeout order them.
type Store struct {
	*Reader
	readOnly bool                 // opened by OpenReadOnly or OpenFull: no write is tried
	refuse   error                // what every write returns when readOnly; nil: SESS_READ_ONLY
	wdb      *sql.DB              // nil when readOnly
	prepared map[string]*sql.Stmt // on wdb; read-only after Open
	// damaged is the corruption a check found (nil: none yet): from then
	// on every write refuses with it.
	damaged atomic.Pointer[errcode.Error]
	// sound is set once the file is known sound: Check found no corrupt
	// page, or the file was as a Harness process left it (checkedMark).
	// Close then records the file as this process leaves it.
	sound       atomic.Bool
	quickChecks atomic.Int64 // quick_check runs: a test's count

	closeOnce sync.Once
	closeErr  error
}

// DefaultPath returns $XDG_DATA_HOME/harness/harness.db, or
// ~/.local/share/harness/harness.db when XDG_DATA_HOME is unset.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", &errcode.Error{Code: errcode.SessNotFound, Op: "sqlite.DefaultPath", Message: "find the home directory", Err: err}
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "harness", "harness.db"), nil
}

// Open opens or creates the store file at path (mode 0600, its directory
// 0700), switches it to WAL with synchronous=FULL and migrates an older
// schema in place. Codes: SESS_SCHEMA_VERSION (a newer or foreign
// schema), SESS_BUSY, SESS_INVALID_RECORD (not a database), SESS_CLOSED
// (the file cannot be created or opened).
func Open(path string, opts Options) (*Store, error) {
	const op = "sqlite.Open"
	opts.defaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "resolve store path", Err: err}
	}
	if err := notDir(op, abs); err != nil {
		return nil, err
	}
	if err := createFile(abs); err != nil {
		return nil, atPath(abs, &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "create store file " + abs + ": " + pathCause(err), Err: err})
	}
	wdb, err := openDB(abs, opts, true)
	if err != nil {
		return nil, atPath(abs, translate(op, err))
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	if err := migrate(context.Background(), wdb); err != nil {
		_ = wdb.Close()
		return nil, atPath(abs, err)
	}
	prepared := map[string]*sql.Stmt{}
	for _, q := range preparedQueries {
		st, err := wdb.PrepareContext(context.Background(), q)
		if err != nil {
			_ = wdb.Close()
			return nil, translate(op, err)
		}
		prepared[q] = st
	}
	r, err := openReader(abs, opts)
	if err != nil {
		_ = wdb.Close()
		return nil, err
	}
	return &Store{Reader: r, wdb: wdb, prepared: prepared}, nil
}

// OpenReader opens an existing store file for reading. An older schema is
// migrated first (briefly taking the write lock); a missing file is
// SESS_NOT_FOUND. Other codes as Open.
func OpenReader(path string, opts Options) (*Reader, error) {
	const op = "sqlite.OpenReader"
	opts.defaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "resolve store path", Err: err}
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, &errcode.Error{Code: errcode.SessNotFound, Op: op, Message: "find store file " + abs + ": " + pathCause(err), Err: err}
	}
	if err := notDir(op, abs); err != nil {
		return nil, err
	}
	r, err := openReader(abs, opts)
	if err != nil {
		return nil, err
	}
	v, err := userVersion(context.Background(), r.rdb)
	if err == nil && v != schemaVersion {
		// Migrate (or refuse a newer schema) through a short-lived writer.
		var wdb *sql.DB
		if wdb, err = openDB(abs, opts, true); err == nil {
			wdb.SetMaxOpenConns(1)
			err = migrate(context.Background(), wdb)
			if cerr := wdb.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		_ = r.Close()
		return nil, atPath(abs, translate(op, err))
	}
	return r, nil
}

// OpenReadOnly opens an existing store file that cannot be written (a
// read-only file, directory or file system) without writing anything to
// it: reads work, every write fails with SESS_READ_ONLY naming the file.
// The schema must be the current one, since it cannot be migrated. Codes
// as OpenReader.
func OpenReadOnly(path string, opts Options) (*Store, error) {
	return openReadOnly("sqlite.OpenReadOnly", path, opts, nil)
}

// OpenFull opens an existing store file on a full file system, as Open
// found it (full, its SESS_DISK_FULL error), without writing anything:
// sessions can be listed and read, and every write fails with full. Codes
// as OpenReadOnly.
func OpenFull(path string, opts Options, full error) (*Store, error) {
	return openReadOnly("sqlite.OpenFull", path, opts, full)
}

// openReadOnly opens the file mode=ro; writes fail with refuse, or
// SESS_READ_ONLY when it is nil.
func openReadOnly(op, path string, opts Options, refuse error) (*Store, error) {
	opts.defaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "resolve store path", Err: err}
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, &errcode.Error{Code: errcode.SessNotFound, Op: op, Message: "find store file " + abs, Err: err}
	}
	rdb, v, err := openVersion(abs, opts)
	if err != nil && !walHolds(abs) {
		// A WAL-mode file with no -shm file cannot be read mode=ro where
		// the -shm file cannot be made (a read-only directory, a full
		// file system): with nothing in a -wal file either, nothing can
		// change it here, so read it as immutable.
		rdb, v, err = openVersion(abs, opts, "immutable")
	}
	if err == nil && v != schemaVersion {
		_ = rdb.Close()
		err = &errcode.Error{Code: errcode.SessSchemaVersion, Op: op, Message: fmt.Sprintf(
			"read the store file %s: its schema version is %d, this Harness reads %d and cannot migrate a read-only file", abs, v, schemaVersion)}
	}
	if err != nil {
		return nil, atPath(abs, translate(op, err))
	}
	rdb.SetMaxOpenConns(opts.ReadConns)
	rdb.SetMaxIdleConns(opts.ReadConns)
	r := &Reader{path: abs, now: opts.Now, host: opts.LocalHost, rdb: rdb}
	return &Store{Reader: r, readOnly: true, refuse: refuse}, nil
}

// openVersion opens a read-only pool on the file and reads its schema
// version, the first read that needs the WAL index.
func openVersion(abs string, opts Options, flags ...string) (*sql.DB, int, error) {
	rdb, err := openDBMode(abs, opts, false, true, flags...)
	if err != nil {
		return nil, 0, err
	}
	v, err := userVersion(context.Background(), rdb)
	if err != nil {
		_ = rdb.Close()
		return nil, 0, err
	}
	return rdb, v, nil
}

// walHolds reports whether the store file's -wal file holds anything
// (a missing or empty one holds no commit).
func walHolds(abs string) bool {
	fi, err := os.Stat(abs + "-wal")
	return err == nil && fi.Size() > 0
}

// Writable reports whether the store file and its directory can be
// written by this process (false on a read-only file system too), which
// decides between Open and OpenReadOnly for an existing file.
func Writable(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return true
	}
	const wOK = 2
	return syscall.Access(abs, wOK) == nil && syscall.Access(filepath.Dir(abs), wOK) == nil
}

func openReader(abs string, opts Options) (*Reader, error) {
	rdb, err := openDB(abs, opts, false)
	if err != nil {
		return nil, atPath(abs, translate("sqlite.Open", err))
	}
	rdb.SetMaxOpenConns(opts.ReadConns)
	rdb.SetMaxIdleConns(opts.ReadConns)
	return &Reader{path: abs, now: opts.Now, host: opts.LocalHost, rdb: rdb}, nil
}

// readerMmapSize is how much of the file a reader connection maps.
const readerMmapSize = 256 << 20

// checkCachePages is the page cache of the connection that runs
// Check's quick_check.
const checkCachePages = 32

// quickCheckMaxBytes bounds the store files that Check reads page by page:
// PRAGMA quick_check reads the whole file, so a larger file is left to
// fail on the first corrupt page a command touches.
const quickCheckMaxBytes = 256 << 20

// checkFirstMaxBytes bounds the files CheckWhileWriting reads before it
// returns. A full read holds up the command's start by its length (a
// 210 MB file took 360–620 ms from the page cache), so a larger file is
// read while the command goes on.
var checkFirstMaxBytes int64 = 32 << 20

// CheckWhileWriting is Check at a bounded cost to a command's start: a
// file up to checkFirstMaxBytes is checked before it returns (err), a
// larger one on a goroutine while the command writes. From the moment the
// check finds corrupt pages every write refuses with its error
// (SESS_INVALID_RECORD naming the file), so a session already writing
// stops at its next append; wait returns that error once the check has
// ended (nil when it found none or could not finish), for the command to
// report before it exits.
func (s *Store) CheckWhileWriting(ctx context.Context) (wait func() error, err error) {
	none := func() error { return nil }
	if fi, serr := os.Stat(s.path); serr != nil || fi.Size() <= checkFirstMaxBytes {
		return none, s.Check(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- s.Check(ctx) }()
	return func() error {
		if err := <-done; errcode.Of(err) == errcode.SessInvalidRecord {
			return err
		}
		return nil
	}, nil
}

// Check refuses a store file with corrupt pages, as reading their events
// does, before a command writes to it: a session appended to a damaged
// file could be lost with it. SESS_INVALID_RECORD names the file and what
// to do; every write refuses with it from then on. Commands that only
// read skip it, so that what still reads can be listed and exported.
func (s *Store) Check(ctx context.Context) error {
	const op = "sqlite.Check"
	if err := s.check(ctx, op); err != nil {
		return err
	}
	if fi, err := os.Stat(s.path); err != nil || fi.Size() > quickCheckMaxBytes {
		return nil
	}
	if markedSound(s.path) {
		s.sound.Store(true)
		return nil
	}
	s.quickChecks.Add(1)
	// On a reader connection of its own, through read calls and the
	// connection's bounded page cache rather than its map of the file: a
	// check through the map left every page of the file resident in the
	// process (a one-answer `harness exec` on a 110 MB store peaked at
	// 134 MB RSS, against 26 MB on an empty one).
	conn, err := s.rdb.Conn(ctx)
	if err != nil {
		return atPath(s.path, translate(op, err))
	}
	defer func() { _ = conn.Close() }() // a reader connection, only read
	if _, err := conn.ExecContext(ctx, `PRAGMA mmap_size = 0`); err != nil {
		return atPath(s.path, translate(op, err))
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA mmap_size = `+strconv.Itoa(readerMmapSize))
	}()
	// And through a small page cache: the check reads every page once, and
	// a cache of the default size (2 MB) filled with them stayed in the
	// process (a one-answer `harness exec` on a 6 MB store peaked 3.9 MB
	// above one on an empty store). The walk needs only the path from a
	// b-tree's root to its current page cached.
	var cacheSize int64
	if err := conn.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cacheSize); err != nil {
		return atPath(s.path, translate(op, err))
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = `+strconv.Itoa(checkCachePages)); err != nil {
		return atPath(s.path, translate(op, err))
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA cache_size = `+strconv.FormatInt(cacheSize, 10))
	}()
	rows, err := conn.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return atPath(s.path, translate(op, err))
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return atPath(s.path, translate(op, err))
		}
		if line != "ok" && len(problems) < 3 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return atPath(s.path, translate(op, err))
	}
	if len(problems) == 0 {
		s.sound.Store(true)
		return nil
	}
	damaged := &errcode.Error{Code: errcode.SessInvalidRecord, Op: op, Message: fmt.Sprintf(
		"read the store file %s: it has corrupt pages (%s); restore it from a backup, or move it aside to start a new store",
		s.path, strings.Join(problems, "; "))}
	s.damaged.Store(damaged)
	return damaged
}

// createFile creates the store file with mode 0600 if it is missing, so
// that SQLite never creates it with the umask's wider mode; SQLite gives
// the -wal and -shm files the main file's mode.
// notDir refuses a store path that is a directory with SESS_CLOSED and
// a sentence that says so (SQLite would say only that it cannot open it).
func notDir(op, abs string) error {
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return &errcode.Error{Code: errcode.SessClosed, Op: op,
			Message: "open the store " + abs + ": it is a directory; --db names a SQLite file (e.g. " + filepath.Join(abs, "harness.db") + ") or a postgres:// URL"}
	}
	return nil
}

// pathCause is what the system said about a file operation, without the
// path ("permission denied").
func pathCause(err error) string {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

func createFile(abs string) error {
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Make the new directory entry durable before anything is committed.
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }() // only read: a failed close loses nothing
	return d.Sync()
}

// openDB opens a pool on the file. The writer pool begins every
// transaction IMMEDIATE (taking the write lock up front, so that a
// read-then-write transaction never fails half way on SQLITE_BUSY) and
// commits with synchronous=FULL (the WAL is fsynced before Commit returns).
// The reader pool is query_only.
func openDB(abs string, opts Options, writer bool) (*sql.DB, error) {
	return openDBMode(abs, opts, writer, false)
}

// openDBMode is openDB; readOnly opens the file with mode=ro, so that
// SQLite never tries to write it (nor its -wal and -shm files).
func openDBMode(abs string, opts Options, writer, readOnly bool, flags ...string) (*sql.DB, error) {
	q := url.Values{}
	if readOnly {
		q.Set("mode", "ro")
	}
	for _, f := range flags {
		q.Set(f, "1")
	}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if writer {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
		// Readers map the file rather than copying pages through read
		// calls: reading a long session is CPU-bound, not syscall-bound.
		q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", readerMmapSize))
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: abs, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(context.Background()); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// Path returns the store file's absolute path.
func (r *Reader) Path() string { return r.path }

// Close closes the reader; later calls fail with SESS_CLOSED.
func (r *Reader) Close() error {
	r.closeOnce.Do(func() {
		r.closed.Store(true)
		r.closeErr = translate("sqlite.Close", r.rdb.Close())
	})
	return r.closeErr
}

// Close closes the store: writes in flight finish first; later calls fail
// with SESS_CLOSED.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		rerr := s.Reader.Close()
		for _, st := range s.prepared {
			_ = st.Close()
		}
		if s.wdb == nil {
			s.closeErr = rerr
			return
		}
		s.closeErr = translate("sqlite.Close", s.wdb.Close())
		if s.closeErr == nil {
			s.closeErr = rerr
		}
		if s.closeErr == nil && s.sound.Load() && s.damaged.Load() == nil {
			writeCheckedMark(s.path)
		}
	})
	return s.closeErr
}

// The checked mark.
//
// PRAGMA quick_check reads the whole file: 0.3–0.6 s of CPU on a 200 MB
// store, and the check's code and buffers, about 2.5 MiB, left resident
// in a one-answer run. It is there to find a file damaged by something
// other than SQLite's own writes: a crash of the machine, a full disk,
// another program, a copy. A file exactly as a Harness process left it
// after its writes, with the file known sound before them, needs no new
// check: Close records the store file's state (stamps of the file and of
// its write-ahead log, which no write leaves unchanged) in the mark,
// path+".checked", when the file was checked or found as marked; Check
// then skips quick_check while the file is still in that state. A
// process that crashes leaves the mark as it was, older than its writes,
// so the next command checks. What the mark cannot see is damage that
// changes neither (a disk's own bit errors), which SQLite reports when it
// reads the page.

// checkedMark is the mark's content for the store file at path now: the
// stamps of the file and of its write-ahead log (zero when it is missing
// or empty: no frame of it is part of the database); "" when a stamp
// cannot be read. Times are the file system's, which may be as coarse as
// a clock tick: a write by another program within the tick of Harness's
// last one, leaving the size as it was, is not seen.
func checkedMark(path string) string {
	main, ok := fileStamp(path)
	if !ok {
		return ""
	}
	wal, ok := fileStamp(path + "-wal")
	if !ok || wal[2] == 0 {
		wal = [5]int64{}
	}
	// The log's change time is not part of it: SQLite, running as root,
	// gives the log its file's owner at every open.
	wal[4] = 0
	return fmt.Sprintf("harness-store-checked v1 %d %d %d %d %d %d %d %d %d %d\n",
		main[0], main[1], main[2], main[3], main[4], wal[0], wal[1], wal[2], wal[3], wal[4])
}

// writeCheckedMark records the store file at path as sound in its state
// now (best effort: without a mark the next command checks).
func writeCheckedMark(path string) {
	mark := checkedMark(path)
	if mark == "" {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".checked-*")
	if err != nil {
		return
	}
	_, err = tmp.WriteString(mark)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path+".checked")
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
}

// markedSound reports whether the store file at path is in the state its
// mark records.
func markedSound(path string) bool {
	b, err := os.ReadFile(path + ".checked")
	if err != nil {
		return false
	}
	now := checkedMark(path)
	return now != "" && string(b) == now
}

func (r *Reader) env() rules.Env {
	return rules.Env{Now: rules.Now(r.now), LocalHost: r.host}
}

func (r *Reader) check(ctx context.Context, op string) error {
	if r.closed.Load() {
		return rules.Closed(op)
	}
	if err := ctx.Err(); err != nil {
		return rules.Canceled(op, err)
	}
	return nil
}

// write runs fn in one IMMEDIATE transaction and commits when fn returns
// true; false or an error rolls back.
func (s *Store) write(ctx context.Context, op string, fn func(tx *wtx) (bool, error)) error {
	if err := s.check(ctx, op); err != nil {
		return err
	}
	if d := s.damaged.Load(); d != nil {
		return d
	}
	if s.readOnly {
		if s.refuse != nil {
			return s.refuse
		}
		return &errcode.Error{Code: errcode.SessReadOnly, Op: op, Message: "write to the store file " + s.path +
			": it is read-only (the file, its directory or its file system); listing and reading sessions still work"}
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return atPath(s.path, translate(op, err))
	}
	commit, err := fn(&wtx{Tx: tx, prepared: s.prepared})
	if err != nil || !commit {
		_ = tx.Rollback()
		return atPath(s.path, translate(op, err))
	}
	return atPath(s.path, translate(op, tx.Commit()))
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(n int64) time.Time { return time.UnixMicro(n).UTC() }
