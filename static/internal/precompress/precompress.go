// Package precompress makes the compressed forms of the static files that
// are committed beside them and embedded in the binary, so that no server
// process compresses a static file. Its output depends on its input alone
// (no time, no file name in a header), so that `make check` can regenerate
// it and compare.
package precompress

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Dir is the folder, beside the originals, that holds the compressed forms
// under the originals' paths plus a coding's extension.
const Dir = "compressed"

// MinSize is the smallest file given compressed forms: below a KiB, a
// packet either way.
const MinSize = 1024

// Coding is a content coding with a precompressed form.
type Coding struct {
	Name   string // as in Accept-Encoding and Content-Encoding
	Ext    string // added to the original's path under Dir
	Encode func(src []byte) ([]byte, error)
}

// Codings are the forms made for every compressible file. Best levels:
// they run once, at build time.
var Codings = [...]Coding{
	{"zstd", ".zst", func(src []byte) ([]byte, error) {
		// One frame, no dictionary; the checksum is of the content.
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer e.Close()
		return e.EncodeAll(src, nil), nil
	}},
	{"gzip", ".gz", func(src []byte) ([]byte, error) {
		var b bytes.Buffer
		w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			return nil, err
		}
		// The zero header: no name, modification time 0.
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}},
}

// compressible are the extensions of text formats (.txt for the licences
// shipped with vendored files, which are served too); images other than
// SVG, fonts and archives are compressed already. A served file of a KiB
// or more without forms would be compressed per request by the server's
// compressing wrapper.
var compressible = map[string]bool{".css": true, ".js": true, ".svg": true, ".html": true, ".json": true, ".txt": true}

// Wanted reports whether a file of that name and size gets compressed forms.
func Wanted(name string, size int64) bool {
	return compressible[strings.ToLower(path.Ext(name))] && size >= MinSize
}

// Generate writes, under out, the compressed forms of every wanted file of
// src, and removes any other file there, so that a deleted or renamed
// original leaves no form behind. A form no smaller than its original is
// not written.
func Generate(src fs.FS, out string) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == Dir || p == "internal" {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !Wanted(p, info.Size()) {
			return nil
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		for _, c := range Codings {
			z, err := c.Encode(b)
			if err != nil {
				return errors.Join(errors.New(p), err)
			}
			if len(z) >= len(b) {
				continue
			}
			dst := filepath.Join(out, filepath.FromSlash(p)+c.Ext)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, z, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}
