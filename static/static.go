// Package static holds the console's CSS, JavaScript, icon and vendored
// files, embedded in the binary and served under content-hashed names so
// that browsers may cache them forever, compressed once (zstd and gzip)
// for the clients that accept it.
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

//go:embed css img js vendor
var files embed.FS

// Prefix is the URL path the files are served under.
const Prefix = "/static/"

// hashLen is how many hex digits of a file's SHA-256 its hashed name and
// ETag carry.
const hashLen = 10

// asset is one embedded file. Its hash is computed on first use, not at
// start: reading every file then (2 MB of Swagger UI among them) kept its
// pages resident and a copy of it on the heap in every process, 4 MB of a
// server's peak RSS, although only /docs uses them. Bodies are served from
// the embedded data, never copied.
type asset struct {
	name string // path inside the embedded tree, e.g. css/app.css
	once sync.Once
	hash string // hashLen hex digits, set by once

	// encoded holds the file compressed, by coding (zstd, gzip), each
	// made on the first request that accepts it: once per process, never
	// per request, and never in a process that is not asked for it.
	encoded [len(codings)]encodedBody
}

// encodedBody is a file in one content coding.
type encodedBody struct {
	once sync.Once
	body []byte // nil when the coding does not make the file smaller
}

// A coding the handler serves. A client that accepts both gets the
// smaller body of the two (every current browser accepts both).
type coding struct {
	name string // as in Accept-Encoding and Content-Encoding
	tag  string // added to the ETag: each coding is a representation of its own
	enc  func(src []byte) []byte
}

var codings = [...]coding{
	{"zstd", "-zstd", func(src []byte) []byte {
		// SpeedBetterCompression: 2.5 % larger than the best for Swagger
		// UI's bundle, made in a fifth of its time, once.
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic("static: " + err.Error()) // only for invalid options
		}
		defer e.Close()
		return e.EncodeAll(src, nil)
	}},
	{"gzip", "-gzip", func(src []byte) []byte {
		var b bytes.Buffer
		w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			panic("static: " + err.Error())
		}
		_, _ = w.Write(src) // writes to memory do not fail
		_ = w.Close()
		return b.Bytes()
	}},
}

// minEncoded is the smallest file served compressed: below a KiB, a packet
// either way.
const minEncoded = 1024

// byName holds every servable file by its path in the embedded tree.
var byName = map[string]*asset{}

func init() {
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") {
			return err
		}
		byName[p] = &asset{name: p}
		return nil
	})
	if err != nil {
		panic("static: " + err.Error())
	}
}

// contentHash returns a's hash, computing it once.
func (a *asset) contentHash() string {
	a.once.Do(func() {
		f, err := files.Open(a.name)
		if err != nil {
			panic("static: " + err.Error()) // listed by init: cannot happen
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			panic("static: " + err.Error())
		}
		a.hash = hex.EncodeToString(h.Sum(nil))[:hashLen]
	})
	return a.hash
}

// encodedBody returns a's body in codings[i], compressing it once, or nil
// when that is no smaller.
func (a *asset) encodedBody(i int) []byte {
	e := &a.encoded[i]
	e.once.Do(func() {
		src, err := files.ReadFile(a.name) // the embedded data itself, not a copy
		if err != nil || len(src) < minEncoded {
			return
		}
		// Any gain is kept: a file served plain to a client that accepts
		// the coding would be compressed per request by the server's
		// compressing writer instead.
		if b := codings[i].enc(src); len(b) < len(src) {
			e.body = b
		}
	})
	return e.body
}

// accepts reports whether an Accept-Encoding value accepts coding name:
// named (or "*") with a q-value that is not zero.
func accepts(header, name string) bool {
	star := false
	for part := range strings.SplitSeq(header, ",") {
		c, params, _ := strings.Cut(part, ";")
		c = strings.TrimSpace(c)
		if !strings.EqualFold(c, name) && c != "*" {
			continue
		}
		ok := true
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") && strings.Trim(strings.TrimSpace(v), "0.") == "" {
				ok = false // q=0, 0.0, 0.000
			}
		}
		if strings.EqualFold(c, name) {
			return ok
		}
		star = ok
	}
	return star
}

// hashedName is a's name with its content hash before the extension, e.g.
// css/app.1a2b3c4d5e.css.
func (a *asset) hashedName() string {
	ext := path.Ext(a.name)
	return strings.TrimSuffix(a.name, ext) + "." + a.contentHash() + ext
}

// Path returns the URL of an embedded file by its name (e.g. "css/app.css"),
// with its content hash in the name. It panics on an unknown name, which the
// tests catch.
func Path(name string) string {
	a, ok := byName[name]
	if !ok {
		panic("static: no file " + name)
	}
	return Prefix + a.hashedName()
}

// lookup finds the file a request names: a hashed name whose hash is the
// file's own (immutable), or a plain name (to revalidate).
func lookup(name string) (a *asset, hashed bool) {
	if a, ok := byName[name]; ok {
		return a, false
	}
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	dot := len(stem) - hashLen - 1
	if dot < 0 || stem[dot] != '.' {
		return nil, false
	}
	a, ok := byName[stem[:dot]+ext]
	if !ok || a.contentHash() != stem[dot+1:] {
		return nil, false
	}
	return a, true
}

// Handler serves the files. Hashed names are immutable and cached for a
// year; only names from the embedded tree are served, so no path can
// reach outside it.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, hashed := lookup(strings.TrimPrefix(r.URL.Path, Prefix))
		if a == nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		if hashed {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		ct := mime.TypeByExtension(path.Ext(a.name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		f, err := files.Open(a.name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		h.Set("Content-Type", ct)
		h.Set("X-Content-Type-Options", "nosniff")
		if st, err := f.Stat(); err == nil && st.Size() >= minEncoded {
			h.Set("Vary", "Accept-Encoding")
			// Of the codings the client accepts, the smaller body: zstd
			// for Swagger UI's bundle, gzip at its best level for most
			// smaller files.
			ae := r.Header.Get("Accept-Encoding")
			best := -1
			var body []byte
			for i, c := range codings {
				if !accepts(ae, c.name) {
					continue
				}
				if b := a.encodedBody(i); b != nil && (body == nil || len(b) < len(body)) {
					best, body = i, b
				}
			}
			if best >= 0 {
				c := codings[best]
				h.Set("Content-Encoding", c.name)
				h.Set("ETag", `"`+a.contentHash()+c.tag+`"`)
				// ServeContent states no length for an encoded body;
				// without one a browser cannot show a download's
				// progress. A range request gets its own from it.
				if r.Header.Get("Range") == "" {
					h.Set("Content-Length", strconv.Itoa(len(body)))
				}
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
				return
			}
		}
		h.Set("ETag", `"`+a.contentHash()+`"`)
		// An embedded file is an io.ReadSeeker over the binary's own data.
		http.ServeContent(w, r, "", time.Time{}, f.(io.ReadSeeker))
	})
}

// FaviconPath is where browsers look for a site's icon when a page names
// none (an API answer or the OpenAPI document opened in a tab).
const FaviconPath = "/favicon.ico"

// Favicon answers FaviconPath with a redirect to the icon the pages link
// (img/favicon.svg under its hashed name), so it is never a 404. Not
// permanent: the hashed name changes with the icon. Browsers keep the
// redirect for a day.
func Favicon() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		http.Redirect(w, r, Path("img/favicon.svg"), http.StatusFound)
	})
}
