package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"petstore/api"
	"petstore/httpcode"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// The fuzz targets drive the real engine over HTTP with inputs nobody
// would write by hand; each must never panic and never answer 5xx. Each
// fuzzing process builds one SQLite env before its first input (a fuzz
// target has no *testing.T outside its callback, so newEnv cannot be used
// as is) and points env.t at the *testing.T of each input in turn: inputs
// run one after another within a process.

// newFuzzEnv is newEnv for a fuzz target: the same engine, on SQLite,
// without a rate limit (the fuzzer sends thousands of requests a second
// with one key), with the server's own log discarded (the query fuzzer
// makes it warn about semicolons) and with redirects returned rather than
// followed.
func newFuzzEnv(f *testing.F) *env {
	f.Helper()
	store := modelstest.Open(f, models.DriverSQLite)
	e := &env{store: store}
	now := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	e.clock.Store(&now)
	e.srv = httptest.NewUnstartedServer(newEngine(f, server.Deps{Store: store, Now: func() time.Time { return *e.clock.Load() }}))
	e.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	e.srv.Start()
	f.Cleanup(e.srv.Close)
	e.srv.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	_, key, err := store.CreateAPIKey(context.Background(), "fuzz partner", "test")
	if err != nil {
		f.Fatal(err)
	}
	e.key = key
	return e
}

// fuzzContentTypes are the Content-Type headers FuzzCreatePetBody picks
// from, and whether each names JSON.
var fuzzContentTypes = []struct {
	value string
	json  bool
}{
	{"application/json", true},
	{"application/json; charset=utf-8", true},
	{"Application/JSON", true},
	{"application/merge-patch+json", true},
	{"text/plain", false},
	{"", false},
	{"application/x-www-form-urlencoded", false},
	{"multipart/form-data; boundary=x", false},
	{"application/jsonp", false},
	{"text/json+xml", false},
}

