package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/PuerkitoBio/goquery"

	"petstore/api"
	"petstore/httpcode"
	"petstore/internal/testkit"
	"petstore/models"
)

// Hostile input against the product's whole HTTP surface (a site: the
// handler serve serves, behind serve's server limits) over real HTTP, on
// both databases: what an attacker or a broken client sends must get a
// clean 4xx (or a correct, literal answer), never a 5xx, a hang, a leaked
// file or an injected header, and must leave the data as it was.

// rawExchange writes request bytes on a fresh connection to addr and reads
// one response, all within 15 s: a server waiting for more fails the test.
// With closeWrite it first closes the writing side, as a client that has
// sent all it will send.
func rawExchange(t *testing.T, addr, request string, closeWrite bool) testkit.Reply {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	start := time.Now()
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatalf("write: %v", err)
	}
	if closeWrite {
		conn.(*net.TCPConn).CloseWrite()
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to %s: %v", testkit.Clip(request), err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return testkit.Reply{Status: res.StatusCode, Header: res.Header, Body: b, Took: time.Since(start)}
}

// countPets counts the pets through the store, which also proves the table
// is still there.
func countPets(t *testing.T, s *models.Store) int {
	t.Helper()
	return len(testkit.StoredPets(t, s))
}

// sqlMeta are SQL meta-characters and classic injections, sent in every
// parameter.
var sqlMeta = []string{
	`' OR 1=1--`,
	`' OR '1'='1`,
	`"; DROP TABLE pets;--`,
	`1; DROP TABLE pets`,
	`Robert'); DROP TABLE pets;--`,
	`%`,
	`_`,
	`50%_off`,
	`\`,
	`\'`,
	`\%\_`,
	`!`,
	`!%`,
	`) OR (1=1`,
	`1 UNION SELECT name FROM users--`,
	"`pets`",
	`/* comment */`,
	`--`,
	`0x27`,
	`CHAR(39)`,
	`' AND SLEEP(5)--`,
}

