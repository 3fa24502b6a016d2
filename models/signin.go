package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Sign-in limits. Every password check (a sign-in, or the current password
// of a password change) first reserves one check against three limits, in
// the database and before bcrypt runs, so they hold however many attempts
// arrive at once and on however many instances:
//
//   - a username from one address: MaxFailuresPerUsernameAddress per
//     LoginWindow, strictly;
//   - one address, whatever the usernames: MaxFailuresPerAddress per
//     LoginWindow, strictly;
//   - a username from anywhere, loosely: FreeFailuresPerUsername checks,
//     then one check at a time with a growing pause between them (one
//     second, doubling up to UsernameDelayMax), taken by whoever asks
//     first. It forgets after LoginWindow without checks. A single address
//     never reaches it, so an attacker at one address cannot slow the
//     account's owner at another; many addresses slow each other, never
//     lock the account.
//
// A right password gives its reservation back, so staff who sign in
// normally never use up their limits. Attempts refused by a limit are not
// checked, not audited and not written anywhere (so they cannot prolong a
// pause or fill the database); they are counted in memory (SignInCounts).
// Limits are keyed by the SHA-256 of what they limit: what was typed in the
// username field is never stored.
const (
	LoginWindow                   = 15 * time.Minute
	MaxFailuresPerUsernameAddress = 5
	MaxFailuresPerAddress         = 20
	FreeFailuresPerUsername       = 10
	UsernameDelayMax              = 5 * time.Minute
)

// unknownAccount is the actor of a failed sign-in whose username names no
// account: what was typed (perhaps a password) is not recorded.
const unknownAccount = "(unknown account)"

// signInState is what staff sign-ins keep in this process.
type signInState struct {
	// hashing bounds the bcrypt work (see Options.PasswordHashers).
	hashing *hashLimiter
	// counters count password checks, throttled and busy sign-ins.
	counters signInCounters
	// limitsCleanedAt is when this instance last deleted idle sign-in
	// limits (unix nanoseconds).
	limitsCleanedAt atomic.Int64
	// dummy is the hash a missing account's sign-in is compared with
	// (dummyHash), made once.
	dummyOnce sync.Once
	dummy     []byte
}

// SignInCounts are this instance's counts since it started.
type SignInCounts struct {
	// PasswordChecks is how many passwords bcrypt compared.
	PasswordChecks int64
	// Throttled is how many sign-ins a limit refused before any check.
	Throttled int64
	// Busy is how many sign-ins were refused because the password hashing
	// capacity was in use (Options.PasswordHashers).
	Busy int64
}

type signInCounters struct{ checks, throttled, busy atomic.Int64 }

// hashLimiter bounds the bcrypt work that runs at once. Each hash takes a
// slot; a sign-in must first be admitted, and admission holds at most twice
// as many sign-ins as there are slots (running or waiting for one), so a
// sign-in beyond that is refused at once instead of queueing CPU work.
// Staff actions (creating accounts, changing passwords) wait for a slot.
type hashLimiter struct {
	admit chan struct{}
	slots chan struct{}
	// running and peak are the hashes running now and at most so far.
	running, peak atomic.Int64
}

func newHashLimiter(n int) *hashLimiter {
	if n <= 0 {
		n = max(1, runtime.GOMAXPROCS(0)/2)
	}
	return &hashLimiter{admit: make(chan struct{}, 2*n), slots: make(chan struct{}, n)}
}

func (h *hashLimiter) tryAdmit() bool {
	select {
	case h.admit <- struct{}{}:
		return true
	default:
		return false
	}
}

func (h *hashLimiter) leave() { <-h.admit }

func (h *hashLimiter) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return canceled("wait to check a password", ctx.Err())
		}
		return &Error{Code: CodeUnavailable, Message: "The server is too busy to check passwords now; try again shortly.", Err: ctx.Err()}
	}
	n := h.running.Add(1)
	for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
	}
	return nil
}

func (h *hashLimiter) release() {
	h.running.Add(-1)
	<-h.slots
}

// errSignInBusy is returned when the hashing capacity is in use.
func errSignInBusy() error {
	return &Error{Code: CodeUnavailable, Message: "Too many sign-ins are being checked right now. Try again in a second.",
		RetryAfter: time.Second}
}

