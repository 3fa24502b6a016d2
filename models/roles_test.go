package models_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
)

func TestParseRoleAndAllows(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"viewer", "editor", "admin"} {
		if r, err := models.ParseRole(s); err != nil || string(r) != s {
			t.Errorf("ParseRole(%q) = %q, %v", s, r, err)
		}
	}
	for _, s := range []string{"", "Admin", "ADMIN", " admin", "owner", "viewer,admin"} {
		var e *models.Error
		if _, err := models.ParseRole(s); !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field(models.FieldRole) != models.RoleMessage {
			t.Errorf("ParseRole(%q) = %v, want invalid_request on the role field", s, err)
		}
	}
	tests := []struct {
		have, need models.Role
		want       bool
	}{
		{models.RoleViewer, models.RoleViewer, true},
		{models.RoleViewer, models.RoleEditor, false},
		{models.RoleViewer, models.RoleAdmin, false},
		{models.RoleEditor, models.RoleViewer, true},
		{models.RoleEditor, models.RoleEditor, true},
		{models.RoleEditor, models.RoleAdmin, false},
		{models.RoleAdmin, models.RoleViewer, true},
		{models.RoleAdmin, models.RoleEditor, true},
		{models.RoleAdmin, models.RoleAdmin, true},
		{"", models.RoleViewer, false},
		{"owner", models.RoleViewer, false},
		{models.RoleAdmin, "", false},
		{models.RoleAdmin, "owner", false},
	}
	for _, tt := range tests {
		if got := tt.have.Allows(tt.need); got != tt.want {
			t.Errorf("%q.Allows(%q) = %v, want %v", tt.have, tt.need, got, tt.want)
		}
	}
}

// newRoleAccounts creates accounts, each with the role after its name
// ("alice:admin").
func newRoleAccounts(tb testing.TB, s *models.Store, specs ...string) []models.User {
	tb.Helper()
	var users []models.User
	for _, spec := range specs {
		name, role, _ := strings.Cut(spec, ":")
		u, err := s.CreateUserWithRole(context.Background(), name, "correct horse battery staple", models.Role(role), "test")
		if err != nil {
			tb.Fatal(err)
		}
		users = append(users, u)
	}
	return users
}

func TestCreateUserRoles(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		ed, err := s.CreateUser(ctx, "eddie", "correct horse battery staple", "test")
		if err != nil || ed.Role != models.RoleEditor {
			t.Fatalf("CreateUser = %+v, %v; want an editor", ed, err)
		}
		for _, r := range models.Roles {
			u, err := s.CreateUserWithRole(ctx, "user-"+string(r), "correct horse battery staple", r, "alice")
			if err != nil || u.Role != r {
				t.Fatalf("CreateUserWithRole(%s) = %+v, %v", r, u, err)
			}
			if got, _ := s.GetUser(ctx, u.ID); got.Role != r {
				t.Errorf("stored role %q, want %q", got.Role, r)
			}
			if a := auditActions(t, s, u.ID); len(a) != 1 || a[0] != "alice user.created username=user-"+string(r)+"; role="+string(r) {
				t.Errorf("audit trail %q", a)
			}
		}
		if _, err := s.CreateUserWithRole(ctx, "mallory", "correct horse battery staple", "owner", "alice"); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Errorf("CreateUserWithRole(owner) = %v, want invalid_request", err)
		}
		if _, err := s.FindUser(ctx, "mallory"); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("a refused role stored the account: %v", err)
		}

		// The first account, made on an empty database, is an admin.
		empty := modelstest.Open(t, s.Driver())
		b, err := empty.EnsureBootstrap(ctx)
		if err != nil || b == nil {
			t.Fatalf("EnsureBootstrap = %+v, %v", b, err)
		}
		if u, err := empty.FindUser(ctx, b.Username); err != nil || u.Role != models.RoleAdmin {
			t.Errorf("the bootstrap account is %+v, %v; want an admin", u, err)
		}
	})
}

