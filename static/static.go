// Package static holds the console's CSS, JavaScript and vendored files,
// embedded in the binary and served under content-hashed names so that
// browsers may cache them forever.
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
	"strings"
	"sync"
	"time"
)

//go:embed css js vendor
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
}

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
		h.Set("ETag", `"`+a.contentHash()+`"`)
		h.Set("X-Content-Type-Options", "nosniff")
		// An embedded file is an io.ReadSeeker over the binary's own data.
		http.ServeContent(w, r, "", time.Time{}, f.(io.ReadSeeker))
	})
}