// Login checks a sign-in attempt from clientIP within the limits, and
// audits it: as a sign-in, or, for a member with a second step, as a
// password accepted (the second step's success is the sign-in). It answers at once, without checking, when the hashing
// capacity is in use (CodeUnavailable) or a limit refuses (CodeRateLimited);
// both errors carry RetryAfter.
func (s *Store) Login(ctx context.Context, username, password, clientIP string) (User, error) {
	if !s.signIns.hashing.tryAdmit() {
		s.signIns.counters.busy.Add(1)
		return User{}, errSignInBusy()
	}
	defer s.signIns.hashing.leave()
	u, err := s.checkWithinLimits(ctx, username, password, clientIP, "sign-in")
	if err != nil {
		return User{}, err
	}
	now := s.now()
	detail := "from " + clientIP
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		if u.MustChangePassword {
			if err := useOneTimePassword(tx, u, now); err != nil {
				return err
			}
			detail += " with a one-time password"
		}
		action := ActionLogin
		second, err := hasSecondFactor(tx, u.ID)
		if err != nil {
			return err
		}
		if u.SecondStep = second; second {
			action = ActionPasswordAccepted
		}
		return tx.Create(&AuditEvent{At: now, Actor: u.Username, Action: action, TargetType: TargetUser,
			TargetID: u.ID, Detail: detail}).Error
	})
	if err == ErrOneTimePasswordSpent {
		return User{}, err
	}
	if err != nil {
		return User{}, s.dbErr("audit login", err)
	}
	return u, nil
}

// ErrOneTimePasswordSpent refuses the one-time password of a reset that has
// signed in once already or is older than OneTimePasswordLifetime. It is
// said only after the right password.
var ErrOneTimePasswordSpent = &Error{Code: CodeUnauthorized,
	Message: "This one-time password has expired or has been used already. Ask an admin to reset your password again."}

// useOneTimePassword spends the one-time password u has just signed in with,
// within tx: of any number of sign-ins with it at once, on any instance,
// one conditional UPDATE lets exactly one through.
func useOneTimePassword(tx *gorm.DB, u User, now time.Time) error {
	if u.OneTimeExpiresAt != nil && !now.Before(*u.OneTimeExpiresAt) {
		return ErrOneTimePasswordSpent
	}
	res := tx.Model(&User{}).Where("id = ? AND password_hash = ? AND one_time_used_at IS NULL", u.ID, u.PasswordHash).
		Update("one_time_used_at", now)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return ErrOneTimePasswordSpent
	}
	return nil
}

// checkWithinLimits reserves a check, waits for a hashing slot, and checks
// the password with CheckPassword. A right password gives the reservation
// back; a wrong one keeps it and is audited as what ("sign-in", "password
// change") from clientIP.
func (s *Store) checkWithinLimits(ctx context.Context, username, password, clientIP, what string) (User, error) {
	name := normalUsername(username)
	limits := signInLimits(name, clientIP)
	if err := s.reserve(ctx, limits); err != nil {
		return User{}, err
	}
	if err := s.signIns.hashing.acquire(ctx); err != nil {
		s.refund(ctx, limits)
		return User{}, err
	}
	u, err := s.CheckPassword(ctx, username, password)
	s.signIns.hashing.release()
	switch {
	case err == nil:
		if err := s.refund(ctx, limits); err != nil {
			return User{}, err
		}
		return u, nil
	case ErrorCode(err) == CodeUnauthorized:
		if err == ErrAccountDisabled {
			what += " of a disabled account"
		}
		if werr := s.auditFailure(ctx, name, clientIP, what); werr != nil {
			return User{}, werr
		}
		return User{}, err
	default: // not checked: the database failed
		s.refund(ctx, limits)
		return User{}, err
	}
}

// auditFailure records a wrong password for name from clientIP. The actor
// is the account when name is one, else unknownAccount.
func (s *Store) auditFailure(ctx context.Context, name, clientIP, what string) error {
	actor, id := unknownAccount, int64(0)
	if usernamePattern.MatchString(name) {
		var u User
		err := s.db.WithContext(ctx).Select("id", "username").Where("username = ?", name).Take(&u).Error
		switch {
		case err == nil:
			actor, id = u.Username, u.ID
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return s.dbErr("find user", err)
		}
	}
	now := s.now()
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		return tx.Create(&AuditEvent{At: now, Actor: actor, Action: ActionLoginFailed, TargetType: TargetUser,
			TargetID: id, Detail: what + " from " + clientIP}).Error
	})
	return s.dbErr("audit failed sign-in", err)
}

