package httpcode_test

import (
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
		{models.CodeRateLimited, http.StatusTooManyRequests},
		{models.CodeInternal, http.StatusInternalServerError},
		{models.CodeUnavailable, http.StatusServiceUnavailable},
		{"no_such_code", http.StatusInternalServerError},
		{"", http.StatusInternalServerError},
	}
	for _, tt := range tests {
		if got := httpcode.Status(tt.code); got != tt.want {
			t.Errorf("Status(%q) = %d, want %d", tt.code, got, tt.want)
		}
	}
}
