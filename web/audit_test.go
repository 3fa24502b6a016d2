package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

func auditActions(p page) []string {
	var out []string
	p.Doc.Find(`[data-testid="audit-row"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.AttrOr("data-action", ""))
	})
	return out
}

// auditSentences returns the page's events as their sentences read.
func auditSentences(p page) []string {
	var out []string
	p.Doc.Find(`[data-testid="audit-row"] [data-testid="audit-sentence"]`).Each(func(_ int, s *goquery.Selection) {
		c := s.Clone()
		c.Find(`[data-testid="audit-detail"]`).Remove()
		out = append(out, strings.Join(strings.Fields(c.Text()), " "))
	})
	return out
}

func TestAuditPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		// A failed sign-in, then a good one, then work through the console.
		b := e.browser()
		tok := csrf(t, b.get("/admin/login"))
		b.post("/admin/login", url.Values{"csrf_token": {tok}, "username": {staffName}, "password": {"wrong password"}})
		tok = b.signIn()
		res := b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {"<b>Rex</b>"}, "categoryId": {"3"}, "status": {"available"}})
		wantStatus(t, res, http.StatusSeeOther)
		pets, _, _ := e.store.ListPets(ctx, models.PetQuery{Limit: 1})
		id := strconv.FormatInt(pets[0].ID, 10)
		wantStatus(t, b.post("/admin/pets/"+id+"/status", url.Values{"csrf_token": {tok}, "status": {"sold"}}), http.StatusSeeOther)

		p := b.get("/admin/audit")
		wantStatus(t, p, http.StatusOK)
		got := strings.Join(auditActions(p), ",")
		want := "pet.status_changed,pet.created,user.login,user.login_failed,user.created"
		if got != want {
			t.Fatalf("actions %q, want %q (newest first)", got, want)
		}
		if strings.Contains(p.Body, "<b>Rex</b>") {
			t.Error("a pet's name rendered raw")
		}
		// Each event reads as a sentence naming who and what, the pet
		// linked to its page; the time is the store's, in a <time>.
		wantSentences := []string{
			"Alice changed <b>Rex</b>'s status from available to sold",
			"Alice added <b>Rex</b> (category 3, available)",
			"Alice signed in",
			"Someone failed to sign in as alice",
			"Test added the staff member alice as an admin",
		}
		if got := auditSentences(p); strings.Join(got, "\n") != strings.Join(wantSentences, "\n") {
			t.Errorf("sentences\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSentences, "\n"))
		}
		row := p.Doc.Find(`[data-testid="audit-row"]`).First()
		if href := row.Find(`[data-testid="audit-sentence"] a`).AttrOr("href", ""); href != "/admin/pets/"+id {
			t.Errorf("the pet's link %q, want its page", href)
		}
		if actor := row.Find(`[data-testid="audit-actor"]`).Text(); actor != "Alice" {
			t.Errorf("actor %q", actor)
		}
		if dt := row.Find("time").AttrOr("datetime", ""); !strings.HasSuffix(dt, "Z") || !strings.HasSuffix(row.Find("time").Text(), " UTC") {
			t.Errorf("time %q (datetime %q), want the store's time named and UTC in datetime", row.Find("time").Text(), dt)
		}
		if note := text(p, `[data-testid="audit-row"]:nth-child(3) [data-testid="audit-detail"]`); note != "From 127.0.0.1." {
			t.Errorf("sign-in note %q", note)
		}
		if n := p.Doc.Find(`[data-testid="audit-sentence"] a[href^="/admin/users/"]`).Length(); n != 1 {
			t.Errorf("%d links to a staff member's page, want the one added", n)
		}
		// The filter offers plain names, sending the codes.
		if o := p.Doc.Find(`#audit-action option[value="pet.status_changed"]`).Text(); o != "Pet status changed" {
			t.Errorf("the filter's option for pet.status_changed reads %q", o)
		}
		for _, code := range []string{"user.login_failed", "pet.status_changed", "->", "name=", "user 1"} {
			if strings.Contains(p.Doc.Find("tbody").Text(), code) {
				t.Errorf("the trail shows %q", code)
			}
		}
		// The pet's id in the pets table leads to its history.
		if href := b.get("/admin/pets").Doc.Find(`tr#pet-`+id+` a`).First().AttrOr("href", ""); href != "/admin/audit?target=pet:"+id {
			t.Errorf("history link %q", href)
		}

		tests := []struct{ query, want string }{
			{"action=pet.created", "pet.created"},
			{"target=pet:" + id, "pet.status_changed,pet.created"},
			{"actor=" + staffName, "pet.status_changed,pet.created,user.login,user.login_failed"},
			{"actor=Alice", "pet.status_changed,pet.created,user.login,user.login_failed"},
			{"action=user.login_failed&actor=" + staffName, "user.login_failed"},
			{"action=user.login&actor=" + staffName, "user.login"},
			{"action=apikey.revoked", ""},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				p := b.get("/admin/audit?" + tt.query)
				wantStatus(t, p, http.StatusOK)
				if got := strings.Join(auditActions(p), ","); got != tt.want {
					t.Errorf("actions %q, want %q", got, tt.want)
				}
			})
		}
		for _, bad := range []string{"action=drop", "target=pet", "target=cat:1", "before=x"} {
			p := b.get("/admin/audit?" + bad)
			wantStatus(t, p, http.StatusBadRequest)
			if text(p, `[data-testid="audit-error"]`) == "" {
				t.Errorf("%s: no error message", bad)
			}
		}
	})
}