// FuzzCreatePetBody posts arbitrary bytes to POST /v1/pets with a valid key
// and one of fuzzContentTypes. The answer is 201 with a Pet, or 400, 413 or
// 415 with the Error body; 415 exactly when the type is not JSON, 413
// exactly when the body is over 1 MiB. A 201 stores exactly what the rules
// make of the body (PetInput.Validate of its fields), and nothing is stored
// on a refusal.
func FuzzCreatePetBody(f *testing.F) {
	seeds := []string{
		`{"name":"Rex","categoryId":1}`,
		`{"name":"  Rex  ","categoryId":9223372036854775807,"status":"sold","id":5,"extra":[1,{"a":null}]}`,
		`{"name":"Rex","categoryId":9223372036854775808}`,
		`{"name":"Rex","categoryId":1e3}`,
		`{"name":"Rex","categoryId":1.0}`,
		`{"name":"Rex","categoryId":-0}`,
		`{"name":"Rex","categoryId":"1"}`,
		`{"name":"Rex","categoryId":1,"status":null}`,
		`{"name":null,"categoryId":null,"status":null}`,
		`{"name":"Rex","name":"Max","categoryId":1}`,
		`{"NAME":"Rex","categoryId":1}`,
		`{"name":["Rex"],"categoryId":{"id":1},"status":true}`,
		`{"name":"Rex","categoryId":1} {"name":"Max","categoryId":2}`,
		`{"name":"Rex","categoryId":1}}`,
		`{"name":"Rex","categoryId":1`,
		`{"name":"\u0000","categoryId":1}`,
		`{"name":"\ud800","categoryId":1}`,
		`{"name":"\ud83d\udc36","categoryId":1}`,
		`{"name":"a\u0085b","categoryId":1}`,
		`{"name":"\u202eRex\u200b","categoryId":1}`,
		`{"name":"' OR 1=1--","categoryId":1}`,
		`{"name":"\"; DROP TABLE pets;--","categoryId":1}`,
		`{"name":"%_\\","categoryId":1}`,
		"{\"name\":\"Rex\xff\",\"categoryId\":1}",
		"{\"name\":\"Rex\x00\",\"categoryId\":1}",
		"\xef\xbb\xbf{\"name\":\"Rex\",\"categoryId\":1}",
		`[]`, `null`, `""`, `1`, ``, ` `, `{}`,
		strings.Repeat("[", 10001),
		`{"name":"Rex","categoryId":1,"x":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`,
		`{"name":"` + strings.Repeat("é", models.MaxNameLength) + `","categoryId":1}`,
		`{"name":"` + strings.Repeat("é", models.MaxNameLength+1) + `","categoryId":1}`,
		`{"name":"Rex","categoryId":1` + strings.Repeat("0", 400) + `}`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i%len(fuzzContentTypes)))
		f.Add([]byte(s), uint8(0))
	}
	// Just over the 1 MiB limit.
	over := append([]byte(`{"name":"Rex","categoryId":1,"pad":"`), bytes.Repeat([]byte("a"), api.MaxBodyBytes)...)
	f.Add(append(over, `"}`...), uint8(0))

	e := newFuzzEnv(f)
	var lastID int64 // the highest id stored so far
	f.Fuzz(func(t *testing.T, body []byte, ctIndex uint8) {
		e.t = t
		ct := fuzzContentTypes[int(ctIndex)%len(fuzzContentTypes)]
		h := e.authHeader()
		h["Content-Type"] = ct.value
		r := e.do("POST", "/v1/pets", h, string(body))

		want, oracleErr := expectCreated(body)
		switch {
		case !ct.json:
			wantError(t, r, http.StatusUnsupportedMediaType, httpcode.UnsupportedMediaType)
		case len(body) > api.MaxBodyBytes:
			wantError(t, r, http.StatusRequestEntityTooLarge, httpcode.PayloadTooLarge)
		case oracleErr != nil:
			if r.Status != http.StatusBadRequest {
				t.Fatalf("body %q: status %d, want 400 (%v); response %s", body, r.Status, oracleErr, r.Body)
			}
			wantError(t, r, http.StatusBadRequest, models.CodeInvalidRequest)
		default:
			p := decodePet(t, r, http.StatusCreated)
			if p.Name != want.Name || p.CategoryID != want.CategoryID || p.Status != want.Status || p.ID <= lastID {
				t.Fatalf("body %q: created %+v, want %+v with an id above %d", body, p, want, lastID)
			}
			wantValidName(t, p.Name)
			if loc := r.Header.Get("Location"); loc != "/v1/pets/"+strconv.FormatInt(p.ID, 10) {
				t.Errorf("Location = %q", loc)
			}
		}

		// Exactly one row more on 201, none otherwise (nothing half-stored).
		rows, _, err := e.store.ListPets(context.Background(), models.PetQuery{Limit: 2, After: lastID})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusCreated {
			if len(rows) != 0 {
				t.Fatalf("refused body %q stored %+v", body, rows)
			}
			return
		}
		if len(rows) != 1 || rows[0].Name != want.Name || rows[0].CategoryID != want.CategoryID || rows[0].Status != want.Status {
			t.Fatalf("body %q: stored %+v, want one pet %+v", body, rows, want)
		}
		lastID = rows[0].ID
	})
}

// expectCreated says what a JSON body should become by the rules of
// DESIGN.md: one JSON object of valid UTF-8; name a string, categoryId a
// JSON number, status a string (null meaning absent); other fields ignored;
// the values then as PetInput.Validate has them.
func expectCreated(body []byte) (models.NewPet, error) {
	var fields map[string]json.RawMessage
	if !utf8.Valid(body) {
		return models.NewPet{}, refusal("not UTF-8")
	}
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return models.NewPet{}, refusal("not one JSON object")
	}
	var in models.PetInput
	field := func(name string) (string, bool) {
		raw := strings.TrimSpace(string(fields[name]))
		return raw, raw != "" && raw != "null"
	}
	if raw, ok := field("name"); ok {
		if json.Unmarshal([]byte(raw), &in.Name) != nil {
			return models.NewPet{}, refusal("name is not a string")
		}
	}
	if raw, ok := field("categoryId"); ok {
		var n json.Number
		if raw[0] == '"' || json.Unmarshal([]byte(raw), &n) != nil {
			return models.NewPet{}, refusal("categoryId is not a number")
		}
		in.CategoryID = raw
	}
	if raw, ok := field("status"); ok {
		var s string
		if json.Unmarshal([]byte(raw), &s) != nil {
			return models.NewPet{}, refusal("status is not a string")
		}
		in.Status = &s
	}
	return in.Validate()
}

