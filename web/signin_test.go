package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"petstore/models"
	"petstore/models/modelstest"
)

// openStore opens a fresh, migrated store on driver as modelstest.Open
// does, with room for hashers password checks at once and bcrypt at cost.
func openStore(tb testing.TB, driver string, hashers, cost int) *models.Store {
	tb.Helper()
	cfg := modelstest.Database(tb, driver)
	s, err := models.Open(context.Background(), models.Options{Driver: string(cfg.Driver), DSN: cfg.DSN,
		ConnectTimeout: 20 * time.Second, MaxOpenConns: 20, PasswordCost: cost, PasswordHashers: hashers})
	if err != nil {
		tb.Fatalf("open %s: %v", cfg.Redacted, err)
	}
	tb.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrate %s: %v", cfg.Redacted, err)
	}
	return s
}

// browserFrom is a visitor whose connections come from the loopback
// address ip (any of 127.0.0.0/8 on Linux): the console sees a different
// client address without trusting any proxy header.
func (e *env) browserFrom(ip string) *browser {
	b := e.browser()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	b.client.Transport = &http.Transport{DialContext: d.DialContext}
	e.t.Cleanup(b.client.CloseIdleConnections)
	return b
}

// signInForm is a browser on the sign-in page, ready to post it.
type signInForm struct {
	b   *browser
	tok string
}

func (e *env) signInForms(n int, from func(i int) *browser) []signInForm {
	forms := make([]signInForm, n)
	for i := range forms {
		b := from(i)
		forms[i] = signInForm{b, csrf(e.t, b.get("/admin/login"))}
	}
	return forms
}

// burst posts every form at once with username and password, and returns
// the pages answered.
func burst(forms []signInForm, username, password func(i int) string) []page {
	pages := make([]page, len(forms))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, f := range forms {
		wg.Go(func() {
			<-start
			pages[i] = f.b.post("/admin/login", url.Values{"csrf_token": {f.tok}, "username": {username(i)}, "password": {password(i)}})
		})
	}
	close(start)
	wg.Wait()
	return pages
}

func same(s string) func(int) string { return func(int) string { return s } }

func auditCount(t *testing.T, s *models.Store, action string) int {
	t.Helper()
	events, _, err := s.ListAuditEvents(context.Background(), models.AuditQuery{Action: action, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(events)
}

// 100 wrong passwords for one account from one address, at once: five are
// checked (401) and audited, the rest are 429 with Retry-After and a page
// saying when to retry; never a 5xx. The owner still signs in from another
// address.
func TestSignInBurstHTTP(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			e := newEnv(t, openStore(t, driver, 200, bcrypt.MinCost))
			checksBefore := e.store.SignInCounts().PasswordChecks
			forms := e.signInForms(100, func(int) *browser { return e.browser() })
			pages := burst(forms, same(staffName), same("not the password at all"))
			statuses := map[int]int{}
			for _, p := range pages {
				statuses[p.Status]++
				if p.Status != http.StatusTooManyRequests {
					continue
				}
				wait, err := strconv.Atoi(p.Header.Get("Retry-After"))
				msg := text(p, `[data-testid="login-error"]`)
				if err != nil || wait < 1 || wait > int(models.LoginWindow/time.Second) ||
					!strings.HasPrefix(msg, "Too many failed sign-ins") || !strings.Contains(msg, "Try again in ") {
					t.Errorf("429: Retry-After %q, message %q", p.Header.Get("Retry-After"), msg)
				}
			}
			checked := e.store.SignInCounts().PasswordChecks - checksBefore
			want := models.MaxFailuresPerUsernameAddress
			if statuses[http.StatusUnauthorized] != want || statuses[http.StatusTooManyRequests] != len(pages)-want || checked != int64(want) {
				t.Fatalf("answers %v, %d passwords checked; want %d 401 (checked), the rest 429", statuses, checked, want)
			}
			if n := auditCount(t, e.store, models.ActionLoginFailed); n != want {
				t.Errorf("%d failed sign-ins audited, want %d", n, want)
			}
			b := e.browserFrom("127.0.0.2")
			p := b.post("/admin/login", url.Values{"csrf_token": {csrf(t, b.get("/admin/login"))}, "username": {staffName}, "password": {staffPassword}})
			wantStatus(t, p, http.StatusSeeOther)
		})
	}
}

// While every password hasher is busy, a sign-in is answered at once: 503,
// Retry-After: 1 and a sentence saying so, without checking a password.
func TestSignInBusyHTTP(t *testing.T) {
	t.Parallel()
	// One hasher and cost 10, so that the burst finds it busy.
	e := newEnv(t, openStore(t, models.DriverSQLite, 1, 10))
	before := e.store.SignInCounts()
	forms := e.signInForms(30, func(i int) *browser { return e.browserFrom(fmt.Sprintf("127.0.1.%d", i+1)) })
	pages := burst(forms, func(i int) string { return fmt.Sprintf("guess%d", i) }, same("not the password at all"))
	statuses := map[int]int{}
	for _, p := range pages {
		statuses[p.Status]++
		switch p.Status {
		case http.StatusUnauthorized:
		case http.StatusServiceUnavailable:
			if p.Header.Get("Retry-After") != "1" || text(p, `[data-testid="login-error"]`) != "Too many sign-ins are being checked right now. Try again in a second." {
				t.Errorf("503: Retry-After %q, message %q", p.Header.Get("Retry-After"), text(p, `[data-testid="login-error"]`))
			}
		default:
			t.Errorf("status %d\n%s", p.Status, p.Body)
		}
	}
	after := e.store.SignInCounts()
	if statuses[http.StatusServiceUnavailable] == 0 || int64(statuses[http.StatusServiceUnavailable]) != after.Busy-before.Busy ||
		int64(statuses[http.StatusUnauthorized]) != after.PasswordChecks-before.PasswordChecks {
		t.Errorf("answers %v, counts before %+v after %+v; want some 503, each counted busy, each 401 checked", statuses, before, after)
	}
}
