package models

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
)

// AuditEvent records who did what to which pet, key or account, and when.
type AuditEvent struct {
	ID    int64
	At    time.Time
	Actor string
	// ActorKind says what Actor names; empty when writing means
	// ActorKindOf(Actor).
	ActorKind  ActorKind
	Action     string
	TargetType string
	TargetID   int64
	Detail     string
	// Occurrences is how many times the event happened: more than one
	// only for events recorded in bounded form (RecordForbidden).
	Occurrences int `gorm:"default:1"`
	// CoalesceKey names the one row that repeats of a bounded event add
	// to; nil for every other event.
	CoalesceKey *string
}

// BeforeCreate fills in the actor's kind.
func (e *AuditEvent) BeforeCreate(*gorm.DB) error {
	if e.ActorKind == "" {
		e.ActorKind = ActorKindOf(e.Actor)
	}
	return nil
}

// ActorKind is what acted: a staff member, a partner's API key, the
// command line, the service itself on its first start, or someone who is
// no account (a failed sign-in with an unknown username).
type ActorKind string

// The actor kinds.
const (
	ActorKindStaff     ActorKind = "staff"
	ActorKindAPIKey    ActorKind = "apikey"
	ActorKindCLI       ActorKind = "cli"
	ActorKindSystem    ActorKind = "system"
	ActorKindAnonymous ActorKind = "anonymous"
)

// The actors that are no staff member. Their names are reserved
// (ReservedUsername), so no account can take one and be credited with what
// the command line or the first start did.
const (
	// ActorCLI is the command line (petstore user, apikey, seed).
	ActorCLI = "cli"
	// ActorFirstStart is the service creating the first account and key.
	ActorFirstStart = "bootstrap"
	// apiKeyActorPrefix starts the actor of a request made with an API key:
	// "apikey <prefix> (<name>)", which a username (no spaces) cannot be.
	apiKeyActorPrefix = "apikey "
)

// ActorKindOf returns the kind of the actor named actor. The names of the
// other kinds are not usernames (reserved, or holding a space or a
// parenthesis), so a staff member is never taken for one.
func ActorKindOf(actor string) ActorKind {
	switch {
	case actor == ActorCLI:
		return ActorKindCLI
	case actor == ActorFirstStart:
		return ActorKindSystem
	case strings.HasPrefix(actor, apiKeyActorPrefix):
		return ActorKindAPIKey
	case actor == unknownAccount || actor == "anonymous":
		return ActorKindAnonymous
	}
	return ActorKindStaff
}

// ReservedUsername reports whether name (lower case) is one the system
// acts under, which no staff account may take.
func ReservedUsername(name string) bool {
	switch name {
	case ActorCLI, ActorFirstStart, "system", "anonymous":
		return true
	}
	return false
}

// Audit actions and target types.
const (
	ActionPetCreated       = "pet.created"
	ActionPetStatusChanged = "pet.status_changed"
	ActionPetEdited        = "pet.edited"
	ActionPetsSeeded       = "pet.seeded"
	ActionPetsExported     = "pet.exported"
	ActionPetsBulkStatus   = "pet.bulk_status_changed"
	ActionPetArchived      = "pet.archived"
	ActionPetRestored      = "pet.restored"
	// ActionPetsPurged is one batch of archived pets deleted for good
	// after ARCHIVE_RETENTION; its detail lists their ids.
	ActionPetsPurged      = "pet.purged"
	ActionPetsBulkArchive = "pet.bulk_archived"
	// ActionPetUndone is a pet's values put back by an undo.
	ActionPetUndone       = "pet.undone"
	ActionPetsImported    = "pet.imported"
	ActionKeyCreated      = "apikey.created"
	ActionKeyRevoked      = "apikey.revoked"
	ActionUserCreated     = "user.created"
	ActionPasswordChanged = "user.password_changed"
	ActionLogin           = "user.login"
	// ActionPasswordAccepted is the first step of a member with a second:
	// the password was right, the sign-in waits for the second step.
	ActionPasswordAccepted = "user.password_accepted"
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
var AuditActions = []string{ActionPetCreated, ActionPetStatusChanged, ActionPetEdited, ActionPetsSeeded, ActionPetsExported, ActionPetsBulkStatus, ActionPetArchived, ActionPetRestored, ActionPetsPurged, ActionPetsBulkArchive, ActionPetUndone, ActionPetsImported, ActionKeyCreated, ActionKeyRevoked,
	ActionUserCreated, ActionPasswordChanged, ActionLogin, ActionPasswordAccepted, ActionLoginFailed,
	ActionUserDisabled, ActionUserEnabled, ActionPasswordReset, ActionSessionsEnded, ActionSessionEnded,
	ActionRoleChanged, ActionForbidden, ActionWebhookCreated, ActionWebhookDeleted, ActionWebhookDisabled, ActionWebhookEnabled,
	ActionWebhookSecretRotated, ActionWebhookTestSent, ActionWebhookDeliveryResent,
	ActionTwoFactorEnabled, ActionTwoFactorDisabled, ActionTwoFactorReset, ActionRecoveryCodesRenewed, ActionRecoveryCodeUsed,
	ActionSecondStepFailed, ActionTwoFactorRequired, ActionTwoFactorOptional, ActionPasskeyAdded, ActionPasskeyRemoved}

// AuditQuery selects one page of the audit trail, newest first.
type AuditQuery struct {
	// Action filters by one of AuditActions when not "".
	Action string
	// Actor filters by the exact actor when not "".
	Actor string
	// ActorKind filters by the kind of actor when not "".
	ActorKind ActorKind
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
	if actor != "" {
		// The kind too: a name alone could be taken by an account.
		q.ActorKind = ActorKindOf(actor)
	}
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
		// target is "pet:12", "apikey:3", "user:1" or "webhook:2".
		typ, id, _ := strings.Cut(target, ":")
		n, ok := ParseID(id)
		if (typ != TargetPet && typ != TargetAPIKey && typ != TargetUser && typ != TargetWebhook) || !ok {
			v.add("target", "Target must look like pet:12, apikey:3, user:1 or webhook:2.")
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
	if q.ActorKind != "" {
		tx = tx.Where("actor_kind = ?", q.ActorKind)
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
