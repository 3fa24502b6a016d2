package models

import (
	"context"

	"gorm.io/gorm"
)

// FirstUsername is the staff account created on an empty database.
const FirstUsername = "admin"

// Bootstrap is what Bootstrap created, to be shown once.
type Bootstrap struct {
	Username string
	Password string
	APIKey   string
}

// EnsureBootstrap creates the first staff account, an admin with a random
// password, and one API key when the database has no staff account. It returns nil when
// there was nothing to do, including when another instance starting at the
// same moment won the race.
func (s *Store) EnsureBootstrap(ctx context.Context) (*Bootstrap, error) {
	n, err := s.CountUsers(ctx)
	if err != nil || n > 0 {
		return nil, err
	}
	password := randomString(20)
	u, err := s.newUser(ctx, FirstUsername, password)
	if err != nil {
		return nil, err
	}
	u.Role = RoleAdmin
	k, key := s.newAPIKey(NewAPIKey{Name: "first key", Scopes: DefaultScopes}, ActorFirstStart)
	// One transaction: either both exist and are printed, or neither.
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		if err := insertUser(tx, &u, ActorFirstStart); err != nil {
			return err
		}
		return insertAPIKey(tx, &k)
	})
	if isDuplicate(err) {
		return nil, nil // another instance bootstrapped at the same moment
	}
	if err != nil {
		return nil, s.dbErr("bootstrap", err)
	}
	return &Bootstrap{Username: FirstUsername, Password: password, APIKey: key}, nil
}
