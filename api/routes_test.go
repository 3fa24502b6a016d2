package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"petstore/config"
	"petstore/httpcode"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

func TestErrorRoutes(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		tests := []struct {
			name, method, path string
			auth               bool
			status             int
			code               models.Code
			allow              string
		}{
			{"unknown API path", "GET", "/v1/nothing-here", true, 404, models.CodeNotFound, ""},
			{"orders are not this service", "GET", "/v1/store/orders", true, 404, models.CodeNotFound, ""},
			{"categories are not this service", "GET", "/v1/categories", true, 404, models.CodeNotFound, ""},
			{"orders outside /v1", "GET", "/store/orders", false, 404, models.CodeNotFound, ""},
			{"unknown root path", "GET", "/nope", false, 404, models.CodeNotFound, ""},
			{"PUT on the collection", "PUT", "/v1/pets", true, 405, httpcode.MethodNotAllowed, "GET, HEAD, POST"},
			{"DELETE on the collection", "DELETE", "/v1/pets", true, 405, httpcode.MethodNotAllowed, "GET, HEAD, POST"},
			{"DELETE on a pet", "DELETE", "/v1/pets/1", true, 405, httpcode.MethodNotAllowed, "GET, HEAD"},
			{"POST on a pet", "POST", "/v1/pets/1", true, 405, httpcode.MethodNotAllowed, "GET, HEAD"},
			{"recovered panic", "GET", "/test/panic", false, 500, models.CodeInternal, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := map[string]string{}
				if tt.auth {
					h = e.authHeader()
				}
				r := e.do(tt.method, tt.path, h, "")
				wantError(t, r, tt.status, tt.code)
				if got := r.Header.Get("Allow"); got != tt.allow {
					t.Errorf("Allow = %q, want %q", got, tt.allow)
				}
				if bytes.Contains(r.Body, []byte("boom")) || bytes.Contains(r.Body, []byte("goroutine")) || bytes.Contains(r.Body, []byte(".go:")) {
					t.Errorf("body leaks internals: %s", r.Body)
				}
			})
		}
	})
}

// HEAD works wherever GET does, on every GET route of /v1: the status and
// headers GET answers, and no body (RFC 9110 section 9.3.2).
func TestHead(t *testing.T) {
	t.Parallel()
	h, err := server.New(context.Background(), server.Deps{Store: modelstest.Open(t, models.DriverSQLite)})
	if err != nil {
		t.Fatal(err)
	}
	heads := map[string]bool{}
	for _, r := range h.Routes() {
		heads[r.Method+" "+r.Path] = true
	}
	for _, r := range h.Routes() {
		if r.Method == http.MethodGet && strings.HasPrefix(r.Path, "/v1/") && !heads["HEAD "+r.Path] {
			t.Errorf("GET %s has no HEAD: mount it with get (api.go)", r.Path)
		}
	}

	forEach(t, func(t *testing.T, e *env) {
		var id string
		for i := range 40 { // a page over net/http's 2 KiB buffer states its length itself
			id = strconv.FormatInt(decodePet(t, e.post(fmt.Sprintf(`{"name":"Pet %d","categoryId":1}`, i)), http.StatusCreated).ID, 10)
		}
		etag := func(path string) map[string]string {
			h := e.authHeader()
			h["If-None-Match"] = e.get(path).Header.Get("ETag")
			return h
		}
		tests := []struct {
			name, path string
			headers    map[string]string
			status     int
		}{
			{"a page with a next one", "/v1/pets?limit=2", e.authHeader(), 200},
			{"a page over 2 KiB", "/v1/pets?limit=100", e.authHeader(), 200},
			{"an unchanged page", "/v1/pets?limit=2", etag("/v1/pets?limit=2"), 304},
			{"a bad list", "/v1/pets?stauts=sold", e.authHeader(), 400},
			{"no key", "/v1/pets", nil, 401},
			{"a pet", "/v1/pets/" + id, e.authHeader(), 200},
			{"an unchanged pet", "/v1/pets/" + id, etag("/v1/pets/" + id), 304},
			{"no such pet", "/v1/pets/987654321", e.authHeader(), 404},
			{"the change feed", "/v1/events?limit=2", e.authHeader(), 200},
			{"the document", "/v1/openapi.json", nil, 200},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				get := e.do("GET", tt.path, tt.headers, "")
				head := e.do("HEAD", tt.path, tt.headers, "")
				if get.Status != tt.status || head.Status != tt.status {
					t.Fatalf("GET %d, HEAD %d; want %d", get.Status, head.Status, tt.status)
				}
				if len(head.Body) != 0 {
					t.Errorf("HEAD has a body: %q", head.Body)
				}
				for _, hs := range []http.Header{get.Header, head.Header} {
					hs.Del("Date")
					hs.Del("X-Request-Id")
				}
				if fmt.Sprint(head.Header) != fmt.Sprint(get.Header) {
					t.Errorf("HEAD headers\n%v\nGET headers\n%v", head.Header, get.Header)
				}
				if tt.status == 200 && head.Header.Get("Content-Length") != strconv.Itoa(len(get.Body)) {
					t.Errorf("HEAD Content-Length %q, GET body %d bytes", head.Header.Get("Content-Length"), len(get.Body))
				}
			})
		}
	})
}