// loginLimit is one limit's state: the checks taken in the window that
// started at WindowStart and, for the loose per-username limit, when the
// next check may be taken.
type loginLimit struct {
	Name        string `gorm:"primaryKey"` // hex SHA-256 of the limit's kind and key
	Checks      int
	WindowStart time.Time
	NextAt      time.Time
	UpdatedAt   time.Time
}

func (loginLimit) TableName() string { return "login_limits" }

// limitRule is how one limit counts: strict (at most perWindow checks per
// LoginWindow) when perWindow > 0, else loose (per username).
type limitRule struct{ perWindow int }

// take reserves one check on r at now and returns 0, or leaves r alone and
// returns how long until a check could be taken.
func (rule limitRule) take(r *loginLimit, now time.Time) time.Duration {
	if rule.perWindow > 0 {
		end := r.WindowStart.Add(LoginWindow)
		if !now.Before(end) {
			r.Checks, r.WindowStart = 0, now
		} else if r.Checks >= rule.perWindow {
			return min(end.Sub(now), LoginWindow) // another instance's clock may be ahead
		}
		r.Checks++
		return 0
	}
	if !now.Before(r.NextAt.Add(LoginWindow)) { // quiet for a window: forget
		r.Checks, r.WindowStart = 0, now
	}
	if r.Checks >= FreeFailuresPerUsername && now.Before(r.NextAt) {
		return min(r.NextAt.Sub(now), UsernameDelayMax)
	}
	r.Checks++
	r.NextAt = now
	if extra := r.Checks - FreeFailuresPerUsername; extra >= 0 {
		r.NextAt = now.Add(usernameDelay(extra))
	}
	return 0
}

// usernameDelay is the pause after the n-th check past the free ones:
// 1 s, 2 s, 4 s, ... up to UsernameDelayMax.
func usernameDelay(n int) time.Duration {
	if n >= 20 {
		return UsernameDelayMax
	}
	return min(time.Second<<n, UsernameDelayMax)
}

// signInLimit is one limit a check must fit in.
type signInLimit struct {
	name string
	rule limitRule
}

// signInLimits returns the three limits of a check of the (lower-cased,
// trimmed) username name from clientIP, ordered by name: every
// transaction locks their rows in that order, so two never deadlock.
func signInLimits(name, clientIP string) []signInLimit {
	addr := addressKey(clientIP)
	limits := []signInLimit{
		{limitName("username+address", name, addr), limitRule{MaxFailuresPerUsernameAddress}},
		{limitName("address", addr), limitRule{MaxFailuresPerAddress}},
		{limitName("username", name), limitRule{}},
	}
	slices.SortFunc(limits, func(a, b signInLimit) int { return strings.Compare(a.name, b.name) })
	return limits
}

