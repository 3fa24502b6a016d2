package static_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"

	"petstore/static"
)

// get requests path with Accept-Encoding as given ("" for none) and
// returns the answer as sent (the header set by hand keeps Go's transport
// from decompressing it).
func get(t *testing.T, srv *httptest.Server, method, path, acceptEncoding string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func decode(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch coding {
	case "":
		return b
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	default:
		t.Fatalf("Content-Encoding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", coding, err)
	}
	return out
}

// The files are served compressed to clients that accept it, zstd first,
// each coding a representation of its own (Content-Encoding, its own ETag,
// Vary), decoding to the very bytes of the embedded file, with the caching
// headers of the plain file.
func TestCompressedFiles(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(static.Handler())
	defer srv.Close()
	for _, name := range []string{"vendor/swagger-ui-5.35.0/swagger-ui-bundle.js", "vendor/pico-2.1.1.min.css", "css/app.css", "vendor/htmx-2.0.11.min.js"} {
		disk, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		path := static.Path(name)
		plain, plainBody := get(t, srv, "GET", path, "")
		tag := plain.Header.Get("ETag")
		if plain.Header.Get("Content-Encoding") != "" || !bytes.Equal(plainBody, disk) || plain.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s without Accept-Encoding: Content-Encoding %q, Vary %q, %d bytes of %d", name,
				plain.Header.Get("Content-Encoding"), plain.Header.Get("Vary"), len(plainBody), len(disk))
		}
		// Where both are accepted, the smaller of the two is sent.
		_, zb := get(t, srv, "GET", path, "zstd")
		_, gb := get(t, srv, "GET", path, "gzip")
		smaller := "zstd"
		if len(gb) < len(zb) {
			smaller = "gzip"
		}
		for _, tc := range []struct{ accept, want string }{
			{"gzip, deflate, br, zstd", smaller},
			{"zstd", "zstd"},
			{"gzip", "gzip"},
			{"zstd;q=0, gzip", "gzip"},
			{"gzip;q=0.000, zstd", "zstd"},
			{"*", smaller},
			{"gzip;q=0", ""},
			{"br", ""},
		} {
			res, body := get(t, srv, "GET", path, tc.accept)
			ce := res.Header.Get("Content-Encoding")
			if res.StatusCode != http.StatusOK || ce != tc.want {
				t.Errorf("%s, Accept-Encoding %q: %d, Content-Encoding %q; want 200, %q", name, tc.accept, res.StatusCode, ce, tc.want)
				continue
			}
			if !bytes.Equal(decode(t, ce, body), disk) {
				t.Errorf("%s, Accept-Encoding %q: decodes to other bytes than the file", name, tc.accept)
			}
			for k, want := range map[string]string{"Vary": "Accept-Encoding", "Content-Type": plain.Header.Get("Content-Type"),
				"Cache-Control": "public, max-age=31536000, immutable", "Content-Length": strconv.Itoa(len(body))} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%s, Accept-Encoding %q: %s %q, want %q", name, tc.accept, k, got, want)
				}
			}
			wantTag := tag
			if ce != "" {
				wantTag = tag[:len(tag)-1] + "-" + ce + `"`
				if len(body) >= len(disk)*2/3 {
					t.Errorf("%s in %s: %d bytes of %d", name, ce, len(body), len(disk))
				}
			}
			if got := res.Header.Get("ETag"); got != wantTag {
				t.Errorf("%s, Accept-Encoding %q: ETag %q, want %q", name, tc.accept, got, wantTag)
			}
			// Revalidation answers 304 for the representation's own tag.
			if nm, _ := get(t, srv, "GET", path, tc.accept, "If-None-Match", wantTag); nm.StatusCode != http.StatusNotModified {
				t.Errorf("%s, Accept-Encoding %q, If-None-Match %s: %d, want 304", name, tc.accept, wantTag, nm.StatusCode)
			}
		}
		// HEAD states what GET would send.
		head, body := get(t, srv, "HEAD", path, "zstd")
		if len(zb) == 0 || len(gb) == 0 {
			t.Errorf("%s: %d bytes in zstd, %d in gzip", name, len(zb), len(gb))
		}
		get1, getBody := get(t, srv, "GET", path, "zstd")
		if len(body) != 0 || head.Header.Get("Content-Encoding") != "zstd" || head.Header.Get("Content-Length") != strconv.Itoa(len(getBody)) ||
			head.Header.Get("ETag") != get1.Header.Get("ETag") {
			t.Errorf("%s HEAD: Content-Encoding %q, Content-Length %q, ETag %q; GET sends %d bytes, ETag %q", name,
				head.Header.Get("Content-Encoding"), head.Header.Get("Content-Length"), head.Header.Get("ETag"), len(getBody), get1.Header.Get("ETag"))
		}
	}
	// A file under a KiB goes out as it is.
	res, body := get(t, srv, "GET", static.Path("img/favicon.svg"), "gzip, zstd")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "" || res.Header.Get("Content-Type") != "image/svg+xml" || len(body) >= 1024 {
		t.Errorf("favicon: %d, Content-Encoding %q, Content-Type %q, %d bytes", res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Content-Type"), len(body))
	}
}

// /favicon.ico, which browsers ask for when a page names no icon (the API's
// JSON opened in a tab), sends them to the icon.
func TestFavicon(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NewServeMux())
	mux := srv.Config.Handler.(*http.ServeMux)
	mux.Handle(static.FaviconPath, static.Favicon())
	mux.Handle(static.Prefix, static.Handler())
	defer srv.Close()
	res, _ := get(t, srv, "GET", "/favicon.ico", "")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != static.Path("img/favicon.svg") {
		t.Fatalf("GET /favicon.ico: %d to %q, want 302 to %s", res.StatusCode, res.Header.Get("Location"), static.Path("img/favicon.svg"))
	}
	icon, body := get(t, srv, "GET", res.Header.Get("Location"), "")
	if icon.StatusCode != http.StatusOK || icon.Header.Get("Content-Type") != "image/svg+xml" || !bytes.HasPrefix(body, []byte("<svg ")) {
		t.Errorf("the icon: %d %q %.40q", icon.StatusCode, icon.Header.Get("Content-Type"), body)
	}
}
