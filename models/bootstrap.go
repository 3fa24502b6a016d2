package models

import (
	"context"
	"errors"
)

// FirstUsername is the staff account created on an empty database.
const FirstUsername = "admin"

// Bootstrap is what Bootstrap created, to be shown once.
type Bootstrap struct {
	Username string
	Password string
	APIKey   string
}

// EnsureBootstrap creates the first staff account, with a random password,
// and one API key when the database has no staff account. It returns nil when
// there was nothing to do, including when another instance starting at the
// same moment won the race.
func (s *Store) EnsureBootstrap(ctx context.Context) (*Bootstrap, error) {
	n, err := s.CountUsers(ctx)
	if err != nil || n > 0 {
		return nil, err
	}
	password := randomString(20)
	if _, err := s.CreateUser(ctx, FirstUsername, password, "bootstrap"); err != nil {
		if errors.Is(err, &Error{Code: CodeConflict}) {
			return nil, nil
		}
		return nil, err
	}
	_, key, err := s.CreateAPIKey(ctx, "first key", "bootstrap")
	if err != nil {
		return nil, err
	}
	return &Bootstrap{Username: FirstUsername, Password: password, APIKey: key}, nil
}
