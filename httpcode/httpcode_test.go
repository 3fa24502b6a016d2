package httpcode_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"petstore/httpcode"
	"petstore/models"
)

// Every code has its status; a code not in the table is a 500.
func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code models.Code
		want int
	}{
		{models.CodeInvalidRequest, http.StatusBadRequest},
		{models.CodeUnauthorized, http.StatusUnauthorized},
		{httpcode.Forbidden, http.StatusForbidden},
		{models.CodeInsufficientScope, http.StatusForbidden},
		{models.CodeNotFound, http.StatusNotFound},
		{httpcode.MethodNotAllowed, http.StatusMethodNotAllowed},
		{models.CodeConflict, http.StatusConflict},
		{httpcode.Gone, http.StatusGone},
		{httpcode.PayloadTooLarge, http.StatusRequestEntityTooLarge},
		{httpcode.UnsupportedMediaType, http.StatusUnsupportedMediaType},
		{httpcode.CORSNotSupported, http.StatusForbidden},
		{models.CodeRateLimited, http.StatusTooManyRequests},
		{models.CodeInternal, http.StatusInternalServerError},
		{models.CodeUnavailable, http.StatusServiceUnavailable},
		{models.CodeCanceled, httpcode.StatusClientClosedRequest},
		{models.CodeIdempotencyKeyInUse, http.StatusConflict},
		{models.CodeIdempotencyKeyMismatch, http.StatusUnprocessableEntity},
		{"no_such_code", http.StatusInternalServerError},
		{"", http.StatusInternalServerError},
	}
	for _, tt := range tests {
		if got := httpcode.Status(tt.code); got != tt.want {
			t.Errorf("Status(%q) = %d, want %d", tt.code, got, tt.want)
		}
	}
}

// A server deadline, a database that is away and a bug are three reasons.
func TestReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"deadline", &models.Error{Code: models.CodeUnavailable, Err: fmt.Errorf("create pet: %w", context.DeadlineExceeded)}, httpcode.ReasonTimeout},
		{"database away", &models.Error{Code: models.CodeUnavailable, Err: errors.New("dial tcp: connection refused")}, httpcode.ReasonUnavailable},
		{"internal", &models.Error{Code: models.CodeInternal, Err: errors.New("boom")}, httpcode.ReasonInternal},
		{"not a models error", errors.New("panic"), httpcode.ReasonInternal},
		{"none", nil, httpcode.ReasonInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := httpcode.Reason(tt.err); got != tt.want {
				t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}