// refusal is why expectCreated expects a 400.
type refusal string

func (e refusal) Error() string { return string(e) }

// wantValidName checks a name as stored: trimmed, 1..255 code points of
// valid UTF-8, no control characters.
func wantValidName(t *testing.T, name string) {
	t.Helper()
	n := utf8.RuneCountInString(name)
	if name != strings.TrimSpace(name) || !utf8.ValidString(name) || n < 1 || n > models.MaxNameLength ||
		strings.IndexFunc(name, unicode.IsControl) >= 0 {
		t.Errorf("name %q breaks the name rules", name)
	}
}

// sendable makes an arbitrary string fit a request line, as a client
// would: bytes that cannot appear there (controls, space, '#') are
// percent-encoded, which the server decodes back to the same bytes in the
// parameter values; everything else is sent as is, invalid escapes and
// bytes above 0x7f included.
func sendable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || c == '#' {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// fuzzPets are the pets FuzzListPetsQuery lists, ids 1..len.
var fuzzPets = []models.NewPet{
	{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable},
	{Name: "Tom", CategoryID: 2, Status: models.StatusPending},
	{Name: "' OR 1=1--", CategoryID: 3, Status: models.StatusSold},
	{Name: "50%_off\\", CategoryID: 4, Status: models.StatusAvailable},
	{Name: "Max", CategoryID: 5, Status: models.StatusAvailable},
}

// FuzzListPetsQuery sends an arbitrary query string to GET /v1/pets and an
// arbitrary path segment to GET /v1/pets/{petId}. The list answers 200 with
// a JSON array (exactly the page the store has for the parsed query, with a
// Link to the next page carrying only limit, after and status) or 400; the
// pet answers 200, 400 or 404 (410 after the sunset), and a 301 only for a
// trailing slash, to a path on this site. Never a 5xx.
func FuzzListPetsQuery(f *testing.F) {
	for _, s := range []struct{ query, segment string }{
		{"", "1"},
		{"limit=1", "5"},
		{"limit=2&after=1&status=available", "6"},
		{"limit=100&status=sold", "0"},
		{"limit=0", "-1"},
		{"limit=101", "+1"},
		{"limit=1.5", "1.5"},
		{"limit=abc", "abc"},
		{"limit=1&limit=2", "01"},
		{"status=available%0d%0aSet-Cookie:%20x=1", "1%0d%0a"},
		{"status=available%26after%3D0", "1\r\nSet-Cookie: x=1"},
		{"status=' OR 1=1--", "1' OR '1'='1"},
		{"status=%27%3B%20DROP%20TABLE%20pets%3B--", "1; DROP TABLE pets"},
		{"after=9223372036854775807", "9223372036854775807"},
		{"after=9223372036854775808", "9223372036854775808"},
		{"after=-1", "%2e%2e"},
		{"after=1;limit=1", ".."},
		{"after=%", "../../go.mod"},
		{"a=%zz&limit=1", "%00"},
		{"limit=1\x00", "1\x00"},
		{"limit=\xff", "\xff\xfe"},
		{"q=%25&before=2", "%"},
		{"", ""},
		{"", "1/"},
		{"", "/"},
		{"", "1/2"},
		{strings.Repeat("after=1&", 200), strings.Repeat("9", 400)},
	} {
		f.Add(s.query, s.segment)
	}

	e := newFuzzEnv(f)
	for _, p := range fuzzPets {
		if _, err := e.store.CreatePet(context.Background(), p, "test"); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, query, segment string) {
		e.t = t
		checkListQuery(t, e, sendable(query))
		checkGetPetPath(t, e, segment)
	})
}

