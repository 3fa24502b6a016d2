package api

import (
	"bytes"
	"encoding/json"
	"io"

	"petstore/models"
)

// petFields holds the raw JSON values of a NewPet body's three fields; a
// nil value is a field that is absent or null.
type petFields struct {
	name, categoryID, status []byte
}

// set keeps the raw value of a known field (the last one wins, as when
// decoding into a map); null counts as absent.
func (f *petFields) set(key string, raw []byte) {
	if string(raw) == "null" {
		raw = nil
	}
	switch key {
	case models.FieldName:
		f.name = raw
	case models.FieldCategoryID:
		f.categoryID = raw
	case models.FieldStatus:
		f.status = raw
	}
}

// readPetFields finds the three fields in body, a single JSON object.
// Bodies of the usual shape (flat, no escapes) are scanned in one pass;
// anything else goes through encoding/json, which gives the same fields
// and the errors (FuzzDecodePetInput holds the two to the same answers).
// The scan is there because decoding every create's body with encoding/json
// is a visible part of the server's CPU per create (docs/performance.md).
func readPetFields(body []byte) (petFields, error) {
	if f, ok := scanPetFields(body); ok {
		return f, nil
	}
	return decodePetFields(body)
}

// decodePetFields is readPetFields through encoding/json.
func decodePetFields(body []byte) (petFields, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return petFields{}, &models.Error{Code: models.CodeInvalidRequest, Message: "The body must be a JSON object, like {\"name\": \"Rex\", \"categoryId\": 1}."}
	}
	if _, err := dec.Token(); err != io.EOF {
		return petFields{}, &models.Error{Code: models.CodeInvalidRequest, Message: "The body must hold exactly one JSON object."}
	}
	var f petFields
	for _, key := range []string{models.FieldName, models.FieldCategoryID, models.FieldStatus} {
		if raw, ok := fields[key]; ok {
			f.set(key, bytes.TrimSpace(raw))
		}
	}
	return f, nil
}

// scanPetFields reads a JSON object whose members are strings without
// escapes, numbers, true, false or null, and whose keys have no escapes.
// ok is false for anything else, valid JSON or not: encoding/json then
// decides.
func scanPetFields(body []byte) (f petFields, ok bool) {
	s := jsonScanner{b: body}
	if !s.skip('{') {
		return f, false
	}
	if s.skip('}') {
		return f, s.end()
	}
	for {
		key, ok := s.str()
		if !ok || !s.skip(':') {
			return f, false
		}
		s.space()
		start := s.i
		if !s.scalar() {
			return f, false
		}
		f.set(string(key[1:len(key)-1]), s.b[start:s.i])
		if s.skip('}') {
			return f, s.end()
		}
		if !s.skip(',') {
			return f, false
		}
	}
}

// jsonScanner walks the flat JSON objects scanPetFields accepts.
type jsonScanner struct {
	b []byte
	i int
}

// space skips JSON white space.
func (s *jsonScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// skip skips white space and then c, if c is next.
func (s *jsonScanner) skip(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end says whether only white space is left.
func (s *jsonScanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// str reads a string without escapes or control characters, quotes
// included; the body is valid UTF-8 already.
func (s *jsonScanner) str() ([]byte, bool) {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			v := s.b[s.i : j+1]
			s.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// scalar reads a string (as str), a number, true, false or null, which
// must then be followed by white space, ',' or '}'.
func (s *jsonScanner) scalar() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		if _, ok := s.str(); !ok {
			return false
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if !s.number() {
			return false
		}
	default:
		lit := false
		for _, w := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.b[s.i:], []byte(w)) {
				s.i += len(w)
				lit = true
				break
			}
		}
		if !lit {
			return false
		}
	}
	if s.i == len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case ' ', '\t', '\n', '\r', ',', '}':
		return true
	}
	return false
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *jsonScanner) number() bool {
	s.accept('-')
	if s.accept('0') {
		// a leading zero stands alone
	} else if s.digits() == 0 {
		return false
	}
	if s.accept('.') && s.digits() == 0 {
		return false
	}
	if s.accept('e') || s.accept('E') {
		if !s.accept('+') {
			s.accept('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

// accept skips c if it is next.
func (s *jsonScanner) accept(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// digits skips a run of digits and says how long it was.
func (s *jsonScanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
