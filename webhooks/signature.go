package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret, so a leaked one is recognisable
// (secret scanners, logs) and cannot be mistaken for an API key.
const SecretPrefix = "whsec_"

// SignatureHeader is the header a delivery carries its signature in.
const SignatureHeader = "Petstore-Signature"

// NewSecret returns a new signing secret: SecretPrefix and 32 random bytes
// (256 bits, as much as HMAC-SHA256 can use) in unpadded base64url, so it
// survives a shell, a URL or an environment variable unquoted.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails: crypto/rand crashes the program instead
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// Signature returns the SignatureHeader value for a delivery of body at t:
// "t=<unix seconds>,v1=<hex>", with one v1 per secret in the order given
// (the current secret first, then during a rotation the previous one), so a
// receiver still holding the old secret keeps verifying. Each v1 is
// HMAC-SHA256 keyed with the secret exactly as printed, prefix included, over
// "<t>." followed by the body: the timestamp is signed too, so a captured
// delivery cannot be replayed later under a fresh one.
func Signature(t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(ts)
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(sign(s, ts, body)))
	}
	return b.String()
}

func sign(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// The reasons Verify refuses a delivery, for errors.Is.
var (
	// ErrMalformedSignature: the header is not t=...,v1=... as Signature
	// writes it.
	ErrMalformedSignature = errors.New("malformed signature header")
	// ErrSignatureMismatch: no v1 was made with the secret over this body
	// and timestamp, so the delivery is forged, altered or for another
	// endpoint.
	ErrSignatureMismatch = errors.New("no signature matches the secret")
	// ErrTimestampOutOfTolerance: the signature is genuine but too old or
	// too far ahead, as a replayed delivery would be.
	ErrTimestampOutOfTolerance = errors.New("signature timestamp outside the tolerance")
)

// Verify is what a receiver does with a delivery: it checks that header (the
// SignatureHeader value) holds a v1 made with secret over body, compared in
// constant time so timing reveals nothing of the expected value, and that its
// timestamp is within tolerance of now either way, which bounds replays.
// Keys other than t and v1 are ignored, so a receiver keeps working when a
// later scheme is added beside v1.
func Verify(header string, body []byte, secret string, tolerance time.Duration, now time.Time) error {
	ts, sigs, err := parseSignature(header)
	if err != nil {
		return err
	}
	want := sign(secret, ts, body)
	matched := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			matched = true
		}
	}
	if !matched {
		return ErrSignatureMismatch
	}
	sec, _ := strconv.ParseInt(ts, 10, 64)
	signed := time.Unix(sec, 0)
	age := now.Sub(signed)
	if age >= -tolerance && age <= tolerance {
		return nil
	}
	when := age.Round(time.Second).String() + " ago"
	if age < 0 {
		when = signed.Sub(now).Round(time.Second).String() + " ahead"
	}
	return fmt.Errorf("%w: signed at %s, %s, tolerance %s",
		ErrTimestampOutOfTolerance, signed.UTC().Format(time.RFC3339), when, tolerance)
}

// parseSignature returns the header's timestamp exactly as signed and its
// v1 signatures decoded.
func parseSignature(header string) (ts string, sigs [][]byte, err error) {
	if strings.TrimSpace(header) == "" {
		return "", nil, fmt.Errorf("%w: the header is empty", ErrMalformedSignature)
	}
	for item := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return "", nil, fmt.Errorf("%w: %q is not key=value", ErrMalformedSignature, item)
		}
		switch key {
		case "t":
			if ts != "" {
				return "", nil, fmt.Errorf("%w: more than one t", ErrMalformedSignature)
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || strconv.FormatInt(n, 10) != value {
				return "", nil, fmt.Errorf("%w: t=%q is not unix seconds", ErrMalformedSignature, value)
			}
			ts = value
		case "v1":
			sig, err := hex.DecodeString(value)
			if err != nil || len(sig) != sha256.Size {
				return "", nil, fmt.Errorf("%w: v1=%q is not a hex HMAC-SHA256", ErrMalformedSignature, value)
			}
			sigs = append(sigs, sig)
		}
	}
	if ts == "" {
		return "", nil, fmt.Errorf("%w: no t", ErrMalformedSignature)
	}
	if len(sigs) == 0 {
		return "", nil, fmt.Errorf("%w: no v1", ErrMalformedSignature)
	}
	return ts, sigs, nil
}
