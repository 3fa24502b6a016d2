package models

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// SecretKeyLen is the length of a key that encrypts secrets the service
// must read back (the authenticator app's shared secrets): AES-256.
const SecretKeyLen = 32

// secretKeys encrypts and decrypts the secrets stored in the database with
// keys that are not in it (PETSTORE_SECRET_KEY), so a dump of the database
// alone does not hold them. Each ciphertext is stored beside the id of the
// key that sealed it, so a key can be replaced while the old one still
// opens what it sealed (PETSTORE_SECRET_KEYS_OLD), until every secret has
// been sealed again under the new one (RekeySecrets).
type secretKeys struct {
	current string // id of the key new secrets are sealed with; "" when none is set
	aeads   map[string]cipher.AEAD
}

// ErrNoSecretKey refuses what needs the secret key when the service was
// started without one.
var ErrNoSecretKey = &Error{Code: CodeUnavailable,
	Message: "Two-step sign-in is not available: the server has no secret key (PETSTORE_SECRET_KEY). Ask the team that runs the console to set one."}

// errSecretKeyMissing is the cause of a secret that no configured key opens.
var errSecretKeyMissing = errors.New("the key this secret was sealed with is not configured (PETSTORE_SECRET_KEY, PETSTORE_SECRET_KEYS_OLD)")

// SecretKeyID names a key without revealing it: the first 8 bytes of its
// SHA-256, in hex.
func SecretKeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:8])
}

// newSecretKeys takes the current key first, then older ones.
func newSecretKeys(keys [][]byte) (secretKeys, error) {
	k := secretKeys{aeads: map[string]cipher.AEAD{}}
	for i, key := range keys {
		if len(key) != SecretKeyLen {
			return secretKeys{}, fmt.Errorf("secret key %d: %d bytes, want %d", i+1, len(key), SecretKeyLen)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return secretKeys{}, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return secretKeys{}, err
		}
		id := SecretKeyID(key)
		if i == 0 {
			k.current = id
		}
		k.aeads[id] = aead
	}
	return k, nil
}

// seal encrypts plain under the current key, bound to context (what the
// secret is and whose, so a ciphertext copied onto another row does not
// open there). It returns the key's id and the ciphertext, base64.
func (k secretKeys) seal(plain []byte, context string) (keyID, sealed string, err error) {
	if k.current == "" {
		return "", "", ErrNoSecretKey
	}
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", "", internal("random nonce", err)
	}
	out := aead.Seal(nonce, nonce, plain, []byte(context))
	return k.current, base64.StdEncoding.EncodeToString(out), nil
}

// open decrypts what seal returned.
func (k secretKeys) open(keyID, sealed, context string) ([]byte, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("key %s: %w", keyID, errSecretKeyMissing)
	}
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, fmt.Errorf("sealed secret under key %s is malformed", keyID)
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(context))
	if err != nil {
		return nil, fmt.Errorf("sealed secret under key %s does not open: %w", keyID, err)
	}
	return plain, nil
}