// asciiSearchMatches is the console's name search rule, for ASCII text:
// every word of the search (a run of letters and digits, or any other
// character but a space) starts a word of the name, ignoring case.
func asciiSearchMatches(name, search string) bool {
	words := func(s string) []string {
		var out []string
		for _, f := range strings.Fields(strings.ToLower(s)) {
			for f != "" {
				n := strings.IndexFunc(f, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
				switch {
				case n < 0:
					out, f = append(out, f), ""
				case n == 0:
					out, f = append(out, f[:1]), f[1:]
				default:
					out, f = append(out, f[:n]), f[n:]
				}
			}
		}
		return out
	}
	nameWords := words(name)
	for _, w := range words(search) {
		if !slices.ContainsFunc(nameWords, func(nw string) bool { return strings.HasPrefix(nw, w) }) {
			return false
		}
	}
	return true
}

type bodyCase struct {
	name        string
	contentType string // default application/json
	body        string
	status      int
	code        models.Code // for errors
	wantName    string      // for 201
}

func TestHostileBodies(t *testing.T) {
	t.Parallel()
	const mib = api.MaxBodyBytes
	// padded returns a valid pet body of exactly n bytes, padded with an
	// unknown field (which the API ignores).
	padded := func(n int) string {
		head, tail := `{"name":"Padded","categoryId":1,"pad":"`, `"}`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []bodyCase{
		{name: "exactly 1 MiB", body: padded(mib), status: 201, wantName: "Padded"},
		{name: "1 MiB less a byte", body: padded(mib - 1), status: 201, wantName: "Padded"},
		{name: "1 MiB and a byte", body: padded(mib + 1), status: 413, code: httpcode.PayloadTooLarge},
		{name: "8 MiB", body: padded(8 * mib), status: 413, code: httpcode.PayloadTooLarge},
		{name: "name of almost 1 MiB", body: `{"categoryId":1,"name":"` + strings.Repeat("x", mib-40) + `"}`, status: 400, code: models.CodeInvalidRequest},
		{name: "170000 repeated keys", body: "{" + strings.Repeat(`"a":1,`, (mib-100)/6) + `"name":"Keys","categoryId":1}`, status: 201, wantName: "Keys"},
		{name: "100000 open brackets", body: strings.Repeat("[", 100000), status: 400, code: models.CodeInvalidRequest},
		{name: "100000 nested arrays, closed", body: deep(100000), status: 400, code: models.CodeInvalidRequest},
		{name: "100000 nested objects", body: strings.Repeat(`{"a":`, 100000), status: 400, code: models.CodeInvalidRequest},
		{name: "100000 levels in the name", body: `{"categoryId":1,"name":` + deep(100000) + `}`, status: 400, code: models.CodeInvalidRequest},
		{name: "100000 levels in an ignored field", body: `{"name":"Deep","categoryId":1,"x":` + deep(100000) + `}`, status: 400, code: models.CodeInvalidRequest},
		{name: "9000 levels in an ignored field", body: `{"name":"Deep","categoryId":1,"x":` + deep(9000) + `}`, status: 201, wantName: "Deep"},
		{name: "invalid UTF-8 in the name", body: "{\"name\":\"Rex\xff\xfe\",\"categoryId\":1}", status: 400, code: models.CodeInvalidRequest},
		{name: "overlong UTF-8 in the name", body: "{\"name\":\"\xc0\xaf\xc0\xae\",\"categoryId\":1}", status: 400, code: models.CodeInvalidRequest},
		{name: "UTF-8 surrogate bytes in the name", body: "{\"name\":\"\xed\xa0\x80\",\"categoryId\":1}", status: 400, code: models.CodeInvalidRequest},
		{name: "UTF-16 body", body: "\xff\xfe{\x00\"\x00n\x00", status: 400, code: models.CodeInvalidRequest},
		// encoding/json turns an escaped lone surrogate into U+FFFD, a
		// valid character, so the name is stored as that.
		{name: "escaped lone surrogate", body: `{"name":"\ud800","categoryId":1}`, status: 201, wantName: "\ufffd"},
		{name: "escaped NUL in the name", body: `{"name":"Rex\u0000","categoryId":1}`, status: 400, code: models.CodeInvalidRequest},
		{name: "NUL byte in the name", body: "{\"name\":\"Rex\x00\",\"categoryId\":1}", status: 400, code: models.CodeInvalidRequest},
		{name: "NUL byte after the object", body: "{\"name\":\"Rex\",\"categoryId\":1}\x00", status: 400, code: models.CodeInvalidRequest},
		{name: "NUL byte before the object", body: "\x00{\"name\":\"Rex\",\"categoryId\":1}", status: 400, code: models.CodeInvalidRequest},
		{name: "C1 control in the name", body: `{"name":"Rex\u0085Max","categoryId":1}`, status: 400, code: models.CodeInvalidRequest},
		{name: "terminal escape in the name", body: `{"name":"\u001b[31mRex","categoryId":1}`, status: 400, code: models.CodeInvalidRequest},
		{name: "CR LF in the name", body: `{"name":"Rex\r\nX-Injected: 1","categoryId":1}`, status: 400, code: models.CodeInvalidRequest},
		{name: "bidi override and zero-width space", body: `{"name":"\u202eRex\u200b","categoryId":1}`, status: 400, code: models.CodeInvalidRequest},
		{name: "HTML in the name", body: `{"name":"<script>alert(1)</script>","categoryId":1}`, status: 201, wantName: "<script>alert(1)</script>"},
		{name: "huge category", body: `{"name":"Rex","categoryId":1` + strings.Repeat("0", 1000) + `}`, status: 400, code: models.CodeInvalidRequest},
		{name: "huge exponent", body: `{"name":"Rex","categoryId":1e999999999}`, status: 400, code: models.CodeInvalidRequest},
		{name: "category below int64", body: `{"name":"Rex","categoryId":-9223372036854775809}`, status: 400, code: models.CodeInvalidRequest},
		{name: "tiny fraction", body: `{"name":"Rex","categoryId":1e-999999999}`, status: 400, code: models.CodeInvalidRequest},
		{name: "JSON in text/plain", contentType: "text/plain", body: `{"name":"Rex","categoryId":1}`, status: 415, code: httpcode.UnsupportedMediaType},
		{name: "form body", contentType: "application/x-www-form-urlencoded", body: `name=Rex&categoryId=1`, status: 415, code: httpcode.UnsupportedMediaType},
		{name: "Content-Type with CR LF text", contentType: "application/json%0d%0aX-Injected: 1", body: `{"name":"Rex","categoryId":1}`, status: 415, code: httpcode.UnsupportedMediaType},
	}
	for _, meta := range sqlMeta {
		name, _ := json.Marshal(meta)
		tests = append(tests, bodyCase{name: "SQL in the name " + meta, body: `{"name":` + string(name) + `,"categoryId":1}`, status: 201, wantName: meta})
	}
	forEachSite(t, func(t *testing.T, s *site) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := s.apiClient(s.newKey(t))
				h := http.Header{"Content-Type": {"application/json"}}
				if tt.contentType != "" {
					h.Set("Content-Type", tt.contentType)
				}
				before := countPets(t, s.store)
				r := c.Do("POST", "/v1/pets", h, tt.body)
				if tt.status != http.StatusCreated {
					testkit.WantAPIError(t, "POST /v1/pets", r, tt.status, tt.code)
					if n := countPets(t, s.store); n != before {
						t.Errorf("a refused body changed the pets: %d before, %d after", before, n)
					}
					return
				}
				p := testkit.WantPet(t, "POST /v1/pets", r, http.StatusCreated)
				if p.Name != tt.wantName {
					t.Errorf("created name %q, want %q", p.Name, tt.wantName)
				}
				got := testkit.WantPet(t, "GET the new pet", c.Get("/v1/pets/"+strconv.FormatInt(p.ID, 10)), http.StatusOK)
				if got != p {
					t.Errorf("read back %+v, want %+v", got, p)
				}
			})
		}
	})
}

