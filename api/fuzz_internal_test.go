package api

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzBearerToken feeds arbitrary Authorization values to bearerToken. It
// never panics; a token it accepts is non-empty, holds no white space
// (unicode.IsSpace) and is the end of the header after the scheme word
// "Bearer";
// the scheme word is case-insensitive (changing its case never changes the
// answer); two headers are always refused; and any RFC 6750 b64token
// after any spelling of "Bearer" is accepted as is.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []struct {
		header string
		mask   uint8
	}{
		{"Bearer pst_abcdefgh_abcdefghijklmnopqrstuvwxyz234567", 0},
		{"bearer pst_x", 0x3f},
		{"BEARER   pst_x", 0x15},
		{"  Bearer pst_x  ", 0},
		{"Bearer", 0},
		{"Bearer ", 0},
		{"Bearer  ", 0},
		{"Bearer\tpst_x", 0},
		{"Bearer pst_x pst_y", 0},
		{"Bearer pst_x\tpst_y", 0},
		{"Bearer pst_x\r\nSet-Cookie: a=b", 0},
		{"Bearer pst_x\x00", 0},
		{"Bearer pst_\u00a0x", 0},
		{"Bearer pst_\u2028x", 0},
		{"Bearer pst_x\v", 0},
		{"Bearer pst_x\f", 0},
		{"Bearer pst_x\u0085", 0},
		{"Bearer\u00a0pst_x", 0},
		{"Basic dXNlcjpwYXNz", 0},
		{"Bearerpst_x", 0},
		{"Bearer= pst_x", 0},
		{"BEARER\xff pst_x", 0},
		{"Bearer \xff\xfe", 0},
		{"Bearer ' OR 1=1--", 0},
		{"Bearer mF_9.B5f-4.1JqM/+~==", 0},
		{"\u212aearer pst_x", 0}, // Kelvin sign: folds to k, not b
		{"", 0},
	} {
		f.Add(s.header, s.mask)
	}
	f.Fuzz(func(t *testing.T, header string, mask uint8) {
		token, ok := bearerToken([]string{header})
		if ok {
			if token == "" || strings.IndexFunc(token, unicode.IsSpace) >= 0 {
				t.Fatalf("bearerToken(%q) accepted %q: empty or holding white space", header, token)
			}
			rest := strings.TrimSpace(header)
			if len(rest) < len("Bearer ") || !strings.EqualFold(rest[:len("Bearer")], "Bearer") ||
				rest[len("Bearer")] != ' ' || !strings.HasSuffix(rest, token) ||
				strings.TrimLeft(rest[len("Bearer"):len(rest)-len(token)], " ") != "" {
				t.Fatalf("bearerToken(%q) accepted %q, which is not what follows the scheme word", header, token)
			}
		}
		if _, two := bearerToken([]string{header, header}); two {
			t.Errorf("bearerToken accepted two headers %q", header)
		}

		// Case-insensitivity of the scheme word: flip the case of the
		// letters of the first word that mask selects.
		trimmed := strings.TrimLeft(header, " \t")
		if word, _, _ := strings.Cut(trimmed, " "); strings.EqualFold(word, "Bearer") && len(word) == len("Bearer") {
			flipped := []byte(trimmed)
			for i := range len(word) {
				if mask&(1<<i) != 0 {
					flipped[i] ^= 0x20 // ASCII letters only: EqualFold matched "bearer"
				}
			}
			if t2, ok2 := bearerToken([]string{string(flipped)}); t2 != token || ok2 != ok {
				t.Errorf("bearerToken(%q) = %q, %v but with the scheme spelled %q: %q, %v", header, token, ok, flipped[:len(word)], t2, ok2)
			}
		}

		// A token of RFC 6750 characters after any spelling of the scheme
		// is accepted unchanged.
		if refB64Token(header) {
			scheme := []byte("Bearer")
			for i := range scheme {
				if mask&(1<<i) != 0 {
					scheme[i] ^= 0x20
				}
			}
			in := string(scheme) + strings.Repeat(" ", 1+int(mask>>6)) + header
			if got, ok := bearerToken([]string{in}); !ok || got != header {
				t.Errorf("bearerToken(%q) = %q, %v; want %q, true", in, got, ok, header)
			}
		}
	})
}

// refB64Token is the test's own reading of RFC 6750's b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func refB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for _, r := range body {
		if !(r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-._~+/", r))) {
			return false
		}
	}
	return true
}
