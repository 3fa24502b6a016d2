package static

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"petstore/static/internal/precompress"
)

// Every compressible embedded file has its precompressed forms in the
// binary, each decoding to the file's very bytes, and the server knows
// their sizes; no form is left of a file that is gone.
func TestPrecompressedForms(t *testing.T) {
	t.Parallel()
	wanted := 0
	for name, a := range byName {
		src, err := files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !precompress.Wanted(name, int64(len(src))) {
			if a.encoded != [len(precompress.Codings)]int64{} {
				t.Errorf("%s (%d bytes): has compressed forms it should not", name, len(src))
			}
			continue
		}
		wanted++
		for i, c := range precompress.Codings {
			z, err := precompressed.ReadFile(a.formPath(c))
			if err != nil {
				t.Errorf("%s: no %s form (run `make generate`): %v", name, c.Name, err)
				continue
			}
			if int64(len(z)) != a.encoded[i] || len(z) >= len(src) {
				t.Errorf("%s in %s: %d bytes, %d known at start, %d plain", name, c.Name, len(z), a.encoded[i], len(src))
			}
			if got := decodeForm(t, c.Name, z); !bytes.Equal(got, src) {
				t.Errorf("%s in %s: decodes to other bytes than the file (stale: run `make generate`)", name, c.Name)
			}
		}
	}
	if wanted < 8 {
		t.Errorf("only %d files have compressed forms", wanted)
	}
	if byName["img/favicon.svg"].encoded != [len(precompress.Codings)]int64{} {
		t.Errorf("a file under a KiB has compressed forms")
	}
	err := fs.WalkDir(precompressed, precompress.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, precompress.Dir+"/")
		for _, c := range precompress.Codings {
			if orig, ok := strings.CutSuffix(rel, c.Ext); ok {
				if _, ok := byName[orig]; !ok {
					t.Errorf("%s: a form of no embedded file", p)
				}
				return nil
			}
		}
		t.Errorf("%s: not a form of any coding", p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func decodeForm(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch coding {
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
		t.Fatalf("coding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", coding, err)
	}
	return out
}