func TestHostileQueries(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 60<<10) // under the 64 KiB header limit
	huge := strings.Repeat("a", 1<<20)  // far over it
	tests := []struct {
		name   string
		target string
		status int
		code   models.Code // "" for an answer that is not the API's
	}{
		{"NUL in status", "/v1/pets?status=available%00", 400, models.CodeInvalidRequest},
		{"NUL in limit", "/v1/pets?limit=1%00", 400, models.CodeInvalidRequest},
		{"NUL in after", "/v1/pets?after=%00", 400, models.CodeInvalidRequest},
		{"NUL as a parameter name", "/v1/pets?%00=1", 400, models.CodeInvalidRequest},
		{"NUL in the pet id", "/v1/pets/1%00", 400, models.CodeInvalidRequest},
		{"invalid UTF-8 in status", "/v1/pets?status=%ff%fe", 400, models.CodeInvalidRequest},
		{"raw bytes above 0x7f in status", "/v1/pets?status=\xff\xfe", 400, models.CodeInvalidRequest},
		{"invalid UTF-8 in the pet id", "/v1/pets/%c0%ae", 400, models.CodeInvalidRequest},
		{"bad escape in the query", "/v1/pets?limit=%zz", 400, models.CodeInvalidRequest},
		{"semicolon separator", "/v1/pets?limit=1;limit=2", 400, models.CodeInvalidRequest},
		{"CR LF in status", "/v1/pets?status=available%0d%0aSet-Cookie:%20a=b", 400, models.CodeInvalidRequest},
		{"60 KiB status", "/v1/pets?status=" + long, 400, models.CodeInvalidRequest},
		{"60 KiB of parameters", "/v1/pets?" + strings.Repeat("x=1&", 15<<10), 400, models.CodeInvalidRequest}, // over url.ParseQuery's limit
		{"60 KiB pet id", "/v1/pets/" + long, 400, models.CodeInvalidRequest},
		{"60 KiB digits as pet id", "/v1/pets/" + strings.Repeat("9", 60<<10), 400, models.CodeInvalidRequest},
		{"60 KiB path", "/v1/" + long, 404, models.CodeNotFound},
		{"60 KiB static path", "/static/" + long, 404, ""},
		{"60 KiB console path", "/admin/" + long, 404, ""},
		{"1 MiB query", "/v1/pets?status=" + huge, http.StatusRequestHeaderFieldsTooLarge, ""},
		{"1 MiB path", "/v1/pets/" + huge, http.StatusRequestHeaderFieldsTooLarge, ""},
		{"1 MiB console query", "/admin/pets?q=" + huge, http.StatusRequestHeaderFieldsTooLarge, ""},
	}
	forEachSite(t, func(t *testing.T, s *site) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := s.apiClient(s.newKey(t)).Get(tt.target)
				testkit.WantNo5xx(t, testkit.Clip(tt.target), r)
				if tt.code != "" {
					testkit.WantAPIError(t, testkit.Clip(tt.target), r, tt.status, tt.code)
					return
				}
				if r.Status != tt.status {
					t.Fatalf("GET %s: %d, want %d; body %s", testkit.Clip(tt.target), r.Status, tt.status, testkit.Clip(string(r.Body)))
				}
			})
		}
		t.Run("1 MiB header", func(t *testing.T) {
			r := s.apiClient(s.newKey(t)).Do("GET", "/v1/pets", http.Header{"X-Filler": {huge}}, "")
			if r.Status != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("1 MiB header: %s, want 431", r)
			}
		})
	})
}

// saneRequestID is what an echoed X-Request-ID may be: short, and nothing
// a log line or a header could be broken with.
var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func TestHostileRequestID(t *testing.T) {
	t.Parallel()
	forEachSite(t, func(t *testing.T, s *site) {
		// Values a client library can send: the sane ones come back as
		// they are, the others are replaced by a generated id.
		sent := []struct {
			name, value string
			echoed      bool
		}{
			{"plain", "req-123_abc.DEF", true},
			{"64 characters", strings.Repeat("a", 64), true},
			{"65 characters", strings.Repeat("a", 65), false},
			{"space", "abc def", false},
			{"percent-encoded CR LF", "abc%0d%0aSet-Cookie:%20a=b", false},
			{"header-like text", "abc: Set-Cookie: a=b", false},
			{"HTML", "<script>alert(1)</script>", false},
			{"quote", `abc"def`, false},
			{"non-ASCII", "abc\u00e9", false},
			{"NBSP", "abc\u00a0def", false},
			{"Unicode line separator", "abc\u2028Set-Cookie: a=b", false},
			{"empty", "", false},
		}
		for _, tt := range sent {
			t.Run(tt.name, func(t *testing.T) {
				for _, path := range []string{"/healthz", "/v1/pets", "/admin/login", "/static/nope"} {
					r := s.apiClient("").Do("GET", path, http.Header{"X-Request-Id": {tt.value}}, "")
					testkit.WantNo5xx(t, path, r)
					got := r.Header.Values("X-Request-Id")
					if len(got) != 1 || !saneRequestID.MatchString(got[0]) {
						t.Fatalf("GET %s with X-Request-ID %q: echoed %q, want one sane id", path, tt.value, got)
					}
					if tt.echoed != (got[0] == tt.value) {
						t.Errorf("GET %s with X-Request-ID %q: echoed %q (want the same: %v)", path, tt.value, got[0], tt.echoed)
					}
					if c := r.Header.Get("Set-Cookie"); strings.Contains(c, "a=b") {
						t.Errorf("GET %s: Set-Cookie %q appeared", path, c)
					}
				}
			})
		}
		// Raw requests: line breaks and controls no client library sends.
		rawIDs := []struct{ name, header string }{
			{"bare CR", "X-Request-ID: abc\rSet-Cookie: injected=1\r\n"},
			{"bare LF", "X-Request-ID: abc\nSet-Cookie: injected=1\r\n"},
			{"obsolete line folding", "X-Request-ID: abc\r\n Set-Cookie: injected=1\r\n"},
			{"NUL", "X-Request-ID: abc\x00injected\r\n"},
			{"two ids", "X-Request-ID: first\r\nX-Request-ID: second-injected\r\n"},
			{"tab inside", "X-Request-ID: abc\tinjected\r\n"},
		}
		for _, tt := range rawIDs {
			t.Run(tt.name, func(t *testing.T) {
				r := rawExchange(t, s.addr(), "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"+tt.header+"\r\n", true)
				if r.Status != http.StatusOK && r.Status != http.StatusBadRequest {
					t.Fatalf("%d, want 200 or net/http's 400", r.Status)
				}
				for name, vs := range r.Header {
					for _, v := range vs {
						if strings.Contains(strings.ToLower(name+": "+v), "injected") {
							t.Errorf("response header %s: %q carries the injected text", name, v)
						}
					}
				}
				if id := r.Header.Values("X-Request-Id"); r.Status == http.StatusOK && (len(id) != 1 || !saneRequestID.MatchString(id[0])) {
					t.Errorf("X-Request-ID %q, want one sane id", id)
				}
			})
		}
	})
}