func TestAPIHeaders(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		// A page carries an ETag: the client may keep it and revalidate it
		// (conditional reads); any other answer is not to be stored.
		r := e.get("/v1/pets")
		for k, v := range map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-cache"} {
			if got := r.Header.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		for _, r := range []response{e.get("/v1/pets?limit=0"), e.post(`{"name":"Rex","categoryId":1}`)} {
			for k, v := range map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
				if got := r.Header.Get(k); got != v {
					t.Errorf("%d answer: %s = %q, want %q", r.Status, k, got, v)
				}
			}
			if r.Header.Get("ETag") != "" {
				t.Errorf("%d answer has an ETag", r.Status)
			}
		}
	})
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		r := e.do("GET", "/v1/openapi.json", nil, "") // no credential needed
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, type %q", r.Status, r.Header.Get("Content-Type"))
		}
		doc, err := openapi3.NewLoader().LoadFromData(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("served document is invalid: %v", err)
		}
		if !strings.HasPrefix(doc.OpenAPI, "3.") || doc.Info.Version != "1.0.0" {
			t.Errorf("openapi %q version %q", doc.OpenAPI, doc.Info.Version)
		}
		ops := map[string]*openapi3.Operation{}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				ops[method+" "+path] = op
			}
		}
		want := map[string]string{"GET /pets": "listPets", "POST /pets": "createPet", "GET /pets/{petId}": "getPet", "GET /events": "listEvents"}
		if len(ops) != len(want) {
			t.Errorf("operations = %v, want exactly %v", keys(ops), want)
		}
		for k, id := range want {
			if ops[k] == nil || ops[k].OperationID != id {
				t.Errorf("%s: operation %v, want %s", k, ops[k], id)
			}
		}
		if op := ops["GET /pets/{petId}"]; op == nil || !op.Deprecated {
			t.Error("getPet is not marked deprecated")
		}
		if s := doc.Components.SecuritySchemes["bearerAuth"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
			t.Error("no http bearer security scheme")
		}
		if ops["GET /pets"] != nil && ops["GET /pets"].Responses.Status(200).Value.Headers["Link"] == nil {
			t.Error("listPets 200 does not document the Link header")
		}
	})
}

