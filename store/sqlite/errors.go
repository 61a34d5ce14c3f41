package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store/internal/rules"
)

// translate turns a foreign error (SQLite, database/sql, a context) into a
// SESS_* error, once; an *errcode.Error passes through unchanged. The
// message is safe to show; the cause stays in Err for logs.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*errcode.Error](err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return rules.Canceled(op, err)
	}
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone) {
		return &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "use closed connection", Err: err}
	}
	e, ok := errors.AsType[*msqlite.Error](err)
	if !ok {
		// database/sql's own failures, such as a closed pool.
		return &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "use store database", Err: err}
	}
	code, msg := classify(e.Code())
	return &errcode.Error{Code: code, Op: op, Message: msg, Err: err}
}

// atPath names the store file in a translated error about the file itself
// (a full disk, corrupt pages, a read-only file), and says what to do, so
// that the printed error points at what to fix. Other errors pass through.
//
// A disk I/O error (SQLITE_IOERR and its extended codes: the WAL, its
// index, a page write) on a file system with no free space left is
// SESS_DISK_FULL: SQLite reports a full disk so when growing the WAL index
// or the WAL fails, not only as SQLITE_FULL.
func atPath(path string, err error) error {
	e, ok := errors.AsType[*errcode.Error](err)
	if !ok {
		return err
	}
	se, isSQLite := errors.AsType[*msqlite.Error](err)
	switch {
	case e.Code == errcode.SessDiskFull:
	case errors.Is(err, syscall.ENOSPC),
		isSQLite && se.Code()&0xff == sqlite3.SQLITE_IOERR && noRoom(filepath.Dir(path)):
		e = &errcode.Error{Code: errcode.SessDiskFull, Op: e.Op, Message: "write the store file: the disk is full", Err: e.Err}
	}
	var advice string
	switch {
	case e.Code == errcode.SessDiskFull:
		advice = "free space on its file system and retry (listing and reading sessions still work)"
	case isSQLite && (se.Code()&0xff == sqlite3.SQLITE_CORRUPT || se.Code()&0xff == sqlite3.SQLITE_NOTADB):
		advice = "restore it from a backup, or move it aside to start a new store"
	case isSQLite && se.Code()&0xff == sqlite3.SQLITE_READONLY:
		advice = "make it writable, or use a writable --db"
	default:
		return err
	}
	if strings.Contains(e.Message, path) {
		return e
	}
	msg := e.Message
	if strings.Contains(msg, "the store file") {
		msg = strings.Replace(msg, "the store file", "the store file "+path, 1)
	} else {
		msg = fmt.Sprintf("%s (the store file %s)", msg, path)
	}
	return &errcode.Error{Code: e.Code, Op: e.Op, Message: msg + "; " + advice, Err: e.Err}
}

// classify maps an SQLite (extended) result code to a code and a message.
func classify(rc int) (errcode.Code, string) {
	switch rc {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return errcode.SessEventConflict, "store a record whose key exists"
	}
	switch rc & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return errcode.SessBusy, "wait for the store file, locked by another process"
	case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_RANGE:
		return errcode.SessInvalidRecord, "store a malformed record"
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return errcode.SessInvalidRecord, "read the store file: corrupt or not a database"
	case sqlite3.SQLITE_FULL:
		return errcode.SessDiskFull, "write the store file: the disk is full"
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_AUTH:
		return errcode.SessClosed, "open the store file for writing: permission denied or read-only"
	case sqlite3.SQLITE_IOERR:
		return errcode.SessClosed, "access the store file: disk I/O error"
	case sqlite3.SQLITE_INTERRUPT:
		return errcode.SessClosed, "cancel store operation"
	}
	return errcode.SessClosed, "use store database"
}