func TestSetRole(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		users := newRoleAccounts(t, s, "alice:admin", "bob:viewer")
		alice, bob := users[0], users[1]

		u, err := s.SetRole(ctx, bob.ID, models.RoleAdmin, "alice")
		if err != nil || u.Role != models.RoleAdmin || u.ID != bob.ID || u.SessionVersion != bob.SessionVersion {
			t.Fatalf("SetRole(bob, admin) = %+v, %v; want an admin, sessions kept", u, err)
		}
		// The same role again changes nothing and records nothing.
		if u, err := s.SetRole(ctx, bob.ID, models.RoleAdmin, "alice"); err != nil || u.Role != models.RoleAdmin {
			t.Errorf("SetRole(bob, admin) again = %+v, %v", u, err)
		}
		if _, err := s.SetRole(ctx, alice.ID, models.RoleEditor, "bob"); err != nil {
			t.Fatalf("lowering one of two admins: %v", err)
		}
		// Bob is now the last admin.
		var e *models.Error
		_, err = s.SetRole(ctx, bob.ID, models.RoleViewer, "bob")
		if !errors.As(err, &e) || e.Code != models.CodeConflict || !strings.Contains(e.Message, "last enabled admin") {
			t.Fatalf("lowering the last admin = %v, want a conflict naming the rule", err)
		}
		if got, _ := s.GetUser(ctx, bob.ID); got.Role != models.RoleAdmin {
			t.Errorf("the refused change stored %q", got.Role)
		}
		want := []string{
			"test user.created username=bob; role=viewer",
			"alice user.role_changed username=bob; role viewer -> admin",
		}
		if got := auditActions(t, s, bob.ID); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit trail of bob:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if a := auditActions(t, s, alice.ID); a[len(a)-1] != "bob user.role_changed username=alice; role admin -> editor" {
			t.Errorf("audit trail of alice %q", a)
		}

		// A disabled admin is no admin: it does not count, and can be lowered.
		carol := newRoleAccounts(t, s, "carol:admin")[0]
		if _, err := s.DisableUser(ctx, carol.ID, "bob"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetRole(ctx, bob.ID, models.RoleEditor, "bob"); models.ErrorCode(err) != models.CodeConflict {
			t.Errorf("lowering the last enabled admin beside a disabled one = %v, want conflict", err)
		}
		if u, err := s.SetRole(ctx, carol.ID, models.RoleViewer, "bob"); err != nil || u.Role != models.RoleViewer || !u.Disabled() {
			t.Errorf("lowering a disabled admin = %+v, %v", u, err)
		}

		if _, err := s.SetRole(ctx, 987654, models.RoleEditor, "bob"); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("SetRole(unknown id) = %v, want not_found", err)
		}
		if _, err := s.SetRole(ctx, alice.ID, "owner", "bob"); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Errorf("SetRole(owner) = %v, want invalid_request", err)
		}
	})
}

func TestDisableLastAdmin(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		users := newRoleAccounts(t, s, "alice:admin", "bob:editor", "carol:viewer")
		alice := users[0]
		var e *models.Error
		_, err := s.DisableUser(ctx, alice.ID, "bob")
		if !errors.As(err, &e) || e.Code != models.CodeConflict || !strings.Contains(e.Message, "last enabled admin") {
			t.Fatalf("disabling the last admin = %v, want a conflict naming the rule", err)
		}
		if got, _ := s.GetUser(ctx, alice.ID); got.Disabled() || got.SessionVersion != alice.SessionVersion {
			t.Errorf("the refused disable changed the account: %+v", got)
		}
		// Others may go; a second admin lets the first go too.
		for _, u := range users[1:] {
			if _, err := s.DisableUser(ctx, u.ID, "alice"); err != nil {
				t.Errorf("disable %s: %v", u.Username, err)
			}
		}
		dave := newRoleAccounts(t, s, "dave:admin")[0]
		if _, err := s.DisableUser(ctx, alice.ID, "dave"); err != nil {
			t.Errorf("disabling one of two admins: %v", err)
		}
		if _, err := s.DisableUser(ctx, dave.ID, "dave"); models.ErrorCode(err) != models.CodeConflict {
			t.Errorf("disabling the last admin after the other went = %v, want conflict", err)
		}
	})
}