// The error codes are an open set: the schema takes any snake_case code,
// so that a partner's generated client or strict validator accepts the
// next one, and its x-extensible-enum lists the codes the API answers
// today, each described in the document with the status httpcode gives it.
func TestErrorCodesDocumented(t *testing.T) {
	t.Parallel()
	errSchema := specDoc.Components.Schemas["Error"].Value
	code := errSchema.Properties["code"].Value
	if len(code.Enum) != 0 {
		t.Errorf("Error.code is a closed enum: %v", code.Enum)
	}
	future := map[string]any{"code": "some_future_code", "message": "A code added later.", "status": 400}
	if err := errSchema.VisitJSON(future); err != nil {
		t.Errorf("an Error with a code added later does not validate: %v", err)
	}
	raw, _ := code.Extensions["x-extensible-enum"].([]any)
	listed := map[string]bool{}
	for _, v := range raw {
		c, _ := v.(string)
		listed[c] = true
		status := httpcode.Status(models.Code(c))
		if status == http.StatusInternalServerError && c != string(models.CodeInternal) {
			t.Errorf("x-extensible-enum lists %q, a code without a status", c)
		}
		if line := fmt.Sprintf("\n- `%s` (%d): ", c, status); !strings.Contains(specDoc.Info.Description, line) {
			t.Errorf("the description does not explain %q as %q", c, line)
		}
	}
	if len(listed) < 10 {
		t.Fatalf("x-extensible-enum lists %d codes: %v", len(listed), raw)
	}
	for _, line := range regexp.MustCompile("\n- `([a-z_]+)` \\(\\d+\\): ").FindAllStringSubmatch(specDoc.Info.Description, -1) {
		if !listed[line[1]] {
			t.Errorf("the description explains %q, which x-extensible-enum does not list", line[1])
		}
	}
	// Only the console answers these: an edit that lost a race or the last
	// admin's demotion (conflict), a failed CSRF check (forbidden); a
	// client that hung up (canceled) gets no answer at all.
	for _, c := range []models.Code{models.CodeConflict, httpcode.Forbidden, models.CodeCanceled} {
		if listed[string(c)] {
			t.Errorf("x-extensible-enum lists %q, which the API never answers", c)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// With a public URL, the document names it as its server and Link headers
// are absolute.
func TestPublicURL(t *testing.T) {
	t.Parallel()
	s := modelstest.Open(t, models.DriverSQLite)
	srv := httptest.NewServer(newEngine(t, server.Deps{Store: s, Config: config.Config{PublicURL: "https://pets.example.com"}}))
	defer srv.Close()
	_, key, _ := s.CreateAPIKey(context.Background(), "k", "test")
	for range 3 {
		s.CreatePet(context.Background(), models.NewPet{Name: "x", CategoryID: 1, Status: models.StatusAvailable}, "test")
	}

	res, err := http.Get(srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Servers []struct{ URL string } }
	json.NewDecoder(res.Body).Decode(&doc)
	res.Body.Close()
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "https://pets.example.com/v1" {
		t.Errorf("servers = %+v", doc.Servers)
	}

	req, _ := http.NewRequest("GET", srv.URL+"/v1/pets?limit=2&status=available", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	want := `<https://pets.example.com/v1/pets?after=2&limit=2&status=available>; rel="next"`
	if got := res.Header.Get("Link"); got != want {
		t.Errorf("Link = %q, want %q", got, want)
	}
}

func TestHealthProbes(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		for path, want := range map[string]string{"/healthz": `{"status":"ok"}`, "/readyz": `{"status":"ready"}`} {
			r := e.do("GET", path, nil, "")
			if r.Status != 200 || string(bytes.TrimSpace(r.Body)) != want || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s: %d %s", path, r.Status, r.Body)
			}
		}
		// With the database gone, readiness fails with the Error body and
		// liveness still answers.
		e.store.Close()
		wantError(t, e.do("GET", "/readyz", nil, ""), http.StatusServiceUnavailable, models.CodeUnavailable)
		if r := e.do("GET", "/healthz", nil, ""); r.Status != 200 {
			t.Errorf("healthz with the database gone: %d", r.Status)
		}
	})
}
