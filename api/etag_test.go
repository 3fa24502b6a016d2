package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"petstore/models"
)

// TestConditionalReads: a pet and a page carry an ETag; If-None-Match with
// it is 304 without a body until any field of a returned pet changes, a
// console status change included. Every answer is checked against the
// OpenAPI document (env.do).
func TestConditionalReads(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		created := e.post(`{"name":"Rex","categoryId":1}`)
		if created.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", created.Status, created.Body)
		}
		var p struct{ ID int64 }
		if err := json.Unmarshal(created.Body, &p); err != nil {
			t.Fatal(err)
		}
		onePath := "/v1/pets/" + strconv.FormatInt(p.ID, 10)
		for _, path := range []string{onePath, "/v1/pets?limit=5"} {
			first := e.get(path)
			tag := first.Header.Get("ETag")
			if first.Status != http.StatusOK || len(tag) != 18 || tag[0] != '"' {
				t.Fatalf("GET %s: %d, ETag %q", path, first.Status, tag)
			}
			if again := e.get(path); again.Header.Get("ETag") != tag {
				t.Errorf("GET %s twice: ETag %q then %q", path, tag, again.Header.Get("ETag"))
			}
			for _, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*"} {
				r := e.conditionalGet(path, inm)
				if r.Status != http.StatusNotModified || len(r.Body) != 0 || r.Header.Get("ETag") != tag {
					t.Errorf("GET %s If-None-Match %s: %d, ETag %q, body %q; want 304, %s, none", path, inm, r.Status, r.Header.Get("ETag"), r.Body, tag)
				}
			}
			for _, inm := range []string{`"other"`, tag[1 : len(tag)-1], "garbage"} {
				if r := e.conditionalGet(path, inm); r.Status != http.StatusOK || r.Header.Get("ETag") != tag || len(r.Body) == 0 {
					t.Errorf("GET %s If-None-Match %s: %d, want 200 with the body", path, inm, r.Status)
				}
			}

			// A change made in the console: the old tag no longer matches.
			next := models.StatusSold
			if _, err := e.store.UpdatePetStatus(context.Background(), p.ID, next, "staff"); err != nil {
				t.Fatal(err)
			}
			r := e.conditionalGet(path, tag)
			if r.Status != http.StatusOK || r.Header.Get("ETag") == tag {
				t.Errorf("GET %s after a status change: %d, ETag %q (was %q); want 200 and a new tag", path, r.Status, r.Header.Get("ETag"), tag)
			}
			if _, err := e.store.UpdatePetStatus(context.Background(), p.ID, models.StatusAvailable, "staff"); err != nil {
				t.Fatal(err)
			}
		}

		// A new pet on the page changes the page's tag.
		page := e.get("/v1/pets?limit=5")
		e.post(`{"name":"Luna","categoryId":2}`)
		if r := e.conditionalGet("/v1/pets?limit=5", page.Header.Get("ETag")); r.Status != http.StatusOK {
			t.Errorf("page after a create: %d, want 200", r.Status)
		}
	})
}

func (e *env) conditionalGet(path, ifNoneMatch string) response {
	h := e.authHeader()
	h["If-None-Match"] = ifNoneMatch
	return e.do("GET", path, h, "")
}

// A page larger than net/http's 2 KiB buffer states its length instead of
// being sent in chunks.
func TestLargePageHasContentLength(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		for i := range 40 {
			if r := e.post(fmt.Sprintf(`{"name":"A rather long pet name number %d","categoryId":%d}`, i, i+1)); r.Status != http.StatusCreated {
				t.Fatalf("create %d: %d %s", i, r.Status, r.Body)
			}
		}
		r := e.get("/v1/pets?limit=40")
		if r.Status != http.StatusOK || len(r.Body) <= 2048 {
			t.Fatalf("page: %d, %d bytes; want 200 over 2 KiB", r.Status, len(r.Body))
		}
		if got := r.Header.Get("Content-Length"); got != strconv.Itoa(len(r.Body)) {
			t.Fatalf("Content-Length %q for a body of %d bytes", got, len(r.Body))
		}
		// Every size, across net/http's 2 KiB buffer: small bodies get
		// their length from net/http, large ones from the handler.
		for limit := 1; limit <= 40; limit++ {
			r := e.get("/v1/pets?limit=" + strconv.Itoa(limit))
			if got := r.Header.Get("Content-Length"); r.Status != http.StatusOK || got != strconv.Itoa(len(r.Body)) {
				t.Fatalf("limit=%d: %d, Content-Length %q for a body of %d bytes", limit, r.Status, got, len(r.Body))
			}
		}
	})
}
