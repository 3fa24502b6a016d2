package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
)

func auditActions(p page) []string {
	var out []string
	p.Doc.Find(`[data-testid="audit-row"] [data-testid="audit-action"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.Text())
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
		if actor := text(p, `[data-testid="audit-row"] [data-testid="audit-actor"]`); actor != staffName {
			t.Errorf("actor %q", actor)
		}
		if strings.Contains(p.Body, "<b>Rex</b>") {
			t.Error("detail rendered raw")
		}
		if text(p, `[data-testid="audit-detail"]`) != "available -> sold" {
			t.Errorf("detail %q", text(p, `[data-testid="audit-detail"]`))
		}
		// The pet's id in the pets table leads to its history.
		if href := b.get("/admin/pets").Doc.Find(`tr#pet-`+id+` a`).First().AttrOr("href", ""); href != "/admin/audit?target=pet:"+id {
			t.Errorf("history link %q", href)
		}

		tests := []struct{ query, want string }{
			{"action=pet.created", "pet.created"},
			{"target=pet:" + id, "pet.status_changed,pet.created"},
			{"actor=" + staffName, "pet.status_changed,pet.created,user.login,user.login_failed"},
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
