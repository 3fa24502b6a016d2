// Package static holds the console's CSS, JavaScript, icon and vendored
// files, embedded in the binary and served under content-hashed names so
// that browsers may cache them forever, and their zstd and gzip forms,
// compressed at build time (`go generate ./static`) and embedded beside
// them, for the clients that accept it.
package static

import (
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

	"petstore/static/internal/precompress"
)

//go:embed css img js vendor
var files embed.FS

// precompressed holds the compressed forms of the files, made by
// internal/precompress at build time, under precompress.Dir.
//
//go:embed compressed
var precompressed embed.FS

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

	// encoded is the size of the file's precompressed form by coding
	// (indexes of precompress.Codings), 0 where it has none. Known at
	// start from the embedded tree's index, without reading a form.
	encoded [len(precompress.Codings)]int64
}

// etagTag is added to a coding's ETag: each coding is a representation of
// its own.
func etagTag(c precompress.Coding) string { return "-" + c.Name }

// formPath is where a's form in coding c sits in precompressed.
func (a *asset) formPath(c precompress.Coding) string {
	return precompress.Dir + "/" + a.name + c.Ext
}

// byName holds every servable file by its path in the embedded tree.
var byName = map[string]*asset{}

func init() {
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") {
			return err
		}
		a := &asset{name: p}
		for i, c := range precompress.Codings {
			if st, err := fs.Stat(precompressed, a.formPath(c)); err == nil {
				a.encoded[i] = st.Size()
			}
		}
		byName[p] = a
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
		if a.encoded != [len(precompress.Codings)]int64{} {
			h.Set("Vary", "Accept-Encoding")
			// Of the forms the client accepts, the smaller: zstd for
			// Swagger UI's files, gzip for most smaller files. A file
			// without forms (under a KiB, or a format compressed
			// already) goes out as it is: nothing is compressed here.
			ae := r.Header.Get("Accept-Encoding")
			best := -1
			for i, c := range precompress.Codings {
				if a.encoded[i] > 0 && accepts(ae, c.Name) && (best < 0 || a.encoded[i] < a.encoded[best]) {
					best = i
				}
			}
			if best >= 0 {
				c := precompress.Codings[best]
				body, err := precompressed.Open(a.formPath(c))
				if err != nil {
					http.NotFound(w, r) // listed by init: cannot happen
					return
				}
				defer body.Close()
				h.Set("Content-Encoding", c.Name)
				h.Set("ETag", `"`+a.contentHash()+etagTag(c)+`"`)
				// ServeContent states no length for an encoded body;
				// without one a browser cannot show a download's
				// progress. A range request gets its own from it.
				if r.Header.Get("Range") == "" {
					h.Set("Content-Length", strconv.FormatInt(a.encoded[best], 10))
				}
				// Served from the binary's own data, never copied.
				http.ServeContent(w, r, "", time.Time{}, body.(io.ReadSeeker))
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