func TestHostileLinkHeader(t *testing.T) {
	t.Parallel()
	forEachSite(t, func(t *testing.T, s *site) {
		for i, st := range []models.Status{models.StatusAvailable, models.StatusAvailable, models.StatusSold, models.StatusAvailable} {
			np := models.NewPet{Name: "Pet " + strconv.Itoa(i), CategoryID: 1, Status: st}
			if _, err := s.store.CreatePet(context.Background(), np, "test"); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			name     string
			target   string
			header   http.Header
			status   int
			wantNext string // the next page's query, "" when none
		}{
			{name: "plain", target: "/v1/pets?limit=1", status: 200, wantNext: "after=1&limit=1"},
			{name: "with status", target: "/v1/pets?limit=1&status=available", status: 200, wantNext: "after=1&limit=1&status=available"},
			{name: "unknown parameters are refused", target: "/v1/pets?limit=1&x=%0d%0aSet-Cookie:%20a=b&next=http://evil.example/", status: 400},
			{name: "CR LF in status", target: "/v1/pets?limit=1&status=available%0d%0aSet-Cookie:%20a=b", status: 400},
			{name: "CR LF in limit", target: "/v1/pets?limit=1%0d%0aSet-Cookie:%20a=b", status: 400},
			{name: "CR LF in after", target: "/v1/pets?limit=1&after=0%0d%0a", status: 400},
			{name: "parameter in status", target: "/v1/pets?limit=1&status=available%26after%3D3", status: 400},
			{name: "parameter in limit", target: "/v1/pets?limit=1%26status%3Dsold", status: 400},
			{name: "angle bracket and rel in status", target: "/v1/pets?limit=1&status=available%3E%3B%20rel%3D%22prev%22", status: 400},
			{name: "second after", target: "/v1/pets?limit=1&after=0&after=3", status: 400},
			{name: "semicolon-separated parameters are refused", target: "/v1/pets?limit=1;status=sold", status: 400},
			{name: "foreign forwarded host", target: "/v1/pets?limit=1", header: http.Header{"X-Forwarded-Host": {"evil.example"}}, status: 200, wantNext: "after=1&limit=1"},
			{name: "forwarded proto and prefix", target: "/v1/pets?limit=2", header: http.Header{"X-Forwarded-Proto": {"javascript"}, "X-Forwarded-Prefix": {"//evil.example"}}, status: 200, wantNext: "after=2&limit=2"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := s.apiClient(s.newKey(t)).Do("GET", tt.target, tt.header, "")
				links := r.Header.Values("Link")
				if tt.status != http.StatusOK {
					testkit.WantAPIError(t, tt.target, r, tt.status, models.CodeInvalidRequest)
					if len(links) != 0 {
						t.Errorf("a refused list carries Link %q", links)
					}
					return
				}
				if r.Status != http.StatusOK {
					t.Fatalf("%s", r)
				}
				if tt.wantNext == "" {
					if len(links) != 0 {
						t.Errorf("Link %q on the last page", links)
					}
					return
				}
				if len(links) != 1 {
					t.Fatalf("Link headers %q, want one", links)
				}
				want := `</v1/pets?` + tt.wantNext + `>; rel="next"`
				if links[0] != want || strings.IndexFunc(links[0], unicode.IsControl) >= 0 {
					t.Errorf("Link %q, want %q", links[0], want)
				}
				for name, vs := range r.Header {
					for _, bad := range []string{"evil", "Set-Cookie", "javascript"} {
						if strings.Contains(strings.Join(vs, " "), bad) {
							t.Errorf("header %s %q carries %q", name, vs, bad)
						}
					}
				}
			})
		}
		// The trailing-slash redirects gin makes go to the same path
		// without the slash, whatever X-Forwarded-Prefix says: gin builds
		// them from that header, which any client may send, so the product
		// drops it, and a shared cache never keeps a redirect elsewhere.
		for _, prefix := range []string{"", "//evil.example", "/\\evil.example", "https://evil.example", "/%0d%0aSet-Cookie:a=b", "/..//evil.example"} {
			for path, want := range map[string]string{"/v1/pets/": "/v1/pets", "/admin/": "/admin"} {
				t.Run("redirect of "+path+" with prefix "+prefix, func(t *testing.T) {
					h := http.Header{}
					if prefix != "" {
						h.Set("X-Forwarded-Prefix", prefix)
					}
					r := s.apiClient(s.newKey(t)).Do("GET", path, h, "")
					testkit.WantNo5xx(t, path, r)
					loc := r.Header.Get("Location")
					if r.Status != http.StatusMovedPermanently {
						t.Fatalf("%d, want 301 to %s", r.Status, want)
					}
					if strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") || strings.Contains(loc, ":") || strings.Contains(loc, "\n") {
						t.Fatalf("301 Location %q leaves the site", loc)
					}
					if strings.Contains(r.Header.Get("Set-Cookie"), "a=b") {
						t.Errorf("injected cookie %q", r.Header.Get("Set-Cookie"))
					}
					if loc != want {
						t.Errorf("301 Location %q, want %q", loc, want)
					}
				})
			}
		}
	})
}