// A hundred requests at once, two admins lowering and disabling each other,
// must leave exactly one enabled admin every time, on both engines. The
// engines differ here: SQLite runs the transactions one at a time, while on
// InnoDB they run together and only the locking read of every account keeps
// them from each seeing the other still an admin.
func TestLastAdminUnderConcurrency(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		users := newRoleAccounts(t, s, "alice:admin", "bob:admin", "carol:editor")
		admins := users[:2]
		const n = 100
		for round := range 5 {
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				errs  [n]error
			)
			for i := range n {
				wg.Go(func() {
					// Each admin acts on the other, half by role, half by disabling.
					by, target := admins[i%2], admins[1-i%2]
					<-start
					if i%4 < 2 {
						_, errs[i] = s.SetRole(ctx, target.ID, models.RoleEditor, by.Username)
					} else {
						_, errs[i] = s.DisableUser(ctx, target.ID, by.Username)
					}
				})
			}
			close(start)
			wg.Wait()
			refused := 0
			for i, err := range errs {
				switch {
				case models.ErrorCode(err) == models.CodeConflict:
					refused++
				case err != nil:
					t.Fatalf("round %d, request %d: %v", round, i, err)
				}
			}
			list, err := s.ListUsers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			enabledAdmins := 0
			for _, u := range list {
				if u.Role == models.RoleAdmin && !u.Disabled() {
					enabledAdmins++
				}
			}
			if enabledAdmins != 1 || refused == 0 {
				t.Fatalf("round %d: %d enabled admins left, %d requests refused; want exactly 1 admin and some refusals", round, enabledAdmins, refused)
			}
			for _, u := range admins {
				if _, err := s.EnableUser(ctx, u.ID, "test"); err != nil {
					t.Fatal(err)
				}
				if _, err := s.SetRole(ctx, u.ID, models.RoleAdmin, "test"); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// An account's sessions: listed newest seen first without their data,
// ended one by one or all but one, and never another account's.
func TestUserSessions(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		users := newRoleAccounts(t, s, "alice:viewer", "bob:editor")
		alice, bob := users[0], users[1]
		now := time.Now().UTC().Truncate(time.Second)
		create := func(uid int64, seen, expires time.Time, ip string) string {
			t.Helper()
			id, err := s.CreateSession(ctx, models.Session{UserID: uid, Data: []byte("secret values"), ClientIP: ip, UserAgent: "UA " + ip,
				CreatedAt: now.Add(-time.Hour), UpdatedAt: seen, ExpiresAt: expires})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		older := create(alice.ID, now.Add(-10*time.Minute), now.Add(time.Hour), "192.0.2.1")
		newer := create(alice.ID, now.Add(-time.Minute), now.Add(time.Hour), "192.0.2.2")
		third := create(alice.ID, now.Add(-5*time.Minute), now.Add(time.Hour), "192.0.2.3")
		create(alice.ID, now.Add(-3*time.Hour), now.Add(-time.Minute), "192.0.2.4") // expired
		bobs := create(bob.ID, now, now.Add(time.Hour), "198.51.100.1")

		list, err := s.ListUserSessions(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ss := range list {
			got = append(got, ss.ClientIP)
			if len(ss.Data) != 0 || ss.UserID != alice.ID || ss.UserAgent != "UA "+ss.ClientIP || !ss.CreatedAt.Equal(now.Add(-time.Hour)) {
				t.Errorf("listed session %+v", ss)
			}
		}
		if strings.Join(got, " ") != "192.0.2.2 192.0.2.3 192.0.2.1" {
			t.Fatalf("alice's sessions %v, want the live ones, last seen first", got)
		}
		if list[0].Handle != models.SessionHandle(newer) || models.SessionHandle(newer) == newer {
			t.Errorf("handle %q, want the id's hash", list[0].Handle)
		}

		// One session: only the account's own.
		if err := s.EndUserSession(ctx, alice.ID, models.SessionHandle(bobs), "x"); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("ending another account's session = %v, want not_found", err)
		}
		if _, err := s.GetSession(ctx, bobs); err != nil {
			t.Errorf("bob's session after alice tried to end it: %v", err)
		}
		if err := s.EndUserSession(ctx, alice.ID, models.SessionHandle(older), "Firefox on Linux, 192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetSession(ctx, older); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("the ended session: %v, want not_found", err)
		}
		if err := s.EndUserSession(ctx, alice.ID, models.SessionHandle(older), "x"); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("ending it again = %v, want not_found", err)
		}

		// All but one.
		if n, err := s.EndOtherSessions(ctx, alice.ID, models.SessionHandle(newer)); err != nil || n != 2 {
			t.Errorf("EndOtherSessions = %d, %v; want 2 (one live, one expired)", n, err)
		}
		if list, err := s.ListUserSessions(ctx, alice.ID); err != nil || len(list) != 1 || list[0].Handle != models.SessionHandle(newer) {
			t.Errorf("after EndOtherSessions: %+v, %v; want the kept one", list, err)
		}
		if _, err := s.GetSession(ctx, third); models.ErrorCode(err) != models.CodeNotFound {
			t.Errorf("another session after EndOtherSessions: %v", err)
		}
		if _, err := s.GetSession(ctx, bobs); err != nil {
			t.Errorf("bob's session after alice's EndOtherSessions: %v", err)
		}
		if n, err := s.EndOtherSessions(ctx, alice.ID, models.SessionHandle(newer)); err != nil || n != 0 {
			t.Errorf("EndOtherSessions with none left = %d, %v", n, err)
		}
		want := []string{
			"test user.created username=alice; role=viewer",
			"alice user.session_ended username=alice; Firefox on Linux, 192.0.2.1",
			"alice user.sessions_ended username=alice; 2 other sessions; this one kept",
		}
		if got := auditActions(t, s, alice.ID); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit trail of alice:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// Migration 10 makes the accounts that exist admins (they could do
// everything before), and the column takes only the three roles.
func TestRolesMigration(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storeAt(t, driver, 7)
			for _, name := range []string{"old-alice", "old-bob"} {
				if _, err := s.SQLDB().Exec("INSERT INTO users (username, password_hash, created_at, updated_at) VALUES (?, 'x', ?, ?)",
					name, "2026-01-02 03:04:05", "2026-01-02 03:04:05"); err != nil {
					t.Fatal(err)
				}
			}
			if res, err := s.Migrate(ctx); err != nil || !slices.Contains(res.Applied, 10) {
				t.Fatalf("Migrate = %+v, %v; want migration 10 applied", res, err)
			}
			list, err := s.ListUsers(ctx)
			if err != nil || len(list) != 2 {
				t.Fatalf("ListUsers = %+v, %v", list, err)
			}
			for _, u := range list {
				if u.Role != models.RoleAdmin {
					t.Errorf("%s is %q after the migration, want admin", u.Username, u.Role)
				}
			}
			if u, err := s.CreateUser(ctx, "new-carol", "correct horse battery staple", "test"); err != nil || u.Role != models.RoleEditor {
				t.Errorf("a new account after the migration: %+v, %v; want an editor", u, err)
			}
			for _, bad := range []string{"owner", "ADMIN", ""} {
				if _, err := s.SQLDB().Exec("UPDATE users SET role = ? WHERE username = 'old-bob'", bad); err == nil {
					t.Errorf("the column took the role %q", bad)
				}
			}
		})
	}
}

