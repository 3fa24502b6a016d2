package models_test

import (
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"petstore/models"
)

// The fuzz targets below check the input rules shared by the API and the
// console against what DESIGN.md promises, for any input. Seeds live here
// and in testdata/fuzz/<FuzzName>/ (plain `go test` runs them all); to
// fuzz one: go test -run='^$' -fuzz='^FuzzParsePetQuery$' -fuzztime=30s ./models

// FuzzPetInputValidate: Validate never panics; an accepted pet has a
// trimmed, valid UTF-8 name of 1..255 code points without control
// characters, a category from 1 to 2^63-1 and a status of the enum; a
// refused one is a 400-class error naming only the fields that are wrong,
// and every wrong field.
func FuzzPetInputValidate(f *testing.F) {
	seeds := []struct {
		name, category, status string
		hasStatus              bool
	}{
		{"Rex", "1", "", false},
		{"  Rex\t\n", "42", "sold", true},
		{"", "", "", true},
		{"\u00a0\u2003Rex\u3000", "1", "pending", true},
		{"\u200bRex", "1", "available", true},
		{strings.Repeat("é", models.MaxNameLength), "9223372036854775807", "available", true},
		{strings.Repeat("é", models.MaxNameLength+1), "9223372036854775808", "Available", true},
		{"a\x00b", "0", "sold\x00", true},
		{"\xff\xfe", "-1", " sold", true},
		{"\xed\xa0\x80", "+1", "SOLD", true},
		{"Rex\u0085", "1.5", "pending ", true},
		{"🐶 小狗", "007", "", true},
		{"' OR 1=1--", "1 OR 1=1", "available' --", true},
		{`"; DROP TABLE pets;--`, "1;DROP TABLE pets", "%", true},
		{"%_\\", "1e3", "_", true},
		{"\u202eRex", " 1 ", "available", true},
		{"Rex", "-0", "", false},
		{"Rex", "99999999999999999999999999999", "", false},
		{"Rex", "-9223372036854775809", "", false},
		{"Rex", "0x10", "", false},
		{"Rex", "1_000", "", false},
	}
	for _, s := range seeds {
		f.Add(s.name, s.category, s.status, s.hasStatus)
	}
	f.Fuzz(func(t *testing.T, name, category, status string, hasStatus bool) {
		in := models.PetInput{Name: name, CategoryID: category}
		if hasStatus {
			in.Status = &status
		}
		got, err := in.Validate()

		// What the rules of DESIGN.md say, field by field.
		wantName, nameOK, nameSure := expectName(name)
		wantCategory, categoryOK := expectCategory(category)
		wantStatus, statusOK := models.DefaultStatus, true
		if hasStatus {
			wantStatus, statusOK = expectStatus(status)
		}

		if err != nil {
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Message == "" {
				t.Fatalf("Validate(%q, %q, %q) error = %#v, want an invalid_request *models.Error with a message", name, category, status, err)
			}
			if got != (models.NewPet{}) {
				t.Errorf("Validate refused the input but returned %+v", got)
			}
			bad := map[string]bool{}
			for _, fe := range e.Fields {
				if fe.Message == "" || bad[fe.Field] {
					t.Errorf("field error %+v is empty or repeated", fe)
				}
				bad[fe.Field] = true
			}
			if !nameSure {
				nameOK = !bad[models.FieldName]
			}
			for field, ok := range map[string]bool{models.FieldName: nameOK, models.FieldCategoryID: categoryOK, models.FieldStatus: statusOK} {
				if bad[field] == ok {
					t.Errorf("Validate(%q, %q, %q): field %s reported bad = %v, but by the rules it is valid = %v (fields %+v)",
						name, category, status, field, bad[field], ok, e.Fields)
				}
			}
			if len(bad) != len(e.Fields) || len(bad) == 0 {
				t.Errorf("fields %+v: want each bad field once, at least one", e.Fields)
			}
			return
		}

		if !nameSure {
			nameOK = true
		}
		if !nameOK || !categoryOK || !statusOK {
			t.Fatalf("Validate(%q, %q, %q) accepted %+v; by the rules name ok=%v category ok=%v status ok=%v",
				name, category, status, got, nameOK, categoryOK, statusOK)
		}
		// The properties themselves, independent of the oracle above.
		n := got.Name
		switch {
		case n != strings.TrimSpace(n):
			t.Errorf("accepted name %q is not trimmed", n)
		case !utf8.ValidString(n):
			t.Errorf("accepted name %q is not valid UTF-8", n)
		case utf8.RuneCountInString(n) < 1 || utf8.RuneCountInString(n) > models.MaxNameLength:
			t.Errorf("accepted name %q has %d code points, want 1..%d", n, utf8.RuneCountInString(n), models.MaxNameLength)
		case strings.IndexFunc(n, unicode.IsControl) >= 0:
			t.Errorf("accepted name %q holds a control character", n)
		case strings.IndexFunc(n, alwaysHidden) >= 0:
			t.Errorf("accepted name %q holds an invisible or text-direction character", n)
		case n != wantName:
			t.Errorf("accepted name %q, want %q (the input trimmed, nothing else changed)", n, wantName)
		}
		if got.CategoryID < 1 || got.CategoryID != wantCategory {
			t.Errorf("accepted category %d from %q, want %d (1..%d)", got.CategoryID, category, wantCategory, int64(math.MaxInt64))
		}
		if _, ok := models.ParseStatus(string(got.Status)); !ok || got.Status != wantStatus {
			t.Errorf("accepted status %q, want %q", got.Status, wantStatus)
		}
	})
}