func TestHostileSQL(t *testing.T) {
	t.Parallel()
	forEachSite(t, func(t *testing.T, s *site) {
		ctx := context.Background()
		// Pets named with every meta string, and two plain ones.
		names := append([]string{"Rex", "Tom"}, sqlMeta...)
		for _, n := range names {
			if _, err := s.store.CreatePet(ctx, models.NewPet{Name: n, CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
				t.Fatalf("create %q: %v", n, err)
			}
		}
		pets, users := len(names), 1
		keysBefore, err := s.store.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}

		t.Run("API", func(t *testing.T) {
			for _, meta := range sqlMeta {
				t.Run(meta, func(t *testing.T) {
					c := s.apiClient(s.newKey(t))
					q := url.QueryEscape(meta)
					for _, target := range []string{"/v1/pets?status=" + q, "/v1/pets?limit=" + q, "/v1/pets?after=" + q} {
						testkit.WantAPIError(t, "GET "+target, c.Get(target), 400, models.CodeInvalidRequest)
					}
					// An escaped slash is a slash to the router: no such route.
					target := "/v1/pets/" + url.PathEscape(meta)
					if strings.Contains(meta, "/") {
						testkit.WantAPIError(t, "GET "+target, c.Get(target), 404, models.CodeNotFound)
					} else {
						testkit.WantAPIError(t, "GET "+target, c.Get(target), 400, models.CodeInvalidRequest)
					}
					metaJSON, _ := json.Marshal(meta)
					for _, body := range []string{
						`{"name":"Rex","categoryId":1,"status":` + string(metaJSON) + `}`,
						`{"name":"Rex","categoryId":` + string(metaJSON) + `}`,
						`{"name":"Rex","categoryId":1 ` + meta + `}`,
					} {
						testkit.WantAPIError(t, "POST "+body, c.PostJSON("/v1/pets", body), 400, models.CodeInvalidRequest)
					}
				})
			}
		})
		t.Run("API key", func(t *testing.T) {
			// Failed authentications from one address are limited: the
			// first api.DefaultAuthFailureBurst get 401, later ones 429.
			failures := 0
			for _, meta := range sqlMeta {
				for _, auth := range []string{"Bearer " + meta, "Bearer pst_" + strings.ReplaceAll(meta, " ", "")} {
					r := s.apiClient("").Do("GET", "/v1/pets", http.Header{"Authorization": {auth}}, "")
					if failures < api.DefaultAuthFailureBurst {
						testkit.WantAPIError(t, "Authorization: "+auth, r, 401, models.CodeUnauthorized)
					} else if r.Status != 401 {
						testkit.WantAPIError(t, "Authorization: "+auth, r, 429, models.CodeRateLimited)
					}
					failures++
				}
			}
		})

		t.Run("sign-in form", func(t *testing.T) {
			// A few: each failure counts towards the address's limit.
			for _, meta := range []string{`' OR '1'='1`, `"; DROP TABLE pets;--`, `\'`, `%`, `_`} {
				b := s.console()
				if p := b.SignIn(t, meta, meta); p.Status != http.StatusUnauthorized {
					t.Errorf("sign in as %q: %d, want 401", meta, p.Status)
				}
				if p := b.Get("/admin/login?next=" + url.QueryEscape(meta)); p.Status != http.StatusOK {
					t.Errorf("GET /admin/login?next=%s: %d", meta, p.Status)
				}
			}
		})

		b := s.console()
		if p := b.SignIn(t, staffUser, staffPassword); p.Status != http.StatusSeeOther {
			t.Fatalf("sign in: %d %s", p.Status, testkit.Clip(string(p.Body)))
		}
		b.CSRF = testkit.CSRFToken(t, b.Get("/admin/pets"))

		t.Run("console search", func(t *testing.T) {
			for _, meta := range append([]string{"rex", "REX", " Rex "}, sqlMeta...) {
				t.Run(meta, func(t *testing.T) {
					p := b.Get("/admin/pets?q=" + url.QueryEscape(meta))
					if p.Status != http.StatusOK {
						t.Fatalf("search %q: %d", meta, p.Status)
					}
					var got []string
					testkit.HTMLDoc(t, p).Find(`[data-testid="pet-row"] [data-testid="pet-name"]`).Each(func(_ int, s *goquery.Selection) {
						got = append(got, s.Text())
					})
					// Taken as text by the search's own rule, newest first.
					var want []string
					for i := len(names) - 1; i >= 0; i-- {
						if asciiSearchMatches(names[i], meta) {
							want = append(want, names[i])
						}
					}
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("search %q found %q, want %q", meta, got, want)
					}
				})
			}
		})

		t.Run("console parameters", func(t *testing.T) {
			for _, meta := range sqlMeta {
				t.Run(meta, func(t *testing.T) {
					q := url.QueryEscape(meta)
					for _, target := range []string{"/admin/pets?status=" + q, "/admin/pets?after=" + q, "/admin/pets?before=" + q} {
						if p := b.Get(target); p.Status != http.StatusBadRequest {
							t.Errorf("GET %s: %d, want 400", target, p.Status)
						}
					}
					if p := b.Get("/admin/api-keys/" + url.PathEscape(meta) + "/revoke"); p.Status != http.StatusNotFound {
						t.Errorf("GET revoke page of key %q: %d, want 404", meta, p.Status)
					}
					if p := b.Post("/admin/api-keys/"+url.PathEscape(meta)+"/revoke", url.Values{}); p.Status != http.StatusNotFound {
						t.Errorf("revoke key %q: %d, want 404", meta, p.Status)
					}
					if p := b.Post("/admin/pets/"+url.PathEscape(meta)+"/status", url.Values{"status": {"sold"}}); p.Status != http.StatusNotFound {
						t.Errorf("status of pet %q: %d, want 404", meta, p.Status)
					}
					if p := b.Post("/admin/pets/1/status", url.Values{"status": {meta}}); p.Status != http.StatusBadRequest {
						t.Errorf("status %q for pet 1: %d, want 400", meta, p.Status)
					}
					if p := b.Post("/admin/pets", url.Values{"name": {"Rex"}, "categoryId": {meta}}); p.Status != http.StatusUnprocessableEntity {
						t.Errorf("add pet with category %q: %d, want 422", meta, p.Status)
					}
					if p := b.Post("/admin/pets", url.Values{"name": {"Rex"}, "categoryId": {"1"}, "status": {meta}}); p.Status != http.StatusUnprocessableEntity {
						t.Errorf("add pet with status %q: %d, want 422", meta, p.Status)
					}
					for _, target := range []string{"/admin/audit?action=" + q, "/admin/audit?target=" + q, "/admin/audit?before=" + q} {
						if p := b.Get(target); p.Status != http.StatusBadRequest {
							t.Errorf("GET %s: %d, want 400", target, p.Status)
						}
					}
					// The actor filter is an exact match (case-insensitive on
					// MariaDB): the failed sign-ins above are the only rows
					// it may find.
					p := b.Get("/admin/audit?actor=" + q)
					if p.Status != http.StatusOK {
						t.Errorf("GET /admin/audit?actor=%s: %d, want 200", q, p.Status)
					}
					testkit.HTMLDoc(t, p).Find(`[data-testid="audit-actor"]`).Each(func(_ int, s *goquery.Selection) {
						if !strings.EqualFold(s.Text(), meta) {
							t.Errorf("audit filtered by actor %q shows actor %q", meta, s.Text())
						}
					})
					// Some of them ("_", "--") are valid usernames.
					want := http.StatusUnprocessableEntity
					if _, err := models.ValidateUsername(meta); err == nil {
						want = http.StatusSeeOther
						users++
					}
					if p := b.Post("/admin/users", url.Values{"username": {meta}, "password": {meta + meta + "0123456789"}}); p.Status != want {
						t.Errorf("add staff %q: %d, want %d", meta, p.Status, want)
					}
				})
			}
		})

		t.Run("console names are stored literally", func(t *testing.T) {
			for _, meta := range sqlMeta {
				t.Run(meta, func(t *testing.T) {
					if p := b.Post("/admin/pets", url.Values{"name": {meta}, "categoryId": {"2"}}); p.Status != http.StatusSeeOther {
						t.Fatalf("add pet %q: %d %s", meta, p.Status, testkit.Clip(string(p.Body)))
					}
					pets++
					newest, _, err := s.store.ListPets(ctx, models.PetQuery{Limit: 1, Before: 1 << 62})
					if err != nil || len(newest) != 1 || newest[0].Name != meta {
						t.Errorf("newest pet %+v (%v), want the name %q", newest, err, meta)
					}
					p := b.Post("/admin/api-keys", url.Values{"name": {meta}, "scope": {"pets:read", "pets:write"}})
					if p.Status != http.StatusOK {
						t.Fatalf("add key %q: %d", meta, p.Status)
					}
					if got := strings.TrimSpace(testkit.HTMLDoc(t, p).Find(`[data-testid="api-key-row"] th`).First().Text()); got != meta {
						t.Errorf("newest key shown as %q, want %q", got, meta)
					}
				})
			}
		})

		// Nothing was dropped, changed or added beyond what was asked.
		if n := countPets(t, s.store); n != pets {
			t.Errorf("%d pets, want %d", n, pets)
		}
		if n, err := s.store.CountUsers(ctx); err != nil || n != int64(users) {
			t.Errorf("%d staff accounts (%v), want %d", n, err, users)
		}
		keys, err := s.store.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.RevokedAt != nil {
				t.Errorf("key %q was revoked", k.Name)
			}
		}
		if len(keys) < len(keysBefore)+len(sqlMeta) {
			t.Errorf("%d keys, want at least %d", len(keys), len(keysBefore)+len(sqlMeta))
		}
		if p := b.Get("/admin/pets"); p.Status != http.StatusOK {
			t.Errorf("the pets page after all that: %d", p.Status)
		}
	})
}

