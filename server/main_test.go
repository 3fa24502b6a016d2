package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"golang.org/x/time/rate"

	"petstore/api"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

func TestMain(m *testing.M) { modelstest.Main(m) }

// response is what a request got back.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// newHandler builds the whole HTTP surface the way serve does, except that
// the limit of failed authentications is off unless d sets one: these
// tests send bad credentials from the one loopback address.
func newHandler(tb testing.TB, d server.Deps) http.Handler {
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

func readResponse(t *testing.T, res *http.Response) response {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// wantError asserts a JSON Error body with the given status and code.
func wantError(t *testing.T, r response, status int, code models.Code) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body api.Error
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("error body %s: %v", r.Body, err)
	}
	if body.Code != code || body.Status != status || body.Message == "" {
		t.Fatalf("error body = %+v, want code %s status %d and a message", body, code, status)
	}
}
