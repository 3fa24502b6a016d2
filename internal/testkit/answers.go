package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"petstore/api"
	"petstore/models"
	"testing"
)

// WantAPIError checks an answer of the API's error writer: status, the
// JSON type, and the Error body (nothing else) with code and a message.
func WantAPIError(tb testing.TB, what string, r Reply, status int, code models.Code) {
	tb.Helper()
	if r.Err != nil {
		tb.Errorf("%s: %v, want %d %s", what, r.Err, status, code)
		return
	}
	var e api.Error
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	err := dec.Decode(&e)
	ct := r.Header.Get("Content-Type")
	if r.Status != status || ct != "application/json" || err != nil || e.Code != code || e.Status != status || e.Message == "" {
		tb.Errorf("%s: %s (Content-Type %q, decoding: %v), want %d with the Error body, code %s", what, r, ct, err, status, code)
	}
}

// WantNo5xx fails the test on a server error, or no answer at all.
func WantNo5xx(tb testing.TB, what string, r Reply) {
	tb.Helper()
	if r.Err != nil || r.Status >= 500 {
		tb.Fatalf("%s: %s, want no server error", what, r)
	}
}

// WantPet decodes the Pet of an answer with status.
func WantPet(tb testing.TB, what string, r Reply, status int) api.Pet {
	tb.Helper()
	if r.Err != nil || r.Status != status {
		tb.Fatalf("%s: %s, want %d", what, r, status)
	}
	var p api.Pet
	if err := json.Unmarshal(r.Body, &p); err != nil {
		tb.Fatalf("%s: %s: %v", what, Clip(string(r.Body)), err)
	}
	return p
}

// WantCreated returns the pet of a 201 for a pet named name, failing the
// test otherwise.
func WantCreated(tb testing.TB, r Reply, name string) api.Pet {
	tb.Helper()
	p := WantPet(tb, fmt.Sprintf("create %q", name), r, http.StatusCreated)
	if p.ID < 1 || p.Name != name {
		tb.Fatalf("create %q: body %s, want the pet", name, r.Body)
	}
	return p
}
