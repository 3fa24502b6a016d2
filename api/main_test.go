package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/gin-gonic/gin"

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

func TestMain(m *testing.M) { modelstest.Main(m) }

// env is one API server over real HTTP on loopback and a real database.
type env struct {
	t     *testing.T
	store *models.Store
	srv   *httptest.Server
	key   string
	clock atomic.Pointer[time.Time]
}

// response is what a request got back: the kit's reply (Status, Header,
// Body).
type response = testkit.Reply

func newEnv(t *testing.T, store *models.Store) *env {
	t.Helper()
	e := &env{t: t, store: store}
	now := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	e.clock.Store(&now)
	e.srv = httptest.NewServer(newEngine(t, server.Deps{Store: store, Now: func() time.Time { return *e.clock.Load() }}))
	t.Cleanup(e.srv.Close)
	// No Accept-Encoding, as partners' scripts mostly send: the API's own
	// headers are checked on identity answers (server's tests check
	// compression), not on what Go's transport decompressed.
	e.srv.Client().Transport.(*http.Transport).DisableCompression = true
	_, key, err := store.CreateAPIKey(context.Background(), "test partner", "test")
	if err != nil {
		t.Fatal(err)
	}
	e.key = key
	return e
}

// newEngine builds the whole HTTP surface the way serve does (the kit's
// NewHandler: the limit of failed authentications off unless d sets one)
// with one more route, GET /test/panic, that panics.
func newEngine(tb testing.TB, d server.Deps) http.Handler {
	tb.Helper()
	return testkit.NewHandler(tb, withPanicRoute(d))
}

// withPanicRoute adds GET /test/panic, a route that panics, to d.
func withPanicRoute(d server.Deps) server.Deps {
	d.TestRoutes = func(r gin.IRoutes) {
		r.GET("/test/panic", func(*gin.Context) { panic("boom: secret internal detail") })
	}
	return d
}

// forEach runs fn on a fresh server per driver.
func forEach(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) { fn(t, newEnv(t, s)) })
}

func (e *env) authHeader() map[string]string {
	return map[string]string{"Authorization": "Bearer " + e.key}
}

// do sends a request and checks the response against the OpenAPI document
// whenever the request matches one of its operations.
func (e *env) do(method, path string, headers map[string]string, body string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	r := testkit.Do(e.srv.Client(), req)
	if r.Err != nil {
		e.t.Fatal(r.Err)
	}
	checkAgainstOpenAPI(e.t, req, r)
	return r
}

func (e *env) get(path string) response { return e.do("GET", path, e.authHeader(), "") }

func (e *env) post(body string) response {
	h := e.authHeader()
	h["Content-Type"] = "application/json"
	return e.do("POST", "/v1/pets", h, body)
}

const specHost = "petstore.test"

var (
	specRouter routers.Router
	specDoc    *openapi3.T
)

func init() {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPIDocument)
	if err != nil {
		panic(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		panic("openapi.json is not a valid OpenAPI document: " + err.Error())
	}
	// The document's server is relative (/v1); the router needs an
	// absolute one, so requests are matched as if sent to specHost.
	doc.Servers = openapi3.Servers{{URL: "http://" + specHost + "/v1"}}
	specDoc = doc
	specRouter, err = legacy.NewRouter(doc)
	if err != nil {
		panic(err)
	}
}

// checkAgainstOpenAPI validates a real response (status, headers, body)
// against the document, so the document cannot drift from the code.
func checkAgainstOpenAPI(t *testing.T, req *http.Request, r response) {
	t.Helper()
	matchReq := req.Clone(context.Background())
	matchReq.URL.Scheme, matchReq.URL.Host = "http", specHost
	route, params, err := specRouter.FindRoute(matchReq)
	path := strings.TrimSuffix(strings.TrimPrefix(req.URL.Path, api.Prefix), "/") // Gin redirects /pets/ to /pets
	if err == nil && strings.Count(route.Path, "/") != strings.Count(path, "/") {
		// Gin routes by the decoded path, where /pets/1%2F2 is /pets/1/2
		// and /pets/%2F%2F is /pets///, no operation's path; the
		// document's router matches them to one.
		err = routers.ErrPathNotFound
	}
	if err != nil {
		// Not an operation of the API: 404 and 405 paths, probes. Every
		// GET /v1/pets, GET /v1/pets/{x}, POST /v1/pets and GET /v1/events
		// must be one.
		isOperation := (req.Method == "GET" && strings.HasPrefix(req.URL.Path, "/v1/pets") && strings.Count(req.URL.Path, "/") <= 3) ||
			(req.Method == "POST" && req.URL.Path == "/v1/pets") || (req.Method == "GET" && req.URL.Path == "/v1/events")
		if isOperation {
			t.Errorf("%s %s matches no operation of openapi.json: %v", req.Method, req.URL.Path, err)
		}
		return
	}
	req = matchReq
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.Status,
		Header:                 r.Header,
		Body:                   io.NopCloser(bytes.NewReader(r.Body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s -> %d does not match openapi.json: %v\nbody: %s", req.Method, req.URL.Path, r.Status, err, r.Body)
	}
	if doc := route.Operation.Responses.Status(r.Status); doc != nil {
		for name := range r.Header {
			if !framingHeaders[name] && !documentsHeader(doc.Value, name) {
				t.Errorf("%s %s -> %d sends %s: %q, which openapi.json does not document on that answer", req.Method, req.URL.Path, r.Status, name, r.Header.Get(name))
			}
		}
	}
}

// framingHeaders are the response headers the document need not list:
// net/http's framing and date, the body's media type (the response's
// content says it), and nosniff, which only browsers heed (the API's
// description says every answer carries it). Vary and Content-Encoding come
// with compression, which HTTP negotiates (Accept-Encoding) under the API.
var framingHeaders = map[string]bool{"Content-Type": true, "Content-Length": true, "Date": true, "X-Content-Type-Options": true,
	"Vary": true, "Content-Encoding": true}

// documentsHeader reports whether the response documents the header name
// (header names are case-insensitive: the document writes ETag, net/http
// Etag).
func documentsHeader(res *openapi3.Response, name string) bool {
	for documented := range res.Headers {
		if strings.EqualFold(documented, name) {
			return true
		}
	}
	return false
}

// wantError asserts an Error body with the given status and code.
func wantError(t *testing.T, r response, status int, code models.Code) api.Error {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body api.Error
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("error body %s: %v", r.Body, err)
	}
	if body.Code != code || body.Status != status || body.Message == "" {
		t.Fatalf("error body = %+v, want code %s status %d and a message", body, code, status)
	}
	if status == http.StatusUnauthorized {
		if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="petstore"` {
			t.Errorf("WWW-Authenticate = %q", got)
		}
	}
	return body
}

func decodePets(t *testing.T, r response) []api.Pet {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status = %d, body %s", r.Status, r.Body)
	}
	var pets []api.Pet
	if err := json.Unmarshal(r.Body, &pets); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return pets
}

func decodePet(t *testing.T, r response, status int) api.Pet {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	var p api.Pet
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return p
}

// countPets counts stored pets through the store, not the API.
func (e *env) countPets() int {
	e.t.Helper()
	return len(testkit.StoredPets(e.t, e.store))
}