// expectName is the name rule of DESIGN.md: trimmed, then 1..255 code
// points of valid UTF-8 text without control characters, and
// without invisible or text-direction characters. sure is false when the
// name holds a character whose fate depends on its neighbours (joiners,
// variation selectors, tags: TestNamesRefuseHiddenCharacters covers them).
func expectName(raw string) (name string, ok, sure bool) {
	if !utf8.ValidString(raw) {
		return "", false, true
	}
	n := strings.TrimSpace(raw)
	sure = true
	for _, r := range n {
		if unicode.IsControl(r) || alwaysHidden(r) {
			return "", false, true
		}
		if r == '\u200C' || r == '\u200D' || unicode.Is(unicode.Variation_Selector, r) || (r >= '\U000E0020' && r <= '\U000E007F') {
			sure = false
		}
	}
	c := utf8.RuneCountInString(n)
	if c < 1 || c > models.MaxNameLength {
		return "", false, true
	}
	return n, true, sure
}

// alwaysHidden reports the characters a name may never hold, wherever they
// stand: format characters other than the joiners, the tags and the
// visible prepended concatenation marks, and the other default-ignorable
// code points.
func alwaysHidden(r rune) bool {
	if r == '\u200C' || r == '\u200D' || (r >= '\U000E0020' && r <= '\U000E007F') {
		return false
	}
	return (unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r)) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// expectCategory is the category rule: optional surrounding white space
