package models

import (
	"fmt"
	"unicode"
)

// Names (of pets and API keys) are shown to staff as they are stored, so a
// name must not be able to look like something else: characters that are
// invisible or that reorder the text around them are refused, by one rule
// shared by every name (hiddenCharMessage).
//
// Refused: every format character (Unicode category Cf: the bidi embeddings,
// overrides and isolates U+202A-U+202E and U+2066-U+2069, the marks U+200E,
// U+200F and U+061C, zero width space U+200B, word joiner U+2060, byte order
// mark U+FEFF, soft hyphen U+00AD, tag characters, ...), every other
// default-ignorable code point (Hangul fillers U+115F, U+1160, U+3164,
// U+FFA0, combining grapheme joiner U+034F, ...) and variation selectors,
// with these exceptions, which emoji and several scripts need and which
// show as part of the character they belong to:
//   - the prepended concatenation marks (Arabic number signs U+0600-U+0605
//     and the like), which are format characters but visible;
//   - ZERO WIDTH JOINER U+200D and ZERO WIDTH NON-JOINER U+200C between two
//     visible non-ASCII characters: emoji sequences (👨‍👩‍👧), Persian and
//     Indic spellings. Between ASCII letters they only hide ("Re‍x");
//   - a variation selector right after a visible non-ASCII character or a
//     keycap base (0-9, # or *): emoji presentation (❤️, 1️⃣);
//   - tag characters U+E0020-U+E007E closed by CANCEL TAG U+E007F right
//     after WAVING BLACK FLAG U+1F3F4: subdivision flags (🏴󠁧󠁢󠁳󠁣󠁴󠁿).
// Everything else in Unicode is accepted; control characters (Cc) are
// refused by their own check.

// hidden reports characters of the refused kinds above, before the
// exceptions that depend on their neighbours.
func hidden(r rune) bool {
	return (unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r)) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

const (
	zeroWidthNonJoiner = '\u200C'
	zeroWidthJoiner    = '\u200D'
	wavingBlackFlag    = '\U0001F3F4'
	cancelTag          = '\U000E007F'
)

// hiddenChar returns the first character of name that the rule refuses and
// its position in name, counted in characters from 1.
func hiddenChar(name string) (rune, int, bool) {
	runes := []rune(name)
	allowed := make([]bool, len(runes))
	// visible is a character a joiner or a selector may attach to.
	visible := func(i int) bool {
		r := runes[i]
		return r > unicode.MaxASCII && !unicode.IsSpace(r) && (!hidden(r) || allowed[i])
	}
	for i, r := range runes {
		if r == wavingBlackFlag {
			j := i + 1
			for j < len(runes) && runes[j] >= '\U000E0020' && runes[j] <= '\U000E007E' {
				j++
			}
			if j > i+1 && j < len(runes) && runes[j] == cancelTag {
				for k := i + 1; k <= j; k++ {
					allowed[k] = true
				}
			}
		}
	}
	for i, r := range runes {
		if !hidden(r) || allowed[i] {
			continue
		}
		switch {
		case r == zeroWidthJoiner || r == zeroWidthNonJoiner:
			// The next character is checked as not hidden at all: a joiner
			// joins two characters that show.
			allowed[i] = i > 0 && i+1 < len(runes) && visible(i-1) &&
				runes[i+1] > unicode.MaxASCII && !unicode.IsSpace(runes[i+1]) && !hidden(runes[i+1])
		case unicode.Is(unicode.Variation_Selector, r):
			allowed[i] = i > 0 && (visible(i-1) || (runes[i-1] >= '0' && runes[i-1] <= '9') || runes[i-1] == '#' || runes[i-1] == '*')
		}
		if !allowed[i] {
			return r, i + 1, true
		}
	}
	return 0, 0, false
}

// hiddenCharMessage returns the message for a name that holds a refused
// character, or "".
func hiddenCharMessage(name string) string {
	r, pos, ok := hiddenChar(name)
	if !ok {
		return ""
	}
	return fmt.Sprintf("Name must not contain invisible or text-direction characters (U+%04X at position %d).", r, pos)
}
