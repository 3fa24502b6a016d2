package models

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Password rules, after NIST SP 800-63B (5.1.1.2): a length floor, no
// composition rules, and a refusal of passwords that are known to be
// common or that come from the context (the username). bcrypt reads at
// most 72 bytes, so longer is refused rather than silently cut.
const (
	MinPasswordLength   = 12
	maxPasswordBytes    = 72
	defaultPasswordCost = 12
)

// commonPasswordsGz is the password dictionary of zxcvbn-ts
// (@zxcvbn-ts/language-common 4.1.3, MIT), one password per line, most
// common first; see passwords/README.md for its source and checksums.
//
//go:embed passwords/common.txt.gz
var commonPasswordsGz []byte

// commonPasswords is the embedded list as a set, read on first use.
var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	zr, err := gzip.NewReader(bytes.NewReader(commonPasswordsGz))
	if err != nil {
		panic("models: embedded password list: " + err.Error())
	}
	set := make(map[string]struct{}, 50000)
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if w := strings.TrimSpace(sc.Text()); w != "" {
			set[strings.ToLower(w)] = struct{}{}
		}
	}
	if err := sc.Err(); err != nil {
		panic("models: embedded password list: " + err.Error())
	}
	return set
})

// isCommonPassword reports whether pw is on the list once case and white
// space are set aside: "  Password12 " and "password 12" are the listed
// "password12" all the same. Entries shorter than MinPasswordLength still
// count for this reason, so the whole list is kept.
func isCommonPassword(pw string) bool {
	folded := strings.ToLower(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, pw))
	_, ok := commonPasswords()[folded]
	return ok
}

// ValidatePassword checks a new password for the account username: at least
// MinPasswordLength characters (Unicode code points) and at most 72 bytes;
// not one character repeated; not the username (in any case, nor with only
// white space or digits around the password or the username); not on the list of
// common passwords. Any characters are allowed, spaces included. The error
// says which rule was broken, on FieldPassword, and never repeats
// the password.
func ValidatePassword(pw, username string) error {
	msg := ""
	switch {
	case utf8.RuneCountInString(pw) < MinPasswordLength:
		msg = fmt.Sprintf("Password must be at least %d characters.", MinPasswordLength)
	case len(pw) > maxPasswordBytes:
		msg = fmt.Sprintf("Password must be at most %d bytes.", maxPasswordBytes)
	case oneRepeatedCharacter(pw):
		msg = "Password must not be one character repeated."
	case isUsername(pw, username):
		msg = "Password must not be the username."
	case isCommonPassword(pw):
		msg = "This password is on a list of commonly used passwords; choose another."
	}
	if msg != "" {
		return fieldError(FieldPassword, msg)
	}
	return nil
}

// oneRepeatedCharacter reports a password made of a single character, such
// as ten spaces or "aaaaaaaaaaaa".
func oneRepeatedCharacter(pw string) bool {
	first, _ := utf8.DecodeRuneInString(pw)
	return strings.Trim(pw, string(first)) == ""
}

// isUsername reports a password that is the username, ignoring case and
// the digits or white space around either of them ("Alice2024!" is not
// refused, but "alice 2024", "2024alice", and "rtpolab12c45678" for the
// username rtpolab12c45678 or rtpolab12c are): such a password is the first
// guess anyone makes against a known account.
func isUsername(pw, username string) bool {
	name := normalUsername(username)
	if name == "" {
		return false
	}
	pw = strings.ToLower(strings.TrimSpace(pw))
	if pw == name {
		return true
	}
	core := trimDigitsAndSpace(name)
	return core != "" && trimDigitsAndSpace(pw) == core
}

// trimDigitsAndSpace removes the digits and white space around s.
func trimDigitsAndSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsDigit(r) })
}
