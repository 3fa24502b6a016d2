package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// compressionEnv is the whole product over loopback with 60 pets, an API
// key, and an admin signed in to the console.
type compressionEnv struct {
	t       *testing.T
	srv     *httptest.Server
	key     string
	console *testkit.Console
	store   *models.Store
}

func newCompressionEnv(t *testing.T, s *models.Store) *compressionEnv {
	t.Helper()
	ctx := context.Background()
	for i := range 60 {
		if _, err := s.CreatePet(ctx, models.NewPet{Name: fmt.Sprintf("Pet %02d", i), CategoryID: int64(i%3 + 1), Status: models.StatusAvailable}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	_, key, err := s.CreateAPIKey(ctx, "partner", "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUserWithRole(ctx, "alice", "correct horse battery", models.RoleAdmin, "test"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(testkit.NewHandler(t, server.Deps{Store: s}))
	t.Cleanup(srv.Close)
	return &compressionEnv{t: t, srv: srv, key: key, store: s, console: testkit.SignedIn(t, srv.URL, "alice", "correct horse battery")}
}

// get sends GET (or another method) with the given Accept-Encoding ("" for
// none), the API key or the console's cookie, and returns the answer as
// sent: a header set by hand keeps Go's transport from decompressing.
func (e *compressionEnv) send(method, path, acceptEncoding string, form url.Values, header ...string) testkit.Reply {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	if strings.HasPrefix(path, "/v1/") {
		req.Header.Set("Authorization", "Bearer "+e.key)
	} else {
		req.Header.Set("Cookie", e.console.Cookie(e.t))
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	r := testkit.Do(&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, req)
	if r.Err != nil {
		e.t.Fatal(r.Err)
	}
	return r
}

// decoded is r's body with its Content-Encoding undone.
func decoded(t *testing.T, r testkit.Reply) []byte {
	t.Helper()
	switch ce := r.Header.Get("Content-Encoding"); ce {
	case "":
		return r.Body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("gunzip: %v", err)
		}
		return b
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("unzstd: %v", err)
		}
		return b
	default:
		t.Fatalf("Content-Encoding %q", ce)
		return nil
	}
}

func varies(r testkit.Reply) bool {
	for _, v := range r.Header.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Accept-Encoding") {
				return true
			}
		}
	}
	return false
}