func checkListQuery(t *testing.T, e *env, raw string) {
	t.Helper()
	r := e.get("/v1/pets?" + raw)
	// As the server reads it: a query string it cannot read whole is 400.
	params, err := models.ParseQueryString(raw)
	var q models.PetQuery
	if err == nil {
		q, err = models.ParsePetQuery(params)
	}
	if err != nil {
		if r.Status != http.StatusBadRequest {
			t.Fatalf("GET /v1/pets?%s: %d, want 400 (%v); body %s", raw, r.Status, err, r.Body)
		}
		wantError(t, r, http.StatusBadRequest, models.CodeInvalidRequest)
		if link := r.Header.Get("Link"); link != "" {
			t.Errorf("a refused list carries Link %q", link)
		}
		return
	}
	if r.Status != http.StatusOK || !bytes.HasPrefix(r.Body, []byte("[")) {
		t.Fatalf("GET /v1/pets?%s: %d %s, want 200 and a JSON array", raw, r.Status, r.Body)
	}
	got := decodePets(t, r)
	want, more, err := e.store.ListPets(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("GET /v1/pets?%s: %d pets, want %d", raw, len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Name != want[i].Name || got[i].Status != want[i].Status {
			t.Fatalf("GET /v1/pets?%s: pet %d is %+v, want %+v", raw, i, got[i], want[i])
		}
	}
	link := r.Header.Get("Link")
	if !more {
		if link != "" {
			t.Errorf("the last page carries Link %q", link)
		}
		return
	}
	next := wantNextLink(t, link)
	wantNext := url.Values{"limit": {strconv.Itoa(q.Limit)}, "after": {strconv.FormatInt(want[len(want)-1].ID, 10)}}
	if q.Status != "" {
		wantNext.Set("status", string(q.Status))
	}
	if next.Encode() != wantNext.Encode() {
		t.Errorf("GET /v1/pets?%s: next page %v, want %v", raw, next, wantNext)
	}
}

// wantNextLink checks a Link header is one rel="next" link to /v1/pets,
// with no CR, LF or other control characters, and returns its query.
func wantNextLink(t *testing.T, link string) url.Values {
	t.Helper()
	if strings.IndexFunc(link, unicode.IsControl) >= 0 {
		t.Fatalf("Link %q holds control characters", link)
	}
	target, ok := strings.CutSuffix(link, `>; rel="next"`)
	if !ok || !strings.HasPrefix(target, "</v1/pets?") || strings.ContainsAny(target[1:], "<>") {
		t.Fatalf(`Link %q, want </v1/pets?...>; rel="next"`, link)
	}
	u, err := url.Parse(target[1:])
	if err != nil {
		t.Fatalf("Link %q: %v", link, err)
	}
	next, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		t.Fatalf("Link %q: %v", link, err)
	}
	return next
}

func checkGetPetPath(t *testing.T, e *env, segment string) {
	t.Helper()
	path := "/v1/pets/" + url.PathEscape(segment)
	r := e.get(path)
	if r.Status >= 500 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	decoded := "/v1/pets/" + segment // what the router matches
	switch {
	case strings.HasSuffix(decoded, "/"):
		// Gin redirects a trailing slash to the route without it (and
		// http.Redirect cleans the path: /v1/pets/../ goes to /v1); the
		// target must be a path on this site.
		loc := r.Header.Get("Location")
		if (r.Status != http.StatusMovedPermanently && r.Status != http.StatusNotFound) ||
			(r.Status == http.StatusMovedPermanently && (!strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") ||
				strings.HasPrefix(loc, "/\\") || strings.IndexFunc(loc, unicode.IsControl) >= 0)) {
			t.Fatalf("GET %s: %d Location %q, want a redirect to a local path, or 404", path, r.Status, loc)
		}
		return
	case strings.Contains(segment, "/"):
		wantError(t, r, http.StatusNotFound, models.CodeNotFound)
		return
	}
	for name, want := range map[string]string{"Deprecation": "@", "Sunset": "Thu, 05 Dec 2030 00:00:00 GMT"} {
		if got := r.Header.Get(name); !strings.HasPrefix(got, want) {
			t.Errorf("GET %s: %s = %q", path, name, got)
		}
	}
	id, err := models.ParsePetID(segment)
	switch {
	case err != nil:
		wantError(t, r, http.StatusBadRequest, models.CodeInvalidRequest)
	case id > int64(len(fuzzPets)):
		wantError(t, r, http.StatusNotFound, models.CodeNotFound)
	default:
		p := decodePet(t, r, http.StatusOK)
		if want := fuzzPets[id-1]; p.ID != id || p.Name != want.Name || p.Status != want.Status {
			t.Errorf("GET %s = %+v, want %+v", path, p, want)
		}
	}
}
