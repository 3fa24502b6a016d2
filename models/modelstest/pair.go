package modelstest

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"petstore/models"
)

// OpenPair returns two stores over one fresh, migrated database on driver,
// as two instances of the service would be; both close when the test ends.
func OpenPair(tb testing.TB, driver string) (a, b *models.Store) {
	tb.Helper()
	cfg := Database(tb, driver)
	open := func() *models.Store {
		s, err := models.Open(context.Background(), models.Options{Driver: string(cfg.Driver), DSN: cfg.DSN,
			ConnectTimeout: 20 * time.Second, MaxOpenConns: 20, PasswordCost: bcrypt.MinCost,
			SecretKeys: [][]byte{SecretKey}})
		if err != nil {
			tb.Fatalf("open %s: %v", cfg.Redacted, err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	}
	a = open()
	if _, err := a.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrate %s: %v", cfg.Redacted, err)
	}
	return a, open()
}

// SecretKey is the key that seals the secrets of the stores this package
// opens (models.Options.SecretKeys): fixed, so that two stores over one
// database, as two instances, read each other's.
var SecretKey = []byte("petstore-test-secret-key-32bytes")
