package models

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Code is a stable, machine-readable error code. The set is part of the API
// contract: clients switch on it, so values are only ever added.
type Code string

// The error codes of this package's answers. Each maps to one HTTP status
// in package httpcode, which also holds the codes only HTTP knows (such as
// method_not_allowed).
const (
	CodeInvalidRequest Code = "invalid_request"
	CodeUnauthorized   Code = "unauthorized"
	// CodeInsufficientScope refuses an API key that lacks the scope a
	// request needs (RFC 6750 section 3.1).
	CodeInsufficientScope Code = "insufficient_scope"
	CodeNotFound          Code = "not_found"
	CodeConflict          Code = "conflict"
	CodeRateLimited       Code = "rate_limited"
	CodeInternal          Code = "internal"
	CodeUnavailable       Code = "unavailable"
	// CodeCanceled: the caller gave up before the answer (an HTTP client
	// that closed its connection). Nothing of the request was written
	// unless the operation says otherwise. No client ever reads it: it
	// names the request log's 499 (package httpcode).
	CodeCanceled Code = "canceled"
	// CodeCursorExpired refuses a change feed cursor from before the
	// events kept (EVENTS_RETENTION).
	CodeCursorExpired Code = "cursor_expired"
)

// FieldError names one bad input field and says what is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the one error type that leaves this package: a code, a message
// safe to show to a user, and for validation failures one entry per bad field.
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
	// RetryAfter, when not zero, is how long the caller should wait before
	// trying again (a throttled or busy sign-in): the Retry-After header.
	RetryAfter time.Duration
	// Err is the underlying cause, for logs only; it is never shown.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Code))
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Field returns the message for one field, or "" when that field is fine.
func (e *Error) Field(name string) string {
	for _, f := range e.Fields {
		if f.Field == name {
			return f.Message
		}
	}
	return ""
}

// ErrUnauthorized is the answer to a missing, unknown or revoked API key.
var ErrUnauthorized = &Error{Code: CodeUnauthorized, Message: "A valid API key is required: send Authorization: Bearer <API_KEY>."}

// Is makes errors.Is(err, ErrUnauthorized) match any *Error with the same
// code, whatever its message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// ErrorCode returns the code of err, or CodeInternal for anything that is not
// an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// validation collects field errors in the order they are found.
type validation struct{ fields []FieldError }

func (v *validation) add(field, msg string) { v.fields = append(v.fields, FieldError{field, msg}) }

func (v *validation) err() error {
	if len(v.fields) == 0 {
		return nil
	}
	msg := v.fields[0].Message
	if len(v.fields) > 1 {
		msg = "The request has invalid fields: see details."
	}
	return &Error{Code: CodeInvalidRequest, Message: msg, Fields: v.fields}
}

// fieldError is the refusal of one input field.
func fieldError(field, msg string) error {
	return &Error{Code: CodeInvalidRequest, Message: msg, Fields: []FieldError{{field, msg}}}
}

// notFound is the one answer for an id that names nothing, such as
// "No pet has id 5.".
func notFound(what string, id int64) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf("No %s has id %d.", what, id)}
}

func internal(msg string, err error) error {
	return &Error{Code: CodeInternal, Message: "Something went wrong on our side.", Err: errors.Join(errors.New(msg), err)}
}
