package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"petstore/models"
)

// Every refusal is the console's error page: its status, heading, message
// and page headers.
func TestRefusalPages(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		put, err := http.NewRequest("PUT", e.srv.URL+"/admin/pets", nil)
		if err != nil {
			t.Fatal(err)
		}
		const refused = "Request refused"
		tests := []struct {
			name    string
			p       page
			status  int
			heading string
			message string
		}{
			{"unknown page", b.get("/admin/nowhere"), http.StatusNotFound, "Page not found", "There is no page at this address."},
			{"other method", b.do(put), http.StatusMethodNotAllowed, "Not allowed", "This page cannot be used that way."},
			{"forged token", b.post("/admin/pets", url.Values{"csrf_token": {"forged"}, "name": {"Rex"}}), http.StatusForbidden, refused,
				"This form has expired or came from another site, so nothing was changed. Go back, reload the page and try again."},
			{"other site", b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {"Rex"}}, "Sec-Fetch-Site", "cross-site"),
				http.StatusForbidden, refused, "This form has expired or came from another site"},
			{"unreadable form", b.postRaw("/admin/pets", "csrf_token="+tok+"&name=%zz"), http.StatusBadRequest, refused,
				"The form could not be read, so nothing was changed."},
			{"form too large", b.post("/admin/pets", url.Values{"csrf_token": {tok}, "name": {strings.Repeat("x", 100<<10)}}),
				http.StatusRequestEntityTooLarge, refused, "The form is too large, so nothing was changed."},
			{"no such pet", b.post("/admin/pets/987654/status", url.Values{"csrf_token": {tok}, "status": {"sold"}}),
				http.StatusNotFound, "Not Found", "No pet has id 987654."},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantStatus(t, tt.p, tt.status)
				if got := text(tt.p, "h1"); got != tt.heading {
					t.Errorf("heading %q, want %q", got, tt.heading)
				}
				if got := text(tt.p, "title"); got != tt.heading+" · Petstore admin" {
					t.Errorf("title %q", got)
				}
				if got := text(tt.p, ".error-page p"); !strings.HasPrefix(got, tt.message) {
					t.Errorf("message %q, want %q", got, tt.message)
				}
				if !strings.HasPrefix(tt.p.Header.Get("Content-Type"), "text/html") || tt.p.Header.Get("Content-Security-Policy") == "" ||
					tt.p.Header.Get("Cache-Control") != "no-store" {
					t.Errorf("headers %v", tt.p.Header)
				}
			})
		}
		if n := e.countPets(t); n != 0 {
			t.Errorf("refused forms stored %d pets", n)
		}
	})
}

// One rule for ids: the console refuses what the API refuses (a leading
// '+') and takes what it takes (leading zeros), in its paths and in its
// query parameters alike.
func TestConsoleIDRule(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		pets := e.addPets(t, 3, models.StatusAvailable, "P")
		b, tok := e.signedIn()
		me, err := e.store.FindUser(context.Background(), staffName)
		if err != nil {
			t.Fatal(err)
		}
		k, _, err := e.store.CreateAPIKey(context.Background(), "app", staffName)
		if err != nil {
			t.Fatal(err)
		}
		id := func(n int64) string { return strconv.FormatInt(n, 10) }
		pet := id(pets[2].ID)
		const beforeMsg = "The page address is not valid: before must be a pet id."
		const afterMsg = "After must be a pet id: a whole number from 0 upwards."
		tests := []struct {
			name, path string
			status     int
			msg        string // on the page
		}{
			{"before with +", "/admin/pets?before=%2B" + pet, http.StatusBadRequest, beforeMsg},
			{"after with +", "/admin/pets?after=%2B" + id(pets[0].ID), http.StatusBadRequest, afterMsg},
			{"before 0", "/admin/pets?before=0", http.StatusBadRequest, beforeMsg},
			{"before with a leading zero", "/admin/pets?before=0" + pet, http.StatusOK, "P 1"},
			{"after with a leading zero", "/admin/pets?after=0" + id(pets[0].ID), http.StatusOK, "P 2"},
			{"member with +", "/admin/users/+" + id(me.ID), http.StatusNotFound, "There is no staff member with this id."},
			{"member with a leading zero", "/admin/users/0" + id(me.ID), http.StatusOK, "Staff member " + staffName},
			{"key with +", "/admin/api-keys/+" + id(k.ID) + "/revoke", http.StatusNotFound, "There is no API key with this id."},
			{"key with a leading zero", "/admin/api-keys/0" + id(k.ID) + "/revoke", http.StatusOK, "app"},
			{"audit target with +", "/admin/audit?target=pet:%2B" + pet, http.StatusBadRequest, "Target must look like pet:12"},
			{"audit target with a leading zero", "/admin/audit?target=pet:0" + pet, http.StatusOK, " added P "},
			{"audit before with +", "/admin/audit?before=%2B5", http.StatusBadRequest, "Before must be an event id."},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.get(tt.path)
				wantStatus(t, p, tt.status)
				if !strings.Contains(p.Doc.Find("main").Text(), tt.msg) {
					t.Errorf("no %q on the page:\n%.3000s", tt.msg, p.Body)
				}
			})
		}
		// A pet's status form: a '+' names no pet and changes nothing.
		wantStatus(t, b.post("/admin/pets/+"+pet+"/status", url.Values{"csrf_token": {tok}, "status": {"sold"}}), http.StatusNotFound)
		wantStatus(t, b.post("/admin/pets/0"+pet+"/status", url.Values{"csrf_token": {tok}, "status": {"pending"}}), http.StatusSeeOther)
		if got, _ := e.store.GetPet(context.Background(), pets[2].ID); got.Status != models.StatusPending {
			t.Errorf("status %q, want pending only", got.Status)
		}
	})
}

// postRaw posts a form body as written, as a same-origin browser would.
func (b *browser) postRaw(path, body string) page {
	b.e.t.Helper()
	req, err := http.NewRequest("POST", b.e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}
