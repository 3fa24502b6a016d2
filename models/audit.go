package models

import (
	"context"
	"strings"
	"time"
)

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
	ActionPetStatusChanged = "pet.status_changed"
	ActionPetEdited        = "pet.edited"
	ActionPetsSeeded       = "pet.seeded"
	ActionPetsExported     = "pet.exported"
	ActionKeyCreated       = "apikey.created"
	ActionKeyRevoked       = "apikey.revoked"
	ActionUserCreated      = "user.created"
	ActionPasswordChanged  = "user.password_changed"
	ActionLogin            = "user.login"
	ActionLoginFailed      = "user.login_failed"
	ActionUserDisabled     = "user.disabled"
	ActionUserEnabled      = "user.enabled"
	ActionPasswordReset    = "user.password_reset"
	ActionSessionsEnded    = "user.sessions_ended"
	ActionSessionEnded     = "user.session_ended"
	ActionRoleChanged      = "user.role_changed"
	// ActionForbidden is a console request refused for the member's role.
	ActionForbidden = "console.forbidden"

	TargetPet    = "pet"
	TargetAPIKey = "apikey"
	TargetUser   = "user"
)

// AuditActions lists every action, for filters.
var AuditActions = []string{ActionPetCreated, ActionPetStatusChanged, ActionPetEdited, ActionPetsSeeded, ActionPetsExported, ActionKeyCreated, ActionKeyRevoked,
	ActionUserCreated, ActionPasswordChanged, ActionLogin, ActionLoginFailed,
	ActionUserDisabled, ActionUserEnabled, ActionPasswordReset, ActionSessionsEnded, ActionSessionEnded,
	ActionRoleChanged, ActionForbidden}

// AuditQuery selects one page of the audit trail, newest first.
type AuditQuery struct {
	// Action filters by one of AuditActions when not "".
	Action string
	// Actor filters by the exact actor when not "".
	Actor string
	// TargetType and TargetID filter by what was acted on when set.
	TargetType string
	TargetID   int64
	// Before returns events older than this id (keyset paging); 0 is the newest.
	Before int64
	Limit  int
}

// ParseAuditQuery validates audit filters as given in a console URL.
func ParseAuditQuery(action, actor, target, before string) (AuditQuery, error) {
	v := validation{}
	q := AuditQuery{Limit: 50, Actor: actor}
	if action != "" {
		ok := false
		for _, a := range AuditActions {
			ok = ok || a == action
		}
		if !ok {
			v.add("action", "Action must be one of the listed actions.")
		}
		q.Action = action
	}
	if target != "" {
		// target is "pet:12", "apikey:3" or "user:1".
		typ, id, _ := strings.Cut(target, ":")
		n, ok := ParseID(id)
		if (typ != TargetPet && typ != TargetAPIKey && typ != TargetUser) || !ok {
			v.add("target", "Target must look like pet:12, apikey:3 or user:1.")
		}
		q.TargetType, q.TargetID = typ, n
	}
	if before != "" {
		n, ok := ParseID(before)
		if !ok {
			v.add("before", "Before must be an event id.")
		}
		q.Before = n
	}
	if err := v.err(); err != nil {
		return AuditQuery{}, err
	}
	return q, nil
}

// ListAuditEvents returns one page of events, newest first, and whether
// older ones follow. Filters use the table's indexes; nothing counts rows.
func (s *Store) ListAuditEvents(ctx context.Context, q AuditQuery) ([]AuditEvent, bool, error) {
	if q.Limit < 1 || q.Limit > 200 {
		q.Limit = 50
	}
	tx := s.db.WithContext(ctx).Model(&AuditEvent{})
	if q.Action != "" {
		tx = tx.Where("action = ?", q.Action)
	}
	if q.Actor != "" {
		tx = tx.Where("actor = ?", q.Actor)
	}
	if q.TargetType != "" {
		tx = tx.Where("target_type = ? AND target_id = ?", q.TargetType, q.TargetID)
	}
	if q.Before > 0 {
		tx = tx.Where("id < ?", q.Before)
	}
	events := make([]AuditEvent, 0, q.Limit+1)
	if err := tx.Order("id DESC").Limit(q.Limit + 1).Find(&events).Error; err != nil {
		return nil, false, s.dbErr("list audit events", err)
	}
	more := len(events) > q.Limit
	if more {
		events = events[:q.Limit]
	}
	return events, more, nil
}
