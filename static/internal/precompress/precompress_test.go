package precompress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// The same files give byte-identical forms on every run (what `make check`
// relies on to tell stale forms), only for compressible files of a KiB or
// more, and a form of a file that is gone is removed.
func TestGenerateDeterministic(t *testing.T) {
	t.Parallel()
	big := []byte(strings.Repeat("body { color: red; }\n", 200))
	src := fstest.MapFS{
		"css/a.css":        {Data: big, ModTime: time.Unix(1, 0)},
		"js/b.js":          {Data: big},
		"img/small.svg":    {Data: []byte("<svg/>")},
		"img/photo.png":    {Data: big},
		"README.md":        {Data: big},
		"compressed/x.gz":  {Data: big},
		"internal/y/z.css": {Data: big},
	}
	dirs := [2]string{}
	for i := range dirs {
		dirs[i] = filepath.Join(t.TempDir(), Dir)
		if i == 1 {
			// A form of a file that no longer exists, left from an earlier run.
			if err := os.MkdirAll(filepath.Join(dirs[i], "css"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dirs[i], "css", "gone.css.gz"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			src["css/a.css"].ModTime = time.Unix(2_000_000_000, 0)
		}
		if err := Generate(src, dirs[i]); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"css/a.css.gz", "css/a.css.zst", "js/b.js.gz", "js/b.js.zst"}
	for _, d := range dirs {
		var got []string
		err := filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				rel, _ := filepath.Rel(d, p)
				got = append(got, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s holds %q, want %q", d, got, want)
		}
	}
	for _, name := range want {
		a, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirs[1], name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}