// limitName is the key of a limit's row: a hash, so that the text typed as
// a username is never stored.
func limitName(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// addressKey is the address a limit counts (see ClientNetwork).
func addressKey(clientIP string) string {
	p := ClientNetwork(clientIP)
	switch {
	case !p.IsValid():
		return clientIP
	case p.Addr().Is4():
		return p.Addr().String()
	}
	return p.String()
}

// ClientNetwork is what the limits on client addresses count as one
// client: an IPv4 address, or the /64 network of an IPv6 address (one host
// is usually given a whole /64). An unreadable address gives the zero
// Prefix.
func ClientNetwork(clientIP string) netip.Prefix {
	a, err := netip.ParseAddr(clientIP)
	if err != nil {
		return netip.Prefix{}
	}
	a = a.Unmap().WithZone("")
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// errLimitRowsMissing says a limit's row does not exist yet: the rows are
// created outside the reservation's transaction, so that it only ever locks
// existing rows (no gap locks on MySQL).
var errLimitRowsMissing = errors.New("login limit rows missing")

// reserve takes one check on each limit, all or none, in one transaction.
// When a limit refuses, it returns a rate_limited error whose RetryAfter is
// when all would allow a check.
func (s *Store) reserve(ctx context.Context, limits []signInLimit) error {
	names := make([]string, len(limits))
	for i, l := range limits {
		names[i] = l.name
	}
	var wait time.Duration
	for attempt := 0; ; attempt++ {
		var now time.Time
		err := s.transaction(ctx, func(tx *gorm.DB) error {
			wait = 0
			var rows []loginLimit
			err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("name IN ?", names).Order("name").Find(&rows).Error
			if err != nil {
				return err
			}
			// The time is read once the rows are ours: a check that waited
			// for the lock must not see a window that began after it.
			now = s.now().Truncate(time.Microsecond) // DATETIME(6)
			// A missing row is created below, outside any transaction.
			if len(rows) != len(limits) {
				return errLimitRowsMissing
			}
			byName := make(map[string]*loginLimit, len(rows))
			for i := range rows {
				byName[rows[i].Name] = &rows[i]
			}
			for _, l := range limits {
				wait = max(wait, l.rule.take(byName[l.name], now))
			}
			if wait > 0 {
				return nil // refused: nothing written
			}
			for _, r := range rows {
				err := tx.Exec("UPDATE login_limits SET checks = ?, window_start = ?, next_at = ?, updated_at = ? WHERE name = ?",
					r.Checks, r.WindowStart, r.NextAt, now, r.Name).Error
				if err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, errLimitRowsMissing) && attempt < 3 {
			if err := s.createLimits(ctx, names, now); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return s.dbErr("reserve sign-in check", err)
		}
		break
	}
	s.cleanLimits(ctx)
	if wait > 0 {
		s.signIns.counters.throttled.Add(1)
		return throttled(wait)
	}
	return nil
}

// createLimits creates the rows of limits that do not exist yet.
func (s *Store) createLimits(ctx context.Context, names []string, now time.Time) error {
	rows := make([]loginLimit, len(names))
	for i, n := range names {
		rows[i] = loginLimit{Name: n, WindowStart: now, NextAt: now, UpdatedAt: now}
	}
	err := retry(ctx, func() error {
		return s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error
	})
	return s.dbErr("create sign-in limits", err)
}

// refund gives back a check reserved on limits, for a right password or a
// check that did not happen. One statement, rows locked in name order.
func (s *Store) refund(ctx context.Context, limits []signInLimit) error {
	names := make([]string, len(limits))
	for i, l := range limits {
		names[i] = l.name
	}
	now := s.now()
	err := retry(ctx, func() error {
		return s.db.WithContext(ctx).Exec("UPDATE login_limits SET checks = checks - 1, updated_at = ? WHERE name IN ? AND checks > 0",
			now, names).Error
	})
	return s.dbErr("refund sign-in check", err)
}

// limitsIdle is how long a limit's row is kept unused: every limit has
// forgotten its checks long before.
const limitsIdle = 24 * time.Hour

// cleanLimits deletes the rows of limits unused for limitsIdle, at most
// once an hour per instance. A failure is only logged: it is tried again
// an hour later.
func (s *Store) cleanLimits(ctx context.Context) {
	now := s.now()
	last := s.signIns.limitsCleanedAt.Load()
	if now.UnixNano()-last < int64(time.Hour) || !s.signIns.limitsCleanedAt.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	err := retry(ctx, func() error {
		return s.db.WithContext(ctx).Where("updated_at < ?", now.Add(-limitsIdle)).Delete(&loginLimit{}).Error
	})
	if err != nil {
		s.log.Warn("could not delete idle sign-in limits", "error", err)
	}
}

// throttled is the error of a check refused by a limit for wait.
func throttled(wait time.Duration) error {
	secs := int64((wait + time.Second - 1) / time.Second)
	secs = max(secs, 1)
	in := fmt.Sprintf("%d seconds", secs)
	switch {
	case secs == 1:
		in = "1 second"
	case secs > 90:
		in = fmt.Sprintf("%d minutes", (secs+59)/60)
	}
	return &Error{Code: CodeRateLimited, RetryAfter: time.Duration(secs) * time.Second,
		Message: "Too many failed sign-ins for this username or from this address. Try again in " + in + "."}
}