// An answer of 1 KiB or more to a GET that accepts compression goes out
// compressed, zstd or gzip as the client prefers, and decodes to the very
// bytes of the plain answer; a request without Accept-Encoding, a HEAD, and
// a small answer get the plain bytes.
func TestCompressedAnswers(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newCompressionEnv(t, s)
		const list = "/v1/pets?limit=60"
		plain := e.send("GET", list, "", nil)
		if plain.Status != http.StatusOK || len(plain.Body) < 1024 {
			t.Fatalf("GET %s: %d, %d bytes; want 200 and over 1 KiB", list, plain.Status, len(plain.Body))
		}
		if ce := plain.Header.Get("Content-Encoding"); ce != "" || varies(plain) || plain.Header.Get("Content-Length") == "" {
			t.Errorf("no Accept-Encoding: Content-Encoding %q, Vary %q, Content-Length %q; want the plain answer as before",
				ce, plain.Header.Values("Vary"), plain.Header.Get("Content-Length"))
		}
		tag := plain.Header.Get("Etag")

		for _, tc := range []struct{ accept, want string }{
			{"gzip", "gzip"},
			{"gzip, deflate, br, zstd", "zstd"},
			{"zstd", "zstd"},
			{"gzip;q=1, zstd;q=0.5", "gzip"},
			{"br", ""},
			{"identity", ""},
		} {
			r := e.send("GET", list, tc.accept, nil)
			if got := r.Header.Get("Content-Encoding"); got != tc.want {
				t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", tc.accept, got, tc.want)
				continue
			}
			if !bytes.Equal(decoded(t, r), plain.Body) {
				t.Errorf("Accept-Encoding %q: the body decodes to other bytes than the plain answer's", tc.accept)
			}
			if tc.want == "" {
				continue
			}
			if len(r.Body) >= len(plain.Body)/2 {
				t.Errorf("Accept-Encoding %q: %d bytes for %d plain", tc.accept, len(r.Body), len(plain.Body))
			}
			if cl := r.Header.Get("Content-Length"); !varies(r) || (cl != "" && cl != fmt.Sprint(len(r.Body))) {
				t.Errorf("Accept-Encoding %q: Vary %q, Content-Length %q", tc.accept, r.Header.Values("Vary"), r.Header.Get("Content-Length"))
			}
			// The compressed bytes are another representation: its tag is
			// the weak form of the plain one, and revalidates with it.
			if got := r.Header.Get("Etag"); got != "W/"+tag {
				t.Errorf("Accept-Encoding %q: ETag %q, want W/%s", tc.accept, got, tag)
			}
			// The 304 carries the tag its 200 did.
			if nm := e.send("GET", list, tc.accept, nil, "If-None-Match", r.Header.Get("Etag")); nm.Status != http.StatusNotModified || len(nm.Body) != 0 ||
				nm.Header.Get("Etag") != "W/"+tag {
				t.Errorf("Accept-Encoding %q, If-None-Match its tag: %d, %d bytes, ETag %q; want 304, W/%s", tc.accept, nm.Status, len(nm.Body), nm.Header.Get("Etag"), tag)
			}
		}

		// HEAD has no body to compress: its headers are the plain GET's.
		head := e.send("HEAD", list, "gzip", nil)
		if head.Status != http.StatusOK || head.Header.Get("Content-Encoding") != "" || head.Header.Get("Etag") != tag {
			t.Errorf("HEAD: %d, Content-Encoding %q, ETag %q", head.Status, head.Header.Get("Content-Encoding"), head.Header.Get("Etag"))
		}
		// Under 1 KiB, compression gains nothing; the tag is weak all the
		// same, as for every answer to a request that accepts compression.
		small := e.send("GET", "/v1/pets?limit=1", "gzip", nil)
		if small.Status != http.StatusOK || small.Header.Get("Content-Encoding") != "" || len(small.Body) >= 1024 ||
			!strings.HasPrefix(small.Header.Get("Etag"), `W/"`) {
			t.Errorf("a small list: %d, Content-Encoding %q, %d bytes, ETag %q", small.Status, small.Header.Get("Content-Encoding"), len(small.Body), small.Header.Get("Etag"))
		}
		if plainSmall := e.send("GET", "/v1/pets?limit=1", "", nil); "W/"+plainSmall.Header.Get("Etag") != small.Header.Get("Etag") {
			t.Errorf("a small list's tags: %q plain, %q accepting gzip", plainSmall.Header.Get("Etag"), small.Header.Get("Etag"))
		}

		// A console page and the CSV export are compressed; the export is
		// streamed a chunk at a time, each flushed through the compressor.
		pets := e.send("GET", "/admin/pets", "gzip", nil)
		if pets.Status != http.StatusOK || pets.Header.Get("Content-Encoding") != "gzip" || !varies(pets) {
			t.Errorf("GET /admin/pets: %d, Content-Encoding %q, Vary %q", pets.Status, pets.Header.Get("Content-Encoding"), pets.Header.Values("Vary"))
		} else if html := string(decoded(t, pets)); !strings.Contains(html, "Pet 59") || !strings.HasSuffix(strings.TrimSpace(html), "</html>") {
			t.Errorf("GET /admin/pets decodes to a page without its pets or its end:\n%s", testkit.Tail(html, 5))
		}
		csv := e.send("GET", "/admin/pets/export.csv", "gzip", nil)
		if csv.Status != http.StatusOK || csv.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("GET /admin/pets/export.csv: %d, Content-Encoding %q", csv.Status, csv.Header.Get("Content-Encoding"))
		} else if rows := strings.Count(string(decoded(t, csv)), "\r\n"); rows != 61 {
			t.Errorf("the compressed export has %d lines, want the header and 60 pets", rows)
		}
		docs := e.send("GET", "/docs", "zstd", nil)
		if docs.Status != http.StatusOK || (len(decoded(t, docs)) >= 1024) != (docs.Header.Get("Content-Encoding") == "zstd") {
			t.Errorf("GET /docs: %d, Content-Encoding %q for %d bytes", docs.Status, docs.Header.Get("Content-Encoding"), len(decoded(t, docs)))
		}
	})
}

