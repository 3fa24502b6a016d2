package static_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"petstore/static"
)

func TestPathIsContentHashed(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"css/app.css", "js/app.js", "vendor/htmx-2.0.11.min.js", "vendor/pico-2.1.1.min.css",
		"vendor/swagger-ui-5.35.0/swagger-ui-bundle.js", "vendor/swagger-ui-5.35.0/swagger-ui.css"} {
		p := static.Path(name)
		ext := name[strings.LastIndex(name, "."):]
		want := regexp.MustCompile(`^/static/` + regexp.QuoteMeta(strings.TrimSuffix(name, ext)) + `\.[0-9a-f]{10}` + regexp.QuoteMeta(ext) + `$`)
		if !want.MatchString(p) {
			t.Errorf("Path(%q) = %q, want a content-hashed name", name, p)
		}
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.StripPrefix("", static.Handler()))
	defer srv.Close()
	tests := []struct {
		name, path string
		status     int
		cache      string
		ctype      string
	}{
		{"hashed css", static.Path("css/app.css"), 200, "public, max-age=31536000, immutable", "text/css; charset=utf-8"},
		{"hashed js", static.Path("vendor/htmx-2.0.11.min.js"), 200, "public, max-age=31536000, immutable", "text/javascript; charset=utf-8"},
		{"plain name revalidates", "/static/css/app.css", 200, "no-cache", "text/css; charset=utf-8"},
		{"hashed, never linked in this process", "/static/vendor/swagger-ui-5.35.0/swagger-ui." + diskHash(t, "vendor/swagger-ui-5.35.0/swagger-ui.css") + ".css",
			200, "public, max-age=31536000, immutable", "text/css; charset=utf-8"},
		{"wrong hash", "/static/css/app.0000000000.css", 404, "", ""},
		{"short hash", "/static/css/app.00000.css", 404, "", ""},
		{"hash of nothing", "/static/.0000000000.css", 404, "", ""},
		{"unknown", "/static/nope.js", 404, "", ""},
		{"traversal", "/static/../static.go", 404, "", ""},
		{"encoded traversal", "/static/%2e%2e/static.go", 404, "", ""},
		{"source file", "/static/static.go", 404, "", ""},
		{"vendor readme", "/static/vendor/README.md", 404, "", ""},
		{"directory", "/static/css/", 404, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL+tt.path, nil)
			res, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.status)
			}
			if tt.status != 200 {
				return
			}
			if got := res.Header.Get("Cache-Control"); got != tt.cache {
				t.Errorf("Cache-Control %q, want %q", got, tt.cache)
			}
			if got := res.Header.Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type %q, want %q", got, tt.ctype)
			}
			if res.Header.Get("ETag") == "" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no ETag or nosniff")
			}
		})
	}
	// A cached copy is revalidated cheaply.
	req, _ := http.NewRequest("GET", srv.URL+static.Path("css/app.css"), nil)
	res, _ := http.DefaultClient.Do(req)
	res.Body.Close()
	req.Header.Set("If-None-Match", res.Header.Get("ETag"))
	res, _ = http.DefaultClient.Do(req)
	res.Body.Close()
	if res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
	}
}

// diskHash is the hash a hashed name carries for the file at name in the
// source tree, computed here, independently of the package: a client that
// kept a hashed URL from another instance or an earlier start asks for it
// before this process has linked the file.
func diskHash(t *testing.T, name string) string {
	t.Helper()
	body, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:5])
}
