// Package httpcode is the one table from error codes to HTTP statuses,
// which the API's JSON errors and the console's HTML error pages both use,
// and it holds the codes that only HTTP knows. models defines the codes of
// what a request asks (invalid_request, not_found, conflict, ...); a code
// about how it was asked (a method the path does not take, a body too
// large or of the wrong type, an endpoint past its sunset, a form the
// console refuses) belongs to HTTP and is defined here. api and web are
// siblings that never import each other: both import this package, which
// imports only models.
package httpcode

import (
	"context"
	"errors"
	"net/http"

	"petstore/models"
)

// StatusClientClosedRequest is nginx's 499 "client closed request": the
// status of a request whose client hung up before its answer was sent. It
// is logged and counted, never received: the client is gone. A 5xx stays a
// 5xx even when its client has also gone: the failure is the server's.
const StatusClientClosedRequest = 499

// The codes only HTTP knows. Like models' codes they are part of the API's
// stable set (but for Forbidden, which only the console answers).
const (
	MethodNotAllowed     models.Code = "method_not_allowed"
	Gone                 models.Code = "gone"
	PayloadTooLarge      models.Code = "payload_too_large"
	UnsupportedMediaType models.Code = "unsupported_media_type"
	// CORSNotSupported refuses a browser's CORS preflight: the API is for
	// servers, and answers no cross-origin request from a web page.
	CORSNotSupported models.Code = "cors_not_supported"
	// Forbidden is the console's refusal of a form that fails its CSRF
	// check, or of a request the member's role does not allow; the API
	// never answers it.
	Forbidden models.Code = "forbidden"
)

// statuses maps each code to its HTTP status.
var statuses = map[models.Code]int{
	models.CodeInvalidRequest: http.StatusBadRequest,
	models.CodeUnauthorized:   http.StatusUnauthorized,
	Forbidden:                 http.StatusForbidden,
	models.CodeNotFound:       http.StatusNotFound,
	MethodNotAllowed:          http.StatusMethodNotAllowed,
	models.CodeConflict:       http.StatusConflict,
	Gone:                      http.StatusGone,
	PayloadTooLarge:           http.StatusRequestEntityTooLarge,
	UnsupportedMediaType:      http.StatusUnsupportedMediaType,
	CORSNotSupported:          http.StatusForbidden,
	models.CodeRateLimited:    http.StatusTooManyRequests,
	models.CodeInternal:       http.StatusInternalServerError,
	models.CodeUnavailable:    http.StatusServiceUnavailable,
	models.CodeCanceled:       StatusClientClosedRequest,
	models.CodeCursorExpired:  http.StatusGone,

	// An API key without the scope a request needs (RFC 6750 section 3.1).
	models.CodeInsufficientScope: http.StatusForbidden,

	// Idempotency-Key on POST /v1/pets.
	models.CodeIdempotencyKeyInUse:    http.StatusConflict,
	models.CodeIdempotencyKeyMismatch: http.StatusUnprocessableEntity,
}

// Status returns the HTTP status of code: 500 for a code not in the table
// (a bug, which the error writers then log).
func Status(code models.Code) int {
	if status, ok := statuses[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// The reasons of a server error (5xx), for its log line and the metric
// petstore_http_server_errors_total: the database refused, dropped or did
// not answer within the driver's I/O timeout (unavailable); a deadline of
// the service's own passed, such as the bound on a batch of creates
// (timeout); anything else, a bug (internal).
const (
	ReasonUnavailable = "unavailable"
	ReasonTimeout     = "timeout"
	ReasonInternal    = "internal"
)

// ReasonKey is the key under which the error writers of the API and the
// console leave a server error's reason in the request's gin context, for
// the metrics.
const ReasonKey = "petstore.reason"

// Reason is the reason of the server error err was answered with.
func Reason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case models.ErrorCode(err) == models.CodeUnavailable:
		return ReasonUnavailable
	}
	return ReasonInternal
}