func TestAuditPaging(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		for i := range 120 {
			if _, err := e.store.CreatePet(context.Background(), models.NewPet{Name: "p" + strconv.Itoa(i), CategoryID: 1, Status: models.StatusAvailable}, "test"); err != nil {
				t.Fatal(err)
			}
		}
		b, _ := e.signedIn()
		seen, pages := 0, 0
		path := "/admin/audit?action=pet.created"
		for path != "" {
			pages++
			p := b.get(path)
			seen += len(auditActions(p))
			path = p.Doc.Find(`.pager a[rel="next"]`).AttrOr("href", "")
			if pages > 1 && p.Doc.Find(`.pager a[rel="prev"]`).AttrOr("href", "") != "/admin/audit?action=pet.created" {
				t.Error("no link back to the newest page keeping the filter")
			}
		}
		if seen != 120 || pages != 3 {
			t.Fatalf("saw %d events on %d pages, want 120 on 3", seen, pages)
		}
	})
}

// newEnvInZone is newEnv with the store's time zone set
// (PETSTORE_TIMEZONE).
func newEnvInZone(t *testing.T, store *models.Store, zone string) *env {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: store}
	now := time.Now()
	e.clock.Store(&now)
	h, err := server.New(context.Background(), server.Deps{Store: store, Config: config.Config{TimeZone: loc},
		Now: func() time.Time { return *e.clock.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	if _, err := store.CreateUserWithRole(context.Background(), staffName, staffPassword, models.RoleAdmin, "test"); err != nil {
		t.Fatal(err)
	}
	return e
}

// With PETSTORE_TIMEZONE set, the console shows times in that zone, named,
// and reads the dates staff type in it.
func TestStoreTimeZone(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		e := newEnvInZone(t, s, "Europe/Madrid")
		winter := time.Date(2026, 11, 27, 13, 5, 0, 0, time.UTC)
		e.clock.Store(&winter)
		b, tok := e.signedIn()
		p := b.get("/admin/audit")
		tm := p.Doc.Find(`[data-testid="audit-row"] time`).First()
		at, err := time.Parse(time.RFC3339, tm.AttrOr("datetime", ""))
		madrid, _ := time.LoadLocation("Europe/Madrid")
		if err != nil || at.Location() != time.UTC || tm.Text() != at.In(madrid).Format("2 Jan 2006, 15:04 MST") ||
			!strings.HasPrefix(tm.AttrOr("title", ""), "Europe/Madrid") {
			t.Errorf("sign-in time %q (datetime %q, title %q), want Madrid's time named", tm.Text(), tm.AttrOr("datetime", ""), tm.AttrOr("title", ""))
		}
		// A key to expire on a date: from the start of that day in Madrid.
		wantStatus(t, b.post("/admin/api-keys", url.Values{"csrf_token": {tok}, "name": {"shop"}, "scope": {"pets:read"}, "expires": {"2027-03-01"}}), http.StatusOK)
		keys, err := s.ListAPIKeys(context.Background())
		if err != nil || len(keys) != 1 || keys[0].ExpiresAt == nil {
			t.Fatalf("keys %+v, %v", keys, err)
		}
		if got := keys[0].ExpiresAt.UTC(); !got.Equal(time.Date(2027, 2, 28, 23, 0, 0, 0, time.UTC)) {
			t.Errorf("a key to expire on 2027-03-01 expires at %s, want midnight in Madrid", got)
		}
		list := b.get("/admin/api-keys")
		if got := strings.Join(strings.Fields(list.Doc.Find(`[data-testid="expires"]`).First().Text()), " "); got != "1 Mar 2027, 00:00 CET" {
			t.Errorf("expiry shown %q", got)
		}
		if m := list.Doc.Find(`#key-expires`).AttrOr("min", ""); m != "2026-11-28" {
			t.Errorf("the date picker starts at %q, want tomorrow in Madrid", m)
		}
	})
}