func TestHostileStaticPaths(t *testing.T) {
	t.Parallel()
	forEachSite(t, func(t *testing.T, s *site) {
		anon := s.apiClient("")
		if r := anon.Get("/static/css/app.css"); r.Status != http.StatusOK {
			t.Fatalf("the control file /static/css/app.css: %s", r)
		}
		// Text of files that must never be served.
		leaks := []string{"module petstore", "package main", "package static", "package models", "root:x:0:0", "# Petstore", "go:embed"}
		targets := []string{
			"/static/../main.go",
			"/static/../../../../etc/passwd",
			"/static/%2e%2e/go.mod",
			"/static/%2E%2E/go.mod",
			"/static/..%2fgo.mod",
			"/static/..%2Fmain.go",
			"/static/%2e%2e%2fgo.mod",
			"/static/%252e%252e%252fgo.mod",
			"/static/%252e%252e/go.mod",
			"/static/..%252fgo.mod",
			"/static/..\\go.mod",
			"/static/..%5cgo.mod",
			"/static/....//go.mod",
			"/static/.%2e/go.mod",
			"/static/%c0%ae%c0%ae/go.mod",
			"/static/%c0%af..%c0%afgo.mod",
			"/static/css/../../main.go",
			"/static/css/..%2f..%2fmain.go",
			"/static/css/%2e%2e/%2e%2e/go.mod",
			"/static//etc/passwd",
			"/static/%2fetc%2fpasswd",
			"/static/static.go",
			"/static/static_test.go",
			"/static/vendor/README.md",
			"/static/css",
			"/static/css/",
			"/static/",
			"/static/.",
			"/static/./css/../static.go",
			"/static/css/app.css%00.go",
			"/static/css/app.css/../../main.go",
			"/static/file:///etc/passwd",
			"/static/C:%5cWindows%5cwin.ini",
		}
		for _, target := range targets {
			t.Run(target, func(t *testing.T) {
				for _, method := range []string{"GET", "HEAD"} {
					r := anon.Do(method, target, nil, "")
					if r.Status != http.StatusNotFound {
						t.Errorf("%s %s: %d, want 404; body %s", method, target, r.Status, testkit.Clip(string(r.Body)))
					}
					for _, leak := range leaks {
						if bytes.Contains(r.Body, []byte(leak)) {
							t.Errorf("%s %s leaks %q", method, target, leak)
						}
					}
				}
			})
		}
	})
}

