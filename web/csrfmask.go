package web

import (
	"crypto/rand"
	"encoding/base64"
)

// maskToken is the session's CSRF token tok as one answer shows it: a
// fresh random pad, then tok XORed with the pad, in base64url (as Django
// masks its token). Every answer carries other bytes, so the length of a
// compressed page tells nothing about the token, whatever text the
// requester put beside it (BREACH); any masked copy unmasks to tok.
func maskToken(tok string) string {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) == 0 {
		return tok // not one of randomToken's: nothing to mask
	}
	b := make([]byte, 2*len(raw))
	rand.Read(b[:len(raw)])
	for i, c := range raw {
		b[len(raw)+i] = c ^ b[i]
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// unmaskToken is the token a form or header sent, unmasked. A value that
// is not a masked token of randomToken's size is returned as it is: the
// plain token of a page served before tokens were masked still works, and
// anything else fails the comparison as before.
func unmaskToken(s string) string {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 2*tokenBytes {
		return s
	}
	for i := range tokenBytes {
		b[tokenBytes+i] ^= b[i]
	}
	return base64.RawURLEncoding.EncodeToString(b[tokenBytes:])
}
