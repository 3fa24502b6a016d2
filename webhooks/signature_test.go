package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"petstore/webhooks"
)

func TestNewSecret(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		s := webhooks.NewSecret()
		rest, ok := strings.CutPrefix(s, "whsec_")
		if !ok {
			t.Fatalf("NewSecret() = %q; want the whsec_ prefix", s)
		}
		b, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil || len(b) != 32 {
			t.Fatalf("NewSecret() = %q: %d bytes, %v; want 32 bytes of unpadded base64url", s, len(b), err)
		}
		if seen[s] {
			t.Fatalf("NewSecret() gave %q twice", s)
		}
		seen[s] = true
	}
}

// hmacHex is the signature computed here independently of the package, as a
// receiver in another language would.
func hmacHex(secret, message string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(message))
	return hex.EncodeToString(m.Sum(nil))
}

func TestSignatureKnownVector(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"id":"42","type":"pet.created"}`)
	at := time.Unix(1700000000, 999_000_000)

	got := webhooks.Signature(at, body, secret)
	want := "t=1700000000,v1=" + hmacHex(secret, `1700000000.{"id":"42","type":"pet.created"}`)
	if got != want {
		t.Errorf("Signature = %q\nwant        %q", got, want)
	}
	// Fixed (computed with openssl dgst -sha256 -hmac), so that a change of
	// key or message format cannot pass by changing both sides at once.
	const fixed = "t=1700000000,v1=9d457bcb6e13ba9909d90a7015ed352d28a84222059c448414d084a353bcbc51"
	if got != fixed {
		t.Errorf("Signature = %q\nwant fixed  %q", got, fixed)
	}
}

func TestSignatureTwoSecretsInOrder(t *testing.T) {
	t.Parallel()
	current, previous := webhooks.NewSecret(), webhooks.NewSecret()
	body := []byte(`{"type":"ping"}`)
	at := time.Unix(1700000123, 0)
	got := webhooks.Signature(at, body, current, previous)
	want := "t=1700000123,v1=" + hmacHex(current, "1700000123."+string(body)) +
		",v1=" + hmacHex(previous, "1700000123."+string(body))
	if got != want {
		t.Errorf("Signature = %q\nwant        %q", got, want)
	}
	for _, s := range []string{current, previous} {
		if err := webhooks.Verify(got, body, s, 5*time.Minute, at); err != nil {
			t.Errorf("Verify with one of the two secrets = %v; want nil", err)
		}
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	secret := webhooks.NewSecret()
	body := []byte(`{"id":"7","type":"pet.updated"}`)
	at := time.Unix(1700000000, 0)
	header := webhooks.Signature(at, body, secret)
	const tolerance = 5 * time.Minute

	for _, tc := range []struct {
		name   string
		header string
		body   []byte
		secret string
		now    time.Time
		want   error
	}{
		{"genuine", header, body, secret, at, nil},
		{"genuine, a little later", header, body, secret, at.Add(tolerance), nil},
		{"genuine, clock a little behind", header, body, secret, at.Add(-tolerance), nil},
		{"spaces after commas", strings.ReplaceAll(header, ",", ", "), body, secret, at, nil},
		{"an unknown scheme beside v1", header + ",v2=abc", body, secret, at, nil},
		{"wrong secret", header, body, webhooks.NewSecret(), at, webhooks.ErrSignatureMismatch},
		{"secret without its prefix", header, body, strings.TrimPrefix(secret, "whsec_"), at, webhooks.ErrSignatureMismatch},
		{"modified body", header, []byte(`{"id":"8","type":"pet.updated"}`), secret, at, webhooks.ErrSignatureMismatch},
		{"modified timestamp", strings.Replace(header, "t=1700000000", "t=1700000001", 1), body, secret, at, webhooks.ErrSignatureMismatch},
		{"stale", header, body, secret, at.Add(tolerance + time.Second), webhooks.ErrTimestampOutOfTolerance},
		{"from the future", header, body, secret, at.Add(-tolerance - time.Second), webhooks.ErrTimestampOutOfTolerance},
		{"empty", "", body, secret, at, webhooks.ErrMalformedSignature},
		{"no t", header[strings.Index(header, "v1="):], body, secret, at, webhooks.ErrMalformedSignature},
		{"no v1", "t=1700000000", body, secret, at, webhooks.ErrMalformedSignature},
		{"two t", "t=1700000000," + header, body, secret, at, webhooks.ErrMalformedSignature},
		{"t not a number", strings.Replace(header, "t=1700000000", "t=soon", 1), body, secret, at, webhooks.ErrMalformedSignature},
		{"t with a leading zero", strings.Replace(header, "t=1700000000", "t=01700000000", 1), body, secret, at, webhooks.ErrMalformedSignature},
		{"v1 not hex", "t=1700000000,v1=zz", body, secret, at, webhooks.ErrMalformedSignature},
		{"v1 too short", header[:len(header)-2], body, secret, at, webhooks.ErrMalformedSignature},
		{"item without =", header + ",junk", body, secret, at, webhooks.ErrMalformedSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhooks.Verify(tc.header, tc.body, tc.secret, tolerance, tc.now)
			if tc.want == nil && err != nil || !errors.Is(err, tc.want) {
				t.Errorf("Verify(%q) = %v; want %v", tc.header, err, tc.want)
			}
		})
	}
}

// ExampleVerify is what a partner's receiver does before trusting a
// delivery.
func ExampleVerify() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // as printed by petstore webhook create
	body := []byte(`{"id":"42","type":"pet.created"}`)
	header := "t=1700000000,v1=9d457bcb6e13ba9909d90a7015ed352d28a84222059c448414d084a353bcbc51" // the Petstore-Signature header
	now := time.Unix(1700000060, 0)

	if err := webhooks.Verify(header, body, secret, 5*time.Minute, now); err != nil {
		fmt.Println("refuse the delivery:", err)
		return
	}
	fmt.Println("process the event, once per event id")

	err := webhooks.Verify(header, body, secret, 5*time.Minute, now.Add(time.Hour))
	fmt.Println(err)
	// Output:
	// process the event, once per event id
	// signature timestamp outside the tolerance: signed at 2023-11-14T22:13:20Z, 1h1m0s ago, tolerance 5m0s
}