func TestHostileMethods(t *testing.T) {
	t.Parallel()
	forEachSite(t, func(t *testing.T, s *site) {
		paths := []string{"/v1/pets", "/v1/pets/1", "/v1/openapi.json", "/healthz", "/readyz"}
		methods := []string{"TRACE", "OPTIONS", "PUT", "DELETE", "PATCH", "PROPFIND", "FOO", "get"}
		for _, path := range paths {
			t.Run(path, func(t *testing.T) {
				c := s.apiClient(s.newKey(t))
				for _, method := range methods {
					r := c.Do(method, path, nil, `{"name":"Rex","categoryId":1}`)
					testkit.WantAPIError(t, method+" "+path, r, http.StatusMethodNotAllowed, httpcode.MethodNotAllowed)
					if r.Header.Get("Allow") == "" {
						t.Errorf("%s %s: no Allow header", method, path)
					}
					if bytes.Contains(r.Body, []byte("Authorization")) || bytes.Contains(r.Body, []byte(c.Key)) {
						t.Errorf("%s %s echoes the request: %s", method, path, r.Body)
					}
				}
				if strings.HasPrefix(path, "/v1/pets") {
					// Authentication comes first, whatever the method.
					testkit.WantAPIError(t, "TRACE without a key", s.apiClient("").Do("TRACE", path, nil, ""), http.StatusUnauthorized, models.CodeUnauthorized)
				}
			})
		}
		t.Run("console", func(t *testing.T) {
			for _, method := range []string{"TRACE", "PUT", "DELETE", "FOO"} {
				r := s.apiClient("").Do(method, "/admin/pets", nil, "")
				if r.Status != http.StatusMethodNotAllowed && r.Status != http.StatusForbidden {
					t.Errorf("%s /admin/pets: %d, want 405 (or 403 from the CSRF check)", method, r.Status)
				}
			}
		})
		t.Run("raw", func(t *testing.T) {
			for _, tt := range []struct {
				line   string
				status int // 0: any but a 5xx
			}{
				{"OPTIONS * HTTP/1.1", 0},
				{"CONNECT /v1/pets HTTP/1.1", 0},
				{"TRACE /v1/pets HTTP/1.1", http.StatusUnauthorized},
				{"GET /v1/pets HTTP/1.0", http.StatusUnauthorized},
				{"GET /v1/pets HTTP/9.9", http.StatusHTTPVersionNotSupported}, // net/http's own answer
				{"GET /v1/pets", http.StatusBadRequest},
				{"GET http://evil.example/v1/pets HTTP/1.1", http.StatusUnauthorized},
				{"GET v1/pets HTTP/1.1", http.StatusBadRequest},
			} {
				r := rawExchange(t, s.addr(), tt.line+"\r\nHost: x\r\nConnection: close\r\n\r\n", true)
				if tt.status != 0 && r.Status != tt.status {
					t.Errorf("%s: %d, want %d", tt.line, r.Status, tt.status)
				} else if tt.status == 0 {
					testkit.WantNo5xx(t, tt.line, r)
				}
			}
		})
	})
}

func TestHostileTruncatedBodies(t *testing.T) {
	t.Parallel()
	forEachSite(t, func(t *testing.T, s *site) {
		const body = `{"name":"Rex","categoryId":1}`
		head := func(key, extra string) string {
			return "POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
				"\r\nContent-Type: application/json\r\nConnection: close\r\n" + extra + "\r\n"
		}
		tests := []struct {
			name    string
			request func(key string) string
			code    models.Code // "" when net/http refuses the request itself
		}{
			{"Content-Length larger than the body", func(k string) string {
				return head(k, "Content-Length: 100\r\n") + body
			}, models.CodeInvalidRequest},
			{"Content-Length over the limit, short body", func(k string) string {
				return head(k, fmt.Sprintf("Content-Length: %d\r\n", 2*api.MaxBodyBytes)) + body
			}, models.CodeInvalidRequest},
			{"no body at all", func(k string) string { return head(k, "Content-Length: 10\r\n") }, models.CodeInvalidRequest},
			{"chunked, cut off", func(k string) string {
				return head(k, "Transfer-Encoding: chunked\r\n") + "1d\r\n" + body[:10]
			}, models.CodeInvalidRequest},
			{"chunked, no last chunk", func(k string) string {
				return head(k, "Transfer-Encoding: chunked\r\n") + fmt.Sprintf("%x\r\n%s\r\n", len(body), body)
			}, models.CodeInvalidRequest},
			{"chunked, bad size", func(k string) string {
				return head(k, "Transfer-Encoding: chunked\r\n") + "zz\r\n" + body + "\r\n0\r\n\r\n"
			}, models.CodeInvalidRequest},
			{"negative Content-Length", func(k string) string { return head(k, "Content-Length: -5\r\n") + body }, ""},
			{"Content-Length not a number", func(k string) string { return head(k, "Content-Length: 1e3\r\n") + body }, ""},
			{"Content-Length beyond int64", func(k string) string {
				return head(k, "Content-Length: 99999999999999999999\r\n") + body
			}, ""},
			{"two different Content-Length", func(k string) string {
				return head(k, "Content-Length: 5\r\nContent-Length: 29\r\n") + body
			}, ""},
			{"Content-Length and chunked", func(k string) string {
				return head(k, "Content-Length: 29\r\nTransfer-Encoding: chunked\r\n") + body
			}, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				key := s.newKey(t)
				before := countPets(t, s.store)
				start := time.Now()
				r := rawExchange(t, s.addr(), tt.request(key), true)
				if tt.code != "" {
					testkit.WantAPIError(t, tt.name, r, http.StatusBadRequest, tt.code)
				} else if r.Status != http.StatusBadRequest {
					t.Errorf("%d, want net/http's 400", r.Status)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("the answer took %v", d)
				}
				if n := countPets(t, s.store); n != before {
					t.Errorf("a cut-off body stored a pet")
				}
			})
		}
	})
}

