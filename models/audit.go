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
	ActionPetCreated  = "pet.created"
	ActionKeyCreated  = "apikey.created"
	ActionKeyRevoked  = "apikey.revoked"
	ActionUserCreated = "user.created"

	TargetPet    = "pet"
	TargetAPIKey = "apikey"
	TargetUser   = "user"
)
