// Package static holds the console's CSS, JavaScript and vendored files,
// embedded in the binary and served under content-hashed names so that
// browsers may cache them forever.
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed css js vendor
var files embed.FS

// Prefix is the URL path the files are served under.
const Prefix = "/static/"

type asset struct {
	name   string // path inside the embedded tree, e.g. css/app.css
	hashed string // e.g. css/app.1a2b3c4d5e.css
	body   []byte
	etag   string
}

var (
	byName   = map[string]*asset{}
	byHashed = map[string]*asset{}
)

func init() {
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:5])
		ext := path.Ext(p)
		a := &asset{name: p, hashed: strings.TrimSuffix(p, ext) + "." + h + ext, body: body, etag: `"` + h + `"`}
		byName[p], byHashed[a.hashed] = a, a
		return nil
	})
	if err != nil {
		panic("static: " + err.Error())
	}
}

// Path returns the URL of an embedded file by its name (e.g. "css/app.css"),
// with its content hash in the name. It panics on an unknown name, which the
// tests catch.
func Path(name string) string {
	a, ok := byName[name]
	if !ok {
		panic("static: no file " + name)
	}
	return Prefix + a.hashed
}

// Handler serves the files. Hashed names are immutable and cached for a
// year; only names from the embedded tree are served, so no path can
// reach outside it.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		a, ok := byHashed[name]
		h := w.Header()
		if ok {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else if a, ok = byName[name]; ok {
			h.Set("Cache-Control", "no-cache")
		} else {
			http.NotFound(w, r)
			return
		}
		ct := mime.TypeByExtension(path.Ext(a.name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
		h.Set("ETag", a.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
	})
}
