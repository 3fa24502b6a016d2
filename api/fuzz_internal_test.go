package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"petstore/models"
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

// FuzzDecodePetInput holds decodePetInput (a one-pass scan of flat bodies,
// encoding/json for the rest) to the answers of decoding every body with
// encoding/json into a map, the plainest reading of the rules: the same
// fields, the same wrong-type notes, the same errors.
func FuzzDecodePetInput(f *testing.F) {
	for _, s := range []string{
		`{"name":"Rex","categoryId":1,"status":"sold"}`,
		` { "name" : "Rex 🐾" , "categoryId" : 12 } `,
		`{"name":"a","name":null,"categoryId":-0.5e+3,"status":null}`,
		`{"name":"R\u00e9x","categoryId":"1"}`,
		`{"na\u006de":"Rex","categoryId":1}`,
		`{"name":1,"categoryId":true,"status":false}`,
		`{"name":{"a":1},"categoryId":[1],"id":7}`,
		`{"categoryId":01}`, `{"categoryId":1.}`, `{"categoryId":-}`, `{"categoryId":1e}`,
		`{}`, `{} {}`, `{},`, `null`, `[]`, `"x"`, ``, `{"name":"Rex",}`, `{"name" "Rex"}`,
		"{\"name\":\"a\tb\"}", `{"name":"Rex"}x`, `{"name":nul}`, `{"name":truex}`,
		`{"NAME":"Rex","CategoryId":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return // readJSONBody refuses it first
		}
		got, gotErr := decodePetInput(body)
		want, wantErr := decodePetInputByMap(body)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%q: error %v, want %v", body, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, want %#v", body, got, want)
		}
	})
}

// decodePetInputByMap is decodePetInput done the plain way (encoding/json
// into a map), the oracle of FuzzDecodePetInput.
func decodePetInputByMap(body []byte) (models.PetInput, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return models.PetInput{}, &models.Error{Code: models.CodeInvalidRequest, Message: "The body must be a JSON object, like {\"name\": \"Rex\", \"categoryId\": 1}."}
	}
	if _, err := dec.Token(); err != io.EOF {
		return models.PetInput{}, &models.Error{Code: models.CodeInvalidRequest, Message: "The body must hold exactly one JSON object."}
	}
	present := func(name string) (json.RawMessage, bool) {
		raw, ok := fields[name]
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			return nil, false
		}
		return raw, true
	}
	var in models.PetInput
	bad := func(field, msg string) {
		in.Invalid = append(in.Invalid, models.FieldError{Field: field, Message: msg})
	}
	if raw, ok := present(models.FieldName); ok {
		if json.Unmarshal(raw, &in.Name) != nil {
			bad(models.FieldName, "Name must be a string.")
		}
	}
	if raw, ok := present(models.FieldCategoryID); ok {
		if s := string(bytes.TrimSpace(raw)); s[0] == '-' || (s[0] >= '0' && s[0] <= '9') {
			in.CategoryID = s
		} else {
			bad(models.FieldCategoryID, "Category ID must be a JSON number: a whole number from 1 to 9223372036854775807.")
		}
	}
	if raw, ok := present(models.FieldStatus); ok {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			bad(models.FieldStatus, models.StatusMessage)
		} else {
			in.Status = &s
		}
	}
	return in, nil
}

// TestScanPetFields: the one-pass scan takes the bodies partners send and
// leaves escapes, nesting and anything invalid to encoding/json.
func TestScanPetFields(t *testing.T) {
	for body, want := range map[string]bool{
		`{"name":"Rex","categoryId":7,"status":"available"}`:              true,
		" {\n \"name\": \"Mochi 🐾\",\t\"categoryId\": 12, \"x\": null } ": true,
		`{"name":"Rex","categoryId":-1.5E-3,"id":true}`:                   true,
		`{}`:                          true,
		`{"name":"R\u00e9x"}`:         false,
		`{"name":"Rex","tags":["a"]}`: false,
		`{"name":"Rex"} {}`:           false,
		`{"categoryId":01}`:           false,
		`{"name":"Rex",}`:             false,
		`[]`:                          false,
	} {
		if _, ok := scanPetFields([]byte(body)); ok != want {
			t.Errorf("scanPetFields(%s) ok = %v, want %v", body, ok, want)
		}
	}
}