// (a console form field), then decimal digits only (no sign, no fraction,
// no exponent) worth 1..2^63-1.
func expectCategory(raw string) (int64, bool) {
	s := strings.TrimSpace(raw)
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n < 1 || n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// expectStatus is the status rule: exactly one of the three values.
func expectStatus(raw string) (models.Status, bool) {
	switch raw {
	case "available", "pending", "sold":
		return models.Status(raw), true
	}
	return "", false
}

// FuzzParsePetQuery: any raw query string, parsed as the server parses it,
// either gives a query within bounds (limit 1..100, a valid status or none,
// after >= 0, nothing the API cannot set) or a 400-class error naming only
// the bad list parameters and the parameters the list does not take.
func FuzzParsePetQuery(f *testing.F) {
	for _, s := range []string{
		"",
		"limit=1",
		"limit=100&status=sold&after=0",
		"limit=0",
		"limit=101",
		"limit=abc",
		"limit=1.5",
		"limit=+5",
		"limit=-1",
		"limit=0005",
		"limit=99999999999999999999999",
		"limit=1&limit=2",
		"limit=",
		"limit",
		"status=available",
		"status=Available",
		"status=available%00",
		"status=available%0d%0aSet-Cookie:%20x=1",
		"status=available%26after%3D5",
		"status=' OR 1=1--",
		"status=%27%20OR%201%3D1--",
		"after=0",
		"after=-1",
		"after=9223372036854775807",
		"after=9223372036854775808",
		"after=1;after=2",
		"after=%",
		"after=%zz",
		"before=5&q=%25&next=/x",
		"LIMIT=5&Status=sold",
		"limit=%31%30",
		"limit=%EF%BC%91", // fullwidth digit one
		"a=%ff%fe&status=%c0%ae",
		strings.Repeat("limit=1&", 1000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		params, _ := url.ParseQuery(raw) // the pairs that can be read (the server refuses the rest whole: ParseQueryString)
		q, err := models.ParsePetQuery(params)

		limitOK, wantLimit := oneParam(params, "limit", func(s string) (int64, bool) {
			n, ok := decimal(s)
			return n, ok && n >= 1 && n <= models.MaxPageLimit
		}, models.DefaultPageLimit)
		statusOK, _ := oneParam(params, "status", func(s string) (int64, bool) {
			_, ok := expectStatus(s)
			return 0, ok
		}, 0)
		afterOK, wantAfter := oneParam(params, "after", decimal, 0)
		ok := map[string]bool{"limit": limitOK, "status": statusOK, "after": afterOK}
		allOK := limitOK && statusOK && afterOK
		for name := range params {
			if _, known := ok[name]; !known {
				ok[name], allOK = false, false
			}
		}

		if err != nil {
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Message == "" || len(e.Fields) == 0 {
				t.Fatalf("ParsePetQuery(%q) error = %#v, want invalid_request with fields", raw, err)
			}
			for _, fe := range e.Fields {
				valid, sent := ok[fe.Field]
				if !sent || valid || fe.Message == "" {
					t.Errorf("ParsePetQuery(%q) reports %+v: not a bad or unknown parameter", raw, fe)
				}
			}
			if allOK {
				t.Errorf("ParsePetQuery(%q) refused a query whose parameters are all valid: %v", raw, err)
			}
			return
		}
		if !allOK {
			t.Fatalf("ParsePetQuery(%q) accepted %+v; by the rules %v", raw, q, ok)
		}
		if q.Limit < 1 || q.Limit > models.MaxPageLimit || int64(q.Limit) != wantLimit {
			t.Errorf("limit = %d, want %d within 1..%d", q.Limit, wantLimit, models.MaxPageLimit)
		}
		if q.Status != "" {
			if _, ok := models.ParseStatus(string(q.Status)); !ok || params.Get("status") != string(q.Status) {
				t.Errorf("status = %q from %q", q.Status, params["status"])
			}
		} else if _, given := params["status"]; given {
			t.Errorf("status %q given but the query has none", params["status"])
		}
		if q.After < 0 || q.After != wantAfter {
			t.Errorf("after = %d, want %d (>= 0)", q.After, wantAfter)
		}
		if q.Before != 0 || q.NameContains != "" {
			t.Errorf("the API's query string set console-only fields: %+v", q)
		}
	})
}

// oneParam applies the rule every list parameter shares: absent is fine
// (the default), present means exactly one non-empty value that parse
// accepts.
func oneParam(params url.Values, name string, parse func(string) (int64, bool), def int64) (bool, int64) {
	vals, ok := params[name]
	if !ok {
		return true, def
	}
	if len(vals) != 1 || vals[0] == "" {
		return false, 0
	}
	n, valid := parse(vals[0])
	return valid, n
}

// decimal accepts ASCII digits only, optionally one leading minus (which
// then makes the value negative and so out of every range here), within
// int64.
func decimal(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}
