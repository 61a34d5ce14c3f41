// Package errcode is the one leaf package of stable error codes.
//
// A Code crosses package boundaries: it is shown to users, written into
// events and returned to the model inside tool results, so the set of codes
// is a compatibility contract. codes.go lists every code with a doc line and
// testdata/codes.golden pins the list, so a rename is a reviewed diff.
//
// This package imports only the standard library.
package errcode

import (
	"errors"
	"fmt"
	"strings"
)

// Code is a stable, upper-case error code such as SESS_NOT_FOUND.
type Code string

// Error carries a Code, a message that is safe to show (never a secret, never
// a raw foreign error text that could hold one), the operation that failed,
// and the underlying cause for logs and errors.Is.
type Error struct {
	Code    Code
	Message string
	Op      string
	Err     error
}

// Error renders "op: CODE: message: cause", leaving out empty parts.
func (e *Error) Error() string {
	s := string(e.Code)
	if e.Op != "" {
		s = e.Op + ": " + s
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil && !strings.HasSuffix(e.Message, e.Err.Error()) {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, errcode.New(code, "")) matches on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == "" && t.Op == "" && t.Err == nil
}

// New returns an *Error with a code and a message.
func New(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Errorf returns an *Error whose message is formatted. A %w verb in format
// also records the wrapped error as the cause.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// Wrap returns an *Error with a code, the failing operation and the cause.
// Its message says what failed and why, with the path or value at fault:
// the operation, then the cause's own message for a coded cause, or the
// cause's text (a file error names its path). Callers wrap causes that
// carry no secret (file, encoding and context errors). A nil cause yields
// nil.
func Wrap(code Code, op string, err error) error {
	if err == nil {
		return nil
	}
	cause := err.Error()
	if e, ok := errors.AsType[*Error](err); ok {
		cause = Message(e)
	}
	if op != "" {
		cause = op + ": " + cause
	}
	return &Error{Code: code, Message: cause, Err: err}
}

// Of returns the code of the first *Error in err's chain, "" for nil, and
// INTERNAL for anything uncoded.
func Of(err error) Code {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return Internal
}

// Message returns the safe message of the first *Error in err's chain, or a
// generic text for uncoded errors, so that user-facing boundaries never show
// a raw cause.
func Message(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		if e.Message != "" {
			return e.Message
		}
		return string(e.Code)
	}
	return "internal error"
}