// TestHostileSlowBody: a client that announces a body and then stalls is
// cut off by the server's read timeout with a 400, not held forever. The
// timeout is a second here (serve's is 30 s) to keep the test quick.
func TestHostileSlowBody(t *testing.T) {
	t.Parallel()
	forEachSite(t, func(t *testing.T, s *site) {
		slow := serveOnLoopback(t, s.handler, s.log, func(c *http.Server) { c.ReadTimeout = time.Second })
		start := time.Now()
		req := "POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + s.newKey(t) +
			"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"
		r := rawExchange(t, slow.Listener.Addr().String(), req, false)
		testkit.WantAPIError(t, "stalled body", r, http.StatusBadRequest, models.CodeInvalidRequest)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the answer took %v", d)
		}
	})
}

// TestHostileSignInNames: odd usernames on the sign-in form are a wrong
// username (401), never a 5xx, on both databases.
func TestHostileSignInNames(t *testing.T) {
	t.Parallel()
	names := []struct{ name, username string }{
		{"1000 characters", strings.Repeat("a", 1000)},
		{"80 bytes of é", strings.Repeat("é", 40)},
		// A failed sign-in is recorded under the name cut to 64
		// characters: cut at byte 64, these would be broken UTF-8, which
		// MariaDB refuses (a 500). 0xff lowercases to the 3-byte U+FFFD.
		{"é across byte 64", strings.Repeat("a", 63) + "é"},
		{"0xff across byte 64", strings.Repeat("a", 63) + "\xff"},
		{"invalid UTF-8", "\xff\xfe"},
		{"NUL", "alice\x00"},
		{"terminal escape", "\x1b[2Jalice"},
		{"CR LF", "alice\r\nX-Injected: 1"},
		{"the staff name with a trailing NBSP", staffUser + "\u00a0"},
	}
	forEachSite(t, func(t *testing.T, s *site) {
		for _, tt := range names {
			t.Run(tt.name, func(t *testing.T) {
				if r := s.console().SignIn(t, tt.username, "not the password at all"); r.Status != http.StatusUnauthorized {
					t.Errorf("sign in as %q: %s, want 401", tt.username, r)
				}
			})
		}
		// The real account still signs in: none of that counted against it.
		if r := s.console().SignIn(t, staffUser, staffPassword); r.Status != http.StatusSeeOther {
			t.Errorf("sign in as %s afterwards: %s, want 303", staffUser, r)
		}
	})
}

// TestHostileControlCharacters sends NUL, terminal escapes, line breaks
// and invalid UTF-8 in every text field of the console: each is refused
// (422; sign-in is TestHostileSignInNames) or, in the search box and the
// audit actor filter, searched for literally;
// never a 5xx, and nothing with such a character is stored.
func TestHostileControlCharacters(t *testing.T) {
	t.Parallel()
	values := []string{"a\x00b", "\x1b[2Jx", "a\r\nb", "a\tb", "a\u0085b", "\xff\xfe", "\xed\xa0\x80", "\xf0\x9f\x90"}
	forEachSite(t, func(t *testing.T, s *site) {
		b := s.console()
		if r := b.SignIn(t, staffUser, staffPassword); r.Status != http.StatusSeeOther {
			t.Fatalf("sign in: %s", r)
		}
		b.CSRF = testkit.CSRFToken(t, b.Get("/admin/pets"))
		for _, v := range values {
			t.Run(fmt.Sprintf("%q", v), func(t *testing.T) {
				r := b.Get("/admin/pets?q=" + url.QueryEscape(v))
				if n := testkit.HTMLDoc(t, r).Find(`[data-testid="pet-row"]`).Length(); r.Status != http.StatusOK || n != 0 {
					t.Errorf("search %q: %d with %d rows, want 200 and none", v, r.Status, n)
				}
				r = b.Get("/admin/audit?actor=" + url.QueryEscape(v))
				if n := testkit.HTMLDoc(t, r).Find(`[data-testid="audit-row"]`).Length(); r.Status != http.StatusOK || n != 0 {
					t.Errorf("audit by actor %q: %d with %d rows, want 200 and none", v, r.Status, n)
				}
				if r := b.Post("/admin/pets", url.Values{"name": {v}, "categoryId": {"1"}}); r.Status != http.StatusUnprocessableEntity {
					t.Errorf("pet named %q: %s, want 422", v, r)
				}
				if r := b.Post("/admin/users", url.Values{"username": {v}, "password": {"a long enough password"}}); r.Status != http.StatusUnprocessableEntity {
					t.Errorf("staff named %q: %s, want 422", v, r)
				}
				// The scopes as the form comes: only the name is refused.
				r = b.Post("/admin/api-keys", url.Values{"name": {v}, "scope": {"pets:read", "pets:write"}})
				testkit.WantNo5xx(t, "key name", r)
				if r.Status != http.StatusUnprocessableEntity {
					t.Errorf("key named %q: %s, want 422", v, r)
				}
			})
		}
		if n := countPets(t, s.store); n != 0 {
			t.Errorf("%d pets stored, want none", n)
		}
		if n, err := s.store.CountUsers(context.Background()); err != nil || n != 1 {
			t.Errorf("%d staff accounts (%v), want 1", n, err)
		}
	})
}
