package models_test

import (
	"errors"
	"testing"

	"petstore/models"
)

// One rule for pet and API key names: no invisible or text-direction
// characters, but every emoji sequence and the joiners of Persian and Indic
// scripts are kept.
func TestNamesRefuseHiddenCharacters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		// want is the refusal message; "" means the name is accepted.
		want string
	}{
		{"plain", "Rex", ""},
		{"emoji", "🐶 Rex", ""},
		{"family (ZWJ sequence)", "👨‍👩‍👧 Rex", ""},
		{"rainbow flag (VS16 then ZWJ)", "🏳️‍🌈", ""},
		{"eye in speech bubble", "👁️‍🗨️", ""},
		{"skin tone and ZWJ", "🧑🏽‍💻 coder", ""},
		{"heart with VS16", "❤️ Luna", ""},
		{"keycap", "Rex 1️⃣", ""},
		{"Scotland flag (tags)", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Nessie", ""},
		{"Persian ZWNJ", "می\u200cخواهم", ""},
		{"Devanagari ZWJ", "क्\u200dष", ""},
		{"Arabic number sign (visible format)", "\u0600١٢", ""},
		{"CJK", "小狗", ""},
		{"right-to-left override", "ab\u202Ecd", "Name must not contain invisible or text-direction characters (U+202E at position 3)."},
		{"left-to-right embedding", "\u202Aabc", "Name must not contain invisible or text-direction characters (U+202A at position 1)."},
		{"pop directional formatting", "abc\u202C", "Name must not contain invisible or text-direction characters (U+202C at position 4)."},
		{"right-to-left isolate", "x\u2067y", "Name must not contain invisible or text-direction characters (U+2067 at position 2)."},
		{"pop directional isolate", "x\u2069", "Name must not contain invisible or text-direction characters (U+2069 at position 2)."},
		{"left-to-right mark", "Rex\u200E", "Name must not contain invisible or text-direction characters (U+200E at position 4)."},
		{"right-to-left mark", "\u200FRex", "Name must not contain invisible or text-direction characters (U+200F at position 1)."},
		{"Arabic letter mark", "Re\u061Cx", "Name must not contain invisible or text-direction characters (U+061C at position 3)."},
		{"zero width space", "Re\u200Bx", "Name must not contain invisible or text-direction characters (U+200B at position 3)."},
		{"byte order mark", "\uFEFFRex", "Name must not contain invisible or text-direction characters (U+FEFF at position 1)."},
		{"word joiner", "Re\u2060x", "Name must not contain invisible or text-direction characters (U+2060 at position 3)."},
		{"soft hyphen", "Re\u00ADx", "Name must not contain invisible or text-direction characters (U+00AD at position 3)."},
		{"ZWJ between ASCII letters", "Re\u200Dx", "Name must not contain invisible or text-direction characters (U+200D at position 3)."},
		{"ZWNJ between ASCII letters", "Re\u200Cx", "Name must not contain invisible or text-direction characters (U+200C at position 3)."},
		{"trailing ZWJ after emoji", "🐶\u200D", "Name must not contain invisible or text-direction characters (U+200D at position 2)."},
		{"doubled ZWJ", "👨\u200D\u200D👩", "Name must not contain invisible or text-direction characters (U+200D at position 2)."},
		{"variation selector after ASCII letter", "Rex\uFE0F", "Name must not contain invisible or text-direction characters (U+FE0F at position 4)."},
		{"lone variation selector", "\uFE0F", "Name must not contain invisible or text-direction characters (U+FE0F at position 1)."},
		{"tag characters without a flag", "Rex\U000E0041\U000E0042", "Name must not contain invisible or text-direction characters (U+E0041 at position 4)."},
		{"unclosed flag tags", "🏴\U000E0067\U000E0062", "Name must not contain invisible or text-direction characters (U+E0067 at position 2)."},
		{"Hangul filler", "\u3164", "Name must not contain invisible or text-direction characters (U+3164 at position 1)."},
		{"combining grapheme joiner", "Re\u034Fx", "Name must not contain invisible or text-direction characters (U+034F at position 3)."},
		{"Mongolian vowel separator", "Re\u180Ex", "Name must not contain invisible or text-direction characters (U+180E at position 3)."},
		{"position counts characters, not bytes", "é🐶\u202E", "Name must not contain invisible or text-direction characters (U+202E at position 3)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Pet names (API and console).
			_, err := models.PetInput{Name: tt.in, CategoryID: "1"}.Validate()
			checkNameRule(t, "pet name", tt.in, tt.want, err)
			// API key names (console and CLI).
			_, err = models.ValidateKeyName(tt.in)
			checkNameRule(t, "key name", tt.in, tt.want, err)
		})
	}
}

func checkNameRule(t *testing.T, what, in, want string, err error) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s %q refused: %v", what, in, err)
		}
		return
	}
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest {
		t.Fatalf("%s %q: error = %v, want invalid_request", what, in, err)
	}
	if got := e.Field(models.FieldName); got != want {
		t.Errorf("%s %q: name message %q, want %q", what, in, got, want)
	}
}
