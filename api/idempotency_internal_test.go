package api

import (
	"strings"
	"testing"
)

// FuzzIdempotencyKey feeds arbitrary Idempotency-Key values to
// parseIdempotencyKey. It never panics; a key it accepts holds 1 to 255
// characters from space to tilde; a bare value is the key as it stands;
// and every key it accepts is read back the same from the draft's quoted
// form (so "abc" and abc are one key).
func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{
		"8e03978e-40d5-43e8-bc93-6894a57f9324",
		`"8e03978e-40d5-43e8-bc93-6894a57f9324"`,
		`"a\"b\\c"`,
		`"abc";x=1`,
		`"abc"d`,
		`"abc`,
		`""`,
		`"a\nb"`,
		"",
		" a",
		"a b",
		"a\tb",
		"clé",
		`a"b`,
		strings.Repeat("k", 255),
		strings.Repeat("k", 256),
		`"` + strings.Repeat("\\\\", 255) + `"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		key, ok := parseIdempotencyKey(v)
		if !ok {
			return
		}
		if len(key) < 1 || len(key) > maxIdempotencyKey {
			t.Fatalf("parseIdempotencyKey(%q) accepted %d characters", v, len(key))
		}
		for i := 0; i < len(key); i++ {
			if key[i] < 0x20 || key[i] > 0x7e {
				t.Fatalf("parseIdempotencyKey(%q) accepted %q, with byte %#x", v, key, key[i])
			}
		}
		if !strings.HasPrefix(v, `"`) && key != v {
			t.Fatalf("bare %q read as %q", v, key)
		}
		quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"`
		if again, ok := parseIdempotencyKey(quoted); !ok || again != key {
			t.Fatalf("key %q quoted as %s read back as %q, %v", key, quoted, again, ok)
		}
	})
}