// The change feed's long poll still waits and answers through the
// compressing writer.
func TestCompressedLongPoll(t *testing.T) {
	t.Parallel()
	e := newCompressionEnv(t, modelstest.Open(t, models.DriverSQLite))
	first := e.send("GET", "/v1/events?limit=100", "", nil)
	_, next, err := testkit.EventsPage("/v1/events", first)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(next)
	q := u.Query()
	q.Set("wait", "5")
	u.RawQuery = q.Encode()
	done := make(chan testkit.Reply, 1)
	go func() { done <- e.send("GET", u.RequestURI(), "gzip", nil) }()
	time.Sleep(300 * time.Millisecond) // let the poll start waiting; the answer is awaited below, whatever the timing
	if _, err := e.store.CreatePet(context.Background(), models.NewPet{Name: "Latecomer", CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	events, _, err := testkit.EventsPage(u.RequestURI(), testkit.Reply{Status: r.Status, Header: r.Header, Body: decoded(t, r)})
	if err != nil || len(events) != 1 {
		t.Fatalf("the long poll answered %v, %d events: %s", err, len(events), r)
	}
}

// BREACH: every secret the console shows once is in the answer to the POST
// that made it, next to text the requester typed; those answers are never
// compressed. The CSRF token that every page carries is masked afresh in
// each answer instead, so the pages stay compressed and a token from any
// of them works.
func TestSecretsShownOnceAreNotCompressed(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newCompressionEnv(t, s)
		ctx := context.Background()
		bob, err := s.CreateUserWithRole(ctx, "bob", "another long password", models.RoleEditor, "test")
		if err != nil {
			t.Fatal(err)
		}
		keysPage := e.send("GET", "/admin/api-keys", "gzip", nil)
		if keysPage.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("GET /admin/api-keys: Content-Encoding %q, want gzip", keysPage.Header.Get("Content-Encoding"))
		}
		tok := testkit.FormCSRF(testkit.HTMLDoc(t, testkit.Reply{Status: keysPage.Status, Body: decoded(t, keysPage)}))
		again := e.send("GET", "/admin/api-keys", "gzip", nil)
		tok2 := testkit.FormCSRF(testkit.HTMLDoc(t, testkit.Reply{Status: again.Status, Body: decoded(t, again)}))
		if tok == "" || tok == tok2 {
			t.Fatalf("two answers carry the CSRF tokens %q and %q: want two different masks", tok, tok2)
		}

		secrets := []struct {
			name, path string
			form       url.Values
			header     []string
			testid     string
		}{
			{"new API key", "/admin/api-keys", url.Values{"csrf_token": {tok}, "name": {strings.Repeat("typed by the requester ", 3)},
				"scope": {"pets:read"}}, nil, "new-key"},
			{"new API key, htmx", "/admin/api-keys", url.Values{"name": {"pst_guess"}, "scope": {"pets:read"}},
				[]string{"HX-Request", "true", "X-CSRF-Token", tok2}, "new-key"},
			{"one-time password", fmt.Sprintf("/admin/users/%d/reset-password", bob.ID), url.Values{"csrf_token": {tok2}, "confirm": {"yes"}}, nil, "one-time-password"},
		}
		for _, sc := range secrets {
			r := e.send("POST", sc.path, "gzip, zstd", sc.form, sc.header...)
			if r.Status != http.StatusOK {
				t.Errorf("%s: POST %s: %s", sc.name, sc.path, r)
				continue
			}
			if ce := r.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("%s: the answer that shows it is compressed (%s)", sc.name, ce)
			}
			if len(r.Body) < 1024 || testkit.HTMLDoc(t, r).Find(`[data-testid="`+sc.testid+`"]`).Length() != 1 {
				t.Errorf("%s: %d bytes without the secret (the test shows nothing)", sc.name, len(r.Body))
			}
		}
	})
}
