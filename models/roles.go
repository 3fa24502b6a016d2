package models

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Role is what a staff account may do in the console. Each role may do
// everything the ones before it in Roles may.
type Role string

// The roles. A viewer reads every console page; an editor also adds pets
// and changes them; an admin also manages API keys and staff accounts.
const (
	RoleViewer Role = "viewer"
	RoleEditor Role = "editor"
	RoleAdmin  Role = "admin"
)

// Roles lists the roles from the least allowed to the most.
var Roles = []Role{RoleViewer, RoleEditor, RoleAdmin}

// FieldRole is the role field of the staff forms, as FieldError names it.
const FieldRole = "role"

// RoleMessage says which roles there are, for a refused one.
const RoleMessage = "Role must be viewer, editor or admin."

// ParseRole checks a role as typed: exactly one of the three values.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !slices.Contains(Roles, r) {
		return "", fieldError(FieldRole, RoleMessage)
	}
	return r, nil
}

// Allows reports whether an account of role r may do what needs the role
// need. An unknown role allows nothing, and nothing allows an unknown need.
func (r Role) Allows(need Role) bool {
	have, want := slices.Index(Roles, r), slices.Index(Roles, need)
	return have >= 0 && want >= 0 && have >= want
}

// errLastAdminRole and errLastAdminDisable refuse to leave the console
// without an enabled admin: nobody could then manage keys and accounts.
var (
	errLastAdminRole = &Error{Code: CodeConflict,
		Message: "This is the last enabled admin, so its role cannot be lowered: make another enabled account an admin first."}
	errLastAdminDisable = &Error{Code: CodeConflict,
		Message: "This is the last enabled admin, so it cannot be disabled: make another enabled account an admin first."}
)

// lockAccounts locks every staff account's row for the rest of tx, in id
// order, and returns them. The rules that keep an enabled account and an
// enabled admin (DisableUser, SetRole) count over this set. On InnoDB a
// locking read waits for the transaction holding the rows and then reads
// its committed change, so of two admins lowering or disabling each other
// at once the second sees the first's result and stops; a plain read (a
// snapshot) would let both succeed. Every row is locked, not only the
// admins', so the set cannot change under the count; the table holds staff,
// not customers, and rows are taken in id order, so callers queue instead
// of deadlocking. SQLite transactions are immediate: they run one at a time.
func lockAccounts(tx *gorm.DB) ([]User, error) {
	var accounts []User
	err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Order("id").Find(&accounts).Error
	return accounts, err
}

// findAccount returns the account id among accounts, or
// gorm.ErrRecordNotFound.
func findAccount(accounts []User, id int64) (User, error) {
	i := slices.IndexFunc(accounts, func(a User) bool { return a.ID == id })
	if i < 0 {
		return User{}, gorm.ErrRecordNotFound
	}
	return accounts[i], nil
}

// enabledCount returns how many of accounts are enabled and, among them,
// admins.
func enabledCount(accounts []User) (enabled, admins int) {
	for _, a := range accounts {
		if !a.Disabled() {
			enabled++
			if a.Role == RoleAdmin {
				admins++
			}
		}
	}
	return enabled, admins
}

// SetRole gives the account id the role. Lowering the last enabled admin
// is refused (conflict), also when two admins lower each other at the same
// moment. Setting the role an account has changes nothing and records
// nothing. The account's sessions go on: each request reads the role anew.
func (s *Store) SetRole(ctx context.Context, id int64, role Role, actor string) (User, error) {
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	var u User
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		accounts, err := lockAccounts(tx)
		if err != nil {
			return err
		}
		if u, err = findAccount(accounts, id); err != nil || u.Role == role {
			return err
		}
		if _, admins := enabledCount(accounts); u.Role == RoleAdmin && !u.Disabled() && admins == 1 {
			return errLastAdminRole
		}
		now, old := s.now(), u.Role
		if err := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{"role": role, "updated_at": now}).Error; err != nil {
			return err
		}
		u.Role, u.UpdatedAt = role, now
		return auditUser(tx, now, actor, ActionRoleChanged, u, "role "+string(old)+" -> "+string(role))
	})
	return u, s.accountErr(id, "set role", err)
}

// RecordForbidden records that the account u was refused route (its method
// and pattern, such as "POST /admin/users/:id/role", never the raw path),
// why being what. Refusals are kept in bounded form: one row per account,
// route and minute, whose Occurrences counts them, however many arrive at
// once and on however many instances (the row's CoalesceKey is unique, and
// a repeat adds to it in the same statement). The refusal itself changes
// nothing else.
func (s *Store) RecordForbidden(ctx context.Context, u User, route, why string) error {
	now := s.now()
	minute := now.Truncate(time.Minute)
	key := truncate(fmt.Sprintf("forbidden %d %d %s", u.ID, minute.Unix(), route), maxCoalesceKey)
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		ev := AuditEvent{At: now, Actor: u.Username, ActorKind: ActorKindStaff, Action: ActionForbidden, TargetType: TargetUser,
			TargetID: u.ID, Detail: truncate(route+" "+why, 500), CoalesceKey: &key}
		return tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "coalesce_key"}},
			DoUpdates: clause.Assignments(map[string]any{"occurrences": gorm.Expr("occurrences + 1")})}).Create(&ev).Error
	})
	return s.dbErr("record forbidden", err)
}

// maxCoalesceKey is the size of audit_events.coalesce_key (MySQL's index
// limit for utf8mb4).
const maxCoalesceKey = 191
