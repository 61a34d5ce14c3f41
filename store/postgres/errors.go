package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store/internal/rules"
)

// SQLSTATEs the store reacts to by name.
const (
	sqlstateUniqueViolation = "23505"
	// sqlstateAppendOnly is raised by the events table's trigger on any
	// UPDATE, DELETE or TRUNCATE (a code of the user-defined class "HA").
	sqlstateAppendOnly = "HA001"
)

// translate turns a foreign error (a SQLSTATE, pgx, a network failure, a
// context) into a SESS_* error, once; an *errcode.Error passes through
// unchanged. The message is safe to show; the cause stays in Err for logs.
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
	pe, ok := errors.AsType[*pgconn.PgError](err)
	if !ok {
		// pgx's own failures: a refused or broken connection, a closed
		// pool, a timeout.
		return &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "reach the store server", Err: err}
	}
	code, msg := classify(pe.Code)
	return &errcode.Error{Code: code, Op: op, Message: msg, Err: err}
}

// classify maps a SQLSTATE to a code and a message: the exact codes the
// store expects first, then by class.
func classify(sqlstate string) (errcode.Code, string) {
	switch sqlstate {
	case sqlstateUniqueViolation:
		return errcode.SessEventConflict, "store a record whose key exists"
	case sqlstateAppendOnly:
		// The nearest code: an attempt to change a stored event conflicts
		// with the event as stored.
		return errcode.SessEventConflict, "change a stored event: events are append-only"
	case "40001", "40P01", "55P03", "55006": // serialization, deadlock, lock timeout, object in use
		return errcode.SessBusy, "wait for a lock held by another writer"
	case "57014": // query_canceled
		return errcode.SessClosed, "cancel store operation"
	case "42P01", "42703", "42883": // undefined table, column, function
		return errcode.SessSchemaVersion, "find the store's tables: the schema differs from this Harness's"
	case "XX001", "XX002": // data_corrupted, index_corrupted
		return errcode.SessInvalidRecord, "read the store: corrupt data"
	case "3D000", "3F000": // invalid_catalog_name, invalid_schema_name
		return errcode.SessClosed, "open the store database: it or its schema does not exist"
	case "42501": // insufficient_privilege
		return errcode.SessClosed, "access the store database: permission denied"
	}
	if len(sqlstate) != 5 {
		return errcode.SessClosed, "use store database"
	}
	switch sqlstate[:2] {
	case "22", "23", "54": // data exception, integrity, program limit
		return errcode.SessInvalidRecord, "store a malformed record"
	case "08": // connection exception
		return errcode.SessClosed, "reach the store server"
	case "28": // invalid authorization
		return errcode.SessClosed, "log in to the store server"
	case "25": // invalid transaction state (read-only, aborted)
		return errcode.SessClosed, "write to the store database: read-only or aborted transaction"
	case "53", "57", "58": // resources, operator intervention, system error
		return errcode.SessClosed, "use the store server: out of resources, shutting down or failing"
	}
	return errcode.SessClosed, "use store database"
}

// atServer adds to err, a failure to reach or log in to the server, where
// the server is (host and port, the database; never the password) and,
// unless the server itself answered, the cause the network gave
// ("connection refused", "no such host", a timeout).
func atServer(host string, port uint16, database string, err error) error {
	e, ok := errors.AsType[*errcode.Error](err)
	if !ok || e.Code != errcode.SessClosed {
		return err
	}
	msg := fmt.Sprintf("%s at %s (database %q)", e.Message, net.JoinHostPort(host, strconv.Itoa(int(port))), database)
	if _, fromServer := errors.AsType[*pgconn.PgError](err); !fromServer && e.Err != nil {
		msg += ": " + rootCause(e.Err)
	}
	return &errcode.Error{Code: e.Code, Op: e.Op, Message: msg, Err: e.Err}
}

// rootCause is the innermost error of a chain: the network's own words.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// wentAway reports whether err is the server or the connection going away
// (a restart, a dropped or terminated connection), not an answer: the
// connection failed (no SQLSTATE), or the server said it is shutting
// down, terminated the backend or cannot take connections yet (57P01,
// 57P02, 57P03, class 08).
func wentAway(err error) bool {
	e, ok := errors.AsType[*errcode.Error](err)
	if !ok || e.Code != errcode.SessClosed || e.Err == nil ||
		errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded) {
		return false
	}
	pe, isPg := errors.AsType[*pgconn.PgError](e.Err)
	if !isPg {
		return true
	}
	return pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || strings.HasPrefix(pe.Code, "08")
}
