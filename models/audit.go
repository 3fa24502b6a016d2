package models

import "time"

// AuditEvent records who did what to which pet, key or account, and when.
type AuditEvent struct {
	ID         int64
	At         time.Time
	Actor      string
	Action     string
	TargetType string
	TargetID   int64
	Detail     string
}

// Audit actions and target types.
const (
	ActionPetCreated       = "pet.created"
	ActionKeyCreated       = "apikey.created"
	ActionKeyRevoked       = "apikey.revoked"
	ActionUserCreated      = "user.created"
	ActionPetStatusChanged = "pet.status_changed"
	ActionPasswordChanged  = "user.password_changed"
	ActionLogin            = "user.login"
	ActionLoginFailed      = "user.login_failed"

	TargetPet    = "pet"
	TargetAPIKey = "apikey"
	TargetUser   = "user"
)
