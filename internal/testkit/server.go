package testkit

import (
	"context"
	"net/http"
	"testing"

	"golang.org/x/time/rate"

	"petstore/server"
)

// NewHandler builds the whole HTTP surface the way serve does
// (server.New: the request log, metrics when d.Metrics is set, recovery,
// the console beside the API, JSON answers for unknown paths and
// methods), except that the limit of failed authentications is off unless
// d sets one: tests send many bad credentials from the one loopback
// address. With the zero d.Config the per-key rate limit is off too.
func NewHandler(tb testing.TB, d server.Deps) http.Handler {
	tb.Helper()
	if d.AuthFailureLimit == 0 {
		d.AuthFailureLimit = rate.Inf
	}
	h, err := server.New(context.Background(), d)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
