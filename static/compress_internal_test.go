package static

import "testing"

// A file is compressed once per coding, on first use, and that one body is
// served to every later request.
func TestEncodedOnce(t *testing.T) {
	t.Parallel()
	a := byName["vendor/htmx-2.0.11.min.js"]
	for i, c := range codings {
		first := a.encodedBody(i)
		if len(first) == 0 {
			t.Fatalf("%s: not compressed", c.name)
		}
		if again := a.encodedBody(i); &again[0] != &first[0] {
			t.Errorf("%s: compressed again", c.name)
		}
	}
	if b := byName["img/favicon.svg"].encodedBody(0); b != nil {
		t.Errorf("a file under a KiB was compressed (%d bytes)", len(b))
	}
}