// Refusals are recorded in bounded form: a hundred at once from one member
// on one route make one row with their count, and a new minute or another
// route a row of its own.
func TestRecordForbiddenBounded(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 26, 10, 0, 5, 0, time.UTC)
		s.SetClock(func() time.Time { return now })
		vera, err := s.CreateUserWithRole(ctx, "vera", "correct horse battery staple", models.RoleViewer, "test")
		if err != nil {
			t.Fatal(err)
		}
		const route = "POST /admin/users/:id/role"
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				if err := s.RecordForbidden(ctx, vera, route, "needs admin; role viewer"); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if err := s.RecordForbidden(ctx, vera, "POST /admin/pets", "needs editor; role viewer"); err != nil {
			t.Fatal(err)
		}
		events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionForbidden, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, ev := range events {
			got[ev.Detail] += ev.Occurrences
			if ev.ActorKind != models.ActorKindStaff || ev.Actor != "vera" {
				t.Errorf("refusal by %s (%s)", ev.Actor, ev.ActorKind)
			}
		}
		if len(events) != 2 || got[route+" needs admin; role viewer"] != 100 || got["POST /admin/pets needs editor; role viewer"] != 1 {
			t.Fatalf("%d rows for 101 refusals: %v; want 2 rows counting 100 and 1", len(events), got)
		}
		now = now.Add(time.Minute)
		if err := s.RecordForbidden(ctx, vera, route, "needs admin; role viewer"); err != nil {
			t.Fatal(err)
		}
		if n := countAudit(t, s, models.ActionForbidden); n != 3 {
			t.Errorf("%d rows after a refusal in the next minute; want 3", n)
		}
	})
}
