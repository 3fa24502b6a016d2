package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/models"
)

// defaultScopes are the scope fields a browser sends for the create form
// as it comes: the checkboxes checked by default.
var defaultScopes = []string{"pets:read", "pets:write"}

// createAPIKey creates a key through the console's form (without htmx), its
// scopes left as they come, and returns the page and the key it shows once.
func createAPIKey(t *testing.T, b *browser, tok, name string) (page, string) {
	t.Helper()
	p := b.post("/admin/api-keys", url.Values{"csrf_token": {tok}, "name": {name}, "scope": defaultScopes})
	wantStatus(t, p, http.StatusOK)
	key, ok := p.Doc.Find(`[data-testid="new-key"] input`).Attr("value")
	if !ok || !strings.HasPrefix(key, "pst_") {
		t.Fatalf("no new key shown:\n%s", p.Body)
	}
	return p, key
}

// apiKeyRow finds the list's row of the key named name.
func apiKeyRow(t *testing.T, p page, name string) *goquery.Selection {
	t.Helper()
	row := p.Doc.Find(`[data-testid="api-key-row"]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.TrimSpace(s.Find(`th[scope="row"]`).Text()) == name
	})
	if row.Length() != 1 {
		t.Fatalf("%d rows named %q in the list:\n%s", row.Length(), name, p.Body)
	}
	return row
}

// apiKeyWorks reports whether key authenticates on the API right now.
func apiKeyWorks(t *testing.T, e *env, key string) bool {
	t.Helper()
	_, err := e.store.Authenticate(context.Background(), key)
	if err != nil && models.ErrorCode(err) != models.CodeUnauthorized {
		t.Fatal(err)
	}
	return err == nil
}

func countAPIKeys(t *testing.T, e *env) int {
	t.Helper()
	keys, err := e.store.ListAPIKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

func TestAPIKeyPagesNeedSignIn(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		k, key, err := e.store.CreateAPIKey(context.Background(), "partner", "test")
		if err != nil {
			t.Fatal(err)
		}
		b := e.browser()
		confirm := fmt.Sprintf("/admin/api-keys/%d/revoke", k.ID)
		for _, path := range []string{"/admin/api-keys", confirm} {
			p := b.get(path)
			wantStatus(t, p, http.StatusSeeOther)
			if got, want := p.Header.Get("Location"), "/admin/login?next="+url.QueryEscape(path); got != want {
				t.Errorf("%s redirects to %q, want %q", path, got, want)
			}
		}
		// A visitor's token is worth nothing without a staff session.
		tok := csrf(t, b.get("/admin/login"))
		for _, path := range []string{"/admin/api-keys", confirm} {
			p := b.post(path, url.Values{"csrf_token": {tok}, "name": {"sneaky"}})
			wantStatus(t, p, http.StatusSeeOther)
		}
		if n := countAPIKeys(t, e); n != 1 || !apiKeyWorks(t, e, key) {
			t.Errorf("without a session: %d keys, key works %v; want 1 and true", n, apiKeyWorks(t, e, key))
		}
	})
}

func TestAPIKeysPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		p := b.get("/admin/api-keys")
		wantStatus(t, p, http.StatusOK)
		if n := p.Doc.Find("h1").Length(); n != 1 || text(p, "h1") != "API keys" {
			t.Errorf("%d h1, first %q; want one \"API keys\"", n, text(p, "h1"))
		}
		if !strings.Contains(text(p, ".empty"), "No API keys yet") || p.Doc.Find("table").Length() != 0 {
			t.Errorf("empty state %q, %d tables", text(p, ".empty"), p.Doc.Find("table").Length())
		}
		name := labelled(t, p, "Name")
		form := name.Closest("form")
		if name.AttrOr("name", "") != "name" || form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/admin/api-keys" {
			t.Error("the Name field is not in a form posting to /admin/api-keys")
		}
		if form.Find(`input[name="csrf_token"]`).Length() != 1 || strings.TrimSpace(form.Find(`button[type="submit"]`).Text()) != "Create key" {
			t.Error("create form lacks its CSRF token or its \"Create key\" button")
		}
		if text(p, `nav [aria-current="page"]`) != "API keys" {
			t.Errorf("current navigation entry %q", text(p, `nav [aria-current="page"]`))
		}
	})
}

func TestCreateAPIKey(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		created := time.Date(2026, 11, 21, 14, 3, 27, 0, time.UTC)
		e.store.SetClock(func() time.Time { return created })
		b, tok := e.signedIn()

		p, key := createAPIKey(t, b, tok, "  Acme shop  ")
		panel := p.Doc.Find(`[data-testid="new-key"]`)
		if !panel.HasClass("key-once") || !strings.Contains(panel.Text(), "will not be shown again") {
			t.Errorf("new key panel does not say it is shown once:\n%s", panel.Text())
		}
		input := panel.Find("input")
		id := input.AttrOr("id", "")
		if id == "" || panel.Find(`button[data-copy="#`+id+`"]`).Length() != 1 || input.AttrOr("readonly", "x") == "x" {
			t.Errorf("the key needs an id'd readonly field and a copy button pointing at it:\n%s", p.Body)
		}
		if labelled(t, p, "API key").AttrOr("value", "") != key {
			t.Error("the key's field is not labelled")
		}
		k, err := e.store.Authenticate(context.Background(), key)
		if err != nil || k.Name != "Acme shop" || k.CreatedBy != staffName {
			t.Fatalf("the key shown does not authenticate as the new key: %+v, %v", k, err)
		}

		// Later the list shows the key's public facts, never the key.
		e.store.SetClock(func() time.Time { return created.Add(90 * time.Minute) })
		if !apiKeyWorks(t, e, key) { // notes the use
			t.Fatal("key stopped working")
		}
		list := b.get("/admin/api-keys")
		wantStatus(t, list, http.StatusOK)
		if strings.Contains(list.Body, key) || strings.Contains(list.Body, key[len(k.Prefix):]) {
			t.Fatal("the key is shown again")
		}
		if list.Doc.Find(`[data-testid="new-key"]`).Length() != 0 {
			t.Error("the new-key panel is shown again")
		}
		var cells []string
		apiKeyRow(t, list, "Acme shop").Children().Each(func(_ int, s *goquery.Selection) {
			cells = append(cells, strings.Join(strings.Fields(s.Text()), " "))
		})
		want := []string{"Acme shop", k.Prefix, "pets:read pets:write", staffName, "21 Nov 2026, 14:03 UTC", "21 Nov 2026, 15:33 UTC",
			"never", "never", "Active", "Revoke"}
		if strings.Join(cells, "|") != strings.Join(want, "|") {
			t.Errorf("row = %q\nwant  %q", cells, want)
		}
		var headers []string
		list.Doc.Find(`table thead th[scope="col"]`).Each(func(_ int, s *goquery.Selection) { headers = append(headers, s.Text()) })
		if got := strings.Join(headers, "|"); got != "Name|Prefix|Scopes|Created by|Created|Last used|Expires|Last deprecated call|Status|Action" {
			t.Errorf("columns %q", got)
		}
		if list.Doc.Find("table").AttrOr("aria-labelledby", "") == "" && list.Doc.Find("table caption").Length() == 0 {
			t.Error("the table has no caption or label")
		}

		// A new key's "Last used" says never; keys are listed newest first.
		_, key2 := createAPIKey(t, b, tok, "Second")
		list = b.get("/admin/api-keys")
		if got := strings.TrimSpace(list.Doc.Find(`[data-testid="api-key-row"] th`).First().Text()); got != "Second" {
			t.Errorf("first row %q, want the newest key", got)
		}
		if got := strings.TrimSpace(apiKeyRow(t, list, "Second").Children().Eq(5).Text()); got != "never" {
			t.Errorf("unused key's last use %q", got)
		}
		if strings.Contains(list.Body, key2) {
			t.Error("the second key is shown again")
		}
	})
}

// With htmx, creating a key swaps only the keys section.
func TestCreateAPIKeyHTMX(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		p := b.post("/admin/api-keys", url.Values{"name": {"Partner"}, "scope": defaultScopes}, "HX-Request", "true", "X-CSRF-Token", tok)
		wantStatus(t, p, http.StatusOK)
		if strings.Contains(p.Body, "<html") || p.Doc.Find("section#api-keys-section").Length() != 1 {
			t.Fatalf("htmx got more or less than the section:\n%s", p.Body)
		}
		key := p.Doc.Find(`[data-testid="new-key"] input`).AttrOr("value", "")
		if !apiKeyWorks(t, e, key) {
			t.Errorf("htmx-created key %q does not work", key)
		}
		apiKeyRow(t, p, "Partner")
		if p.Doc.Find(`#flash[hx-swap-oob]`).Length() != 1 {
			t.Error("a stale flash would stay: no out-of-band flash")
		}
		// The form the section brings still has a token of this session
		// (masked afresh, so its bytes differ): a post with it is accepted.
		wantStatus(t, b.post("/admin/api-keys", url.Values{"csrf_token": {csrf(t, p)}, "name": {"Second"}, "scope": defaultScopes},
			"HX-Request", "true"), http.StatusOK)
	})
}

func TestCreateAPIKeyInvalid(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		tests := []struct {
			name, input, msg string
			htmx             bool
		}{
			{"empty", "", "Name is required.", false},
			{"blank", "   ", "Name is required.", false},
			{"too long", strings.Repeat("x", models.MaxKeyNameLength+1), "Name must be at most 100 characters of text.", false},
			{"empty via htmx", "", "Name is required.", true},
			{"right-to-left override", "partner\u202Eppa", "Name must not contain invisible or text-direction characters (U+202E at position 8).", false},
			{"zero width space via htmx", "part\u200Bner", "Name must not contain invisible or text-direction characters (U+200B at position 5).", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var headers []string
				if tt.htmx {
					headers = []string{"HX-Request", "true"}
				}
				p := b.post("/admin/api-keys", url.Values{"csrf_token": {tok}, "name": {tt.input}, "scope": defaultScopes}, headers...)
				wantStatus(t, p, http.StatusUnprocessableEntity)
				if tt.htmx == (p.Doc.Find("html body main").Length() == 1) {
					t.Errorf("htmx %v: got the whole page %v", tt.htmx, !tt.htmx)
				}
				field := labelled(t, p, "Name")
				if field.AttrOr("value", "") != tt.input {
					t.Errorf("typed name not kept: %q", field.AttrOr("value", ""))
				}
				if field.AttrOr("aria-invalid", "") != "true" {
					t.Error("field not marked invalid")
				}
				errID := strings.Fields(field.AttrOr("aria-describedby", ""))
				if len(errID) == 0 || strings.TrimSpace(p.Doc.Find("#"+errID[0]).Text()) != tt.msg {
					t.Errorf("field's description %v does not hold %q:\n%s", errID, tt.msg, p.Body)
				}
				if p.Doc.Find(`[data-testid="new-key"]`).Length() != 0 {
					t.Error("a key is shown")
				}
				if n := countAPIKeys(t, e); n != 0 {
					t.Errorf("%d keys stored", n)
				}
			})
		}
	})
}

func TestAPIKeyNamesEscaped(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		for _, name := range []string{`<script>alert(1)</script>`, `<img src=x onerror=alert(1)>`, `"><b>bold</b>`} {
			t.Run(name, func(t *testing.T) {
				created, _ := createAPIKey(t, b, tok, name)
				list := b.get("/admin/api-keys")
				k := apiKeyRow(t, list, name)
				id := strings.TrimPrefix(k.AttrOr("id", ""), "api-key-")
				confirm := b.get("/admin/api-keys/" + id + "/revoke")
				wantStatus(t, confirm, http.StatusOK)
				revoked := b.post("/admin/api-keys/"+id+"/revoke", url.Values{}, "HX-Request", "true", "X-CSRF-Token", tok)
				wantStatus(t, revoked, http.StatusOK)
				for what, p := range map[string]page{"create": created, "list": list, "confirm": confirm, "revoke": revoked} {
					for _, raw := range []string{"<script>alert", "<img src=x", "<b>bold"} {
						if strings.Contains(p.Body, raw) {
							t.Errorf("%s page has %q unescaped", what, raw)
						}
					}
					if !strings.Contains(p.Doc.Text(), name) {
						t.Errorf("%s page does not show the name as text", what)
					}
				}
				if got := strings.TrimSpace(confirm.Doc.Find("h1").Text()); got != "Revoke API key “"+name+"”?" {
					t.Errorf("confirmation heading %q", got)
				}
			})
		}
	})
}

// liveAPIKey creates a key in the store and returns it with its row's page.
func liveAPIKey(t *testing.T, e *env, b *browser, name string) (models.APIKey, string, *goquery.Selection) {
	t.Helper()
	k, key, err := e.store.CreateAPIKey(context.Background(), name, "test")
	if err != nil {
		t.Fatal(err)
	}
	return k, key, apiKeyRow(t, b.get("/admin/api-keys"), name)
}

func TestRevokeAPIKeyWithConfirmationPage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		k, key, row := liveAPIKey(t, e, b, "Acme shop")
		link := row.Find(`a[data-testid="revoke"]`)
		path := fmt.Sprintf("/admin/api-keys/%d/revoke", k.ID)
		if strings.TrimSpace(link.Text()) != "Revoke" || link.AttrOr("href", "") != path {
			t.Fatalf("revoke link %q -> %q, want Revoke -> %s", link.Text(), link.AttrOr("href", ""), path)
		}

		// Asking changes nothing.
		confirm := b.get(path)
		wantStatus(t, confirm, http.StatusOK)
		if !apiKeyWorks(t, e, key) {
			t.Fatal("the confirmation page revoked the key")
		}
		body := confirm.Doc.Find("main").Text()
		for _, want := range []string{"Acme shop", k.Prefix, "401"} {
			if !strings.Contains(body, want) {
				t.Errorf("confirmation page lacks %q:\n%s", want, body)
			}
		}
		form := confirm.Doc.Find(`main form[method="post"]`)
		if form.AttrOr("action", "") != path || strings.TrimSpace(form.Find(`button[type="submit"]`).Text()) != "Revoke" {
			t.Errorf("confirmation form posts to %q with button %q", form.AttrOr("action", ""), form.Find("button").Text())
		}
		if confirm.Doc.Find(`main a[href="/admin/api-keys"]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return strings.TrimSpace(s.Text()) == "Cancel"
		}).Length() != 1 {
			t.Error("no Cancel link back to the list")
		}

		// The form carries the confirmation, and its button is styled as
		// dangerous, not as the primary action.
		if value(confirm, `main form input[name="confirm"]`) != "yes" || !form.Find(`button[type="submit"]`).HasClass("danger") {
			t.Errorf("confirmation form lacks confirm=yes or the danger style:\n%s", confirm.Body)
		}
		// A post without the confirmation revokes nothing: it asks.
		unconfirmed := b.post(path, url.Values{"csrf_token": {csrf(t, confirm)}})
		wantStatus(t, unconfirmed, http.StatusOK)
		if !apiKeyWorks(t, e, key) || unconfirmed.Doc.Find(`main form input[name="confirm"][value="yes"]`).Length() != 1 {
			t.Fatalf("a post without confirmation revoked the key or did not ask:\n%s", unconfirmed.Body)
		}

		res := b.post(path, url.Values{"csrf_token": {csrf(t, confirm)}, "confirm": {"yes"}})
		wantStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/admin/api-keys" {
			t.Errorf("after revoking: Location %q", loc)
		}
		if apiKeyWorks(t, e, key) {
			t.Fatal("the key still works after revocation")
		}
		list := b.get("/admin/api-keys")
		if got := text(list, `[data-testid="flash"]`); got != "API key “Acme shop” revoked." {
			t.Errorf("flash %q", got)
		}
		row = apiKeyRow(t, list, "Acme shop")
		if badge := row.Find(".badge-revoked"); !strings.HasPrefix(badge.Text(), "Revoked ") || !strings.HasSuffix(badge.Text(), " UTC") {
			t.Errorf("revoked badge %q", badge.Text())
		}
		if row.Find("a, button, form").Length() != 0 {
			t.Error("a revoked key still has an action")
		}
		// Its confirmation page now only says so.
		again := b.get(path)
		wantStatus(t, again, http.StatusOK)
		if again.Doc.Find("main form").Length() != 0 || text(again, `[data-testid="already-revoked"]`) == "" {
			t.Errorf("confirmation page of a revoked key:\n%s", again.Body)
		}
	})
}

func TestRevokeAPIKeyHTMX(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		k, key, row := liveAPIKey(t, e, b, "Acme shop")
		other, otherKey, _ := liveAPIKey(t, e, b, "Other")
		link := row.Find(`a[data-testid="revoke"]`)
		path := fmt.Sprintf("/admin/api-keys/%d/revoke", k.ID)
		if !link.HasClass("danger") {
			t.Error("the Revoke link is not styled as dangerous")
		}
		for attr, want := range map[string]string{"hx-post": path, "hx-target": "closest tr", "hx-swap": "outerHTML", "hx-vals": `{"confirm": "yes"}`} {
			if got := link.AttrOr(attr, ""); got != want {
				t.Errorf("revoke link %s = %q, want %q", attr, got, want)
			}
		}
		if c := link.AttrOr("hx-confirm", ""); !strings.Contains(c, "Acme shop") || !strings.Contains(c, "401") {
			t.Errorf("hx-confirm %q does not name the key and the consequence", c)
		}

		// Without the confirmation its dialog adds, htmx gets the
		// confirmation page in place of the body, and nothing is revoked.
		p := b.post(path, nil, "HX-Request", "true", "X-CSRF-Token", tok)
		wantStatus(t, p, http.StatusOK)
		if p.Header.Get("HX-Retarget") != "body" || !apiKeyWorks(t, e, key) {
			t.Fatalf("unconfirmed htmx revoke: HX-Retarget %q, key works %v", p.Header.Get("HX-Retarget"), apiKeyWorks(t, e, key))
		}
		p = b.post(path, url.Values{"confirm": {"yes"}}, "HX-Request", "true", "X-CSRF-Token", tok)
		wantStatus(t, p, http.StatusOK)
		if !strings.HasPrefix(strings.TrimSpace(p.Body), "<tr") {
			t.Errorf("htmx answer does not start with the row:\n%s", p.Body)
		}
		if apiKeyWorks(t, e, key) {
			t.Fatal("the key still works after revocation")
		}
		if !apiKeyWorks(t, e, otherKey) {
			t.Fatalf("revoking %d revoked %d too", k.ID, other.ID)
		}
		if !strings.HasPrefix(text(p, ".badge-revoked"), "Revoked ") || p.Doc.Find(`a[data-testid="revoke"]`).Length() != 0 {
			t.Errorf("swapped row:\n%s", p.Body)
		}
		if got := text(p, `#flash[hx-swap-oob] [data-testid="flash"]`); got != "API key “Acme shop” revoked." {
			t.Errorf("out-of-band flash %q", got)
		}
		// Revoking twice is harmless.
		wantStatus(t, b.post(path, nil, "HX-Request", "true", "X-CSRF-Token", tok), http.StatusOK)
	})
}

func TestRevokeAPIKeyRefused(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		k, key, _ := liveAPIKey(t, e, b, "Acme shop")
		path := fmt.Sprintf("/admin/api-keys/%d/revoke", k.ID)
		tests := []struct {
			name    string
			form    url.Values
			headers []string
		}{
			{"no token", url.Values{}, nil},
			{"forged token", url.Values{"csrf_token": {"forged"}}, nil},
			{"forged htmx header", nil, []string{"HX-Request", "true", "X-CSRF-Token", "forged"}},
			{"cross-site form post", url.Values{"csrf_token": {tok}}, []string{"Sec-Fetch-Site", "cross-site"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantStatus(t, b.post(path, tt.form, tt.headers...), http.StatusForbidden)
				if !apiKeyWorks(t, e, key) {
					t.Fatal("a refused request revoked the key")
				}
			})
		}
		// Creating is guarded the same way.
		wantStatus(t, b.post("/admin/api-keys", url.Values{"csrf_token": {"forged"}, "name": {"x"}}), http.StatusForbidden)
		if n := countAPIKeys(t, e); n != 1 {
			t.Errorf("%d keys after a refused create", n)
		}
	})
}

func TestAPIKeyUnknownIDs(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, tok := e.signedIn()
		for _, id := range []string{"999999", "0", "-1", "abc", "1.5", "99999999999999999999"} {
			path := "/admin/api-keys/" + id + "/revoke"
			for _, p := range []page{b.get(path), b.post(path, url.Values{"csrf_token": {tok}})} {
				wantStatus(t, p, http.StatusNotFound)
				if !strings.Contains(p.Header.Get("Content-Type"), "text/html") || text(p, "h1") != "Not Found" {
					t.Errorf("%s: %s, h1 %q", path, p.Header.Get("Content-Type"), text(p, "h1"))
				}
			}
		}
	})
}

// scopeBoxes returns the create form's scope checkboxes by label.
func scopeBoxes(t *testing.T, p page) map[string]*goquery.Selection {
	t.Helper()
	boxes := map[string]*goquery.Selection{}
	for label, name := range map[string]string{
		"pets:read: list and fetch animals (the GET operations)":                                                              "pets:read",
		"pets:write: add animals (POST /v1/pets)":                                                                             "pets:write",
		"metrics:read: read the service's own figures (requests, timings), for whoever runs the service; no partner needs it": "metrics:read",
	} {
		box := labelled(t, p, label)
		if box.AttrOr("type", "") != "checkbox" || box.AttrOr("name", "") != "scope" || box.AttrOr("value", "") != name {
			t.Errorf("%s: type %q name %q value %q", name, box.AttrOr("type", ""), box.AttrOr("name", ""), box.AttrOr("value", ""))
		}
		boxes[name] = box
	}
	return boxes
}

// checked lists the scope checkboxes checked, in form order.
func checked(p page) string {
	var names []string
	p.Doc.Find(`input[name="scope"][checked]`).Each(func(_ int, s *goquery.Selection) { names = append(names, s.AttrOr("value", "")) })
	return strings.Join(names, " ")
}

// The create form offers the scopes, pets:read and pets:write checked and
// metrics:read not, in a labelled group, and an optional expiry date from
// tomorrow on.
func TestAPIKeyFormScopesAndExpiry(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		b, _ := e.signedIn()
		p := b.get("/admin/api-keys")
		wantStatus(t, p, http.StatusOK)
		boxes := scopeBoxes(t, p)
		if got := checked(p); got != "pets:read pets:write" {
			t.Errorf("checked by default: %q, want pets:read pets:write", got)
		}
		fieldset := boxes["pets:read"].Closest("fieldset")
		if text(p, "fieldset legend") != "Scopes" || fieldset.Find(`input[type="checkbox"]`).Length() != 3 {
			t.Errorf("the checkboxes are not in a fieldset with the legend Scopes:\n%s", p.Body)
		}
		if help := fieldset.AttrOr("aria-describedby", ""); help == "" || text(p, "#"+help) != "What the key may do; at least one." {
			t.Errorf("the scopes' help %q", help)
		}
		if boxes["pets:read"].Closest("form").AttrOr("action", "") != "/admin/api-keys" {
			t.Error("the scopes are not in the create form")
		}
		expires := labelled(t, p, "Expires on (optional)")
		tomorrow := e.clock.Load().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
		if expires.AttrOr("type", "") != "date" || expires.AttrOr("name", "") != "expires" || expires.AttrOr("min", "") != tomorrow ||
			expires.AttrOr("value", "x") != "" || expires.AttrOr("required", "no") != "no" {
			t.Errorf("expiry field: %s", must(goquery.OuterHtml(expires)))
		}
		if help := expires.AttrOr("aria-describedby", ""); !strings.Contains(text(p, "#"+help), "00:00 on this day, store time (UTC)") {
			t.Errorf("the expiry's help %q does not say when on the day it ends", text(p, "#"+help))
		}
	})
}

func must(s string, err error) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// A key made with chosen scopes and an expiry date has them, and the list
// shows them.
func TestCreateAPIKeyWithScopesAndExpiry(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.store.SetClock(func() time.Time { return *e.clock.Load() })
		b, tok := e.signedIn()
		day := e.clock.Load().UTC().AddDate(0, 0, 30)
		date := day.Format(time.DateOnly)
		tests := []struct {
			name, expires string
			scopes        []string
			want          models.Scopes
			listed        string
		}{
			{"Reader", date, []string{"pets:read"}, models.ScopePetsRead, "pets:read"},
			{"Writer", "", []string{"pets:write"}, models.ScopePetsWrite, "pets:write"},
			{"Scraper", "", []string{"metrics:read", "pets:read"}, models.ScopePetsRead | models.ScopeMetricsRead, "pets:read metrics:read"},
		}
		for _, tt := range tests {
			p := b.post("/admin/api-keys", url.Values{"csrf_token": {tok}, "name": {tt.name}, "scope": tt.scopes, "expires": {tt.expires}})
			wantStatus(t, p, http.StatusOK)
			key := p.Doc.Find(`[data-testid="new-key"] input`).AttrOr("value", "")
			k, err := e.store.Authenticate(context.Background(), key)
			if err != nil || k.Scopes != tt.want {
				t.Fatalf("%s: key authenticates as %q, %v; want %q", tt.name, k.Scopes, err, tt.want)
			}
			wantExpiry := (*time.Time)(nil)
			if tt.expires != "" {
				midnight := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
				wantExpiry = &midnight
			}
			if (k.ExpiresAt == nil) != (wantExpiry == nil) || (k.ExpiresAt != nil && !k.ExpiresAt.Equal(*wantExpiry)) {
				t.Errorf("%s: expires %v, want %v", tt.name, k.ExpiresAt, wantExpiry)
			}
			// The form comes back as new.
			if got := checked(p); got != "pets:read pets:write" || labelled(t, p, "Expires on (optional)").AttrOr("value", "") != "" {
				t.Errorf("%s: the form after a create has %q checked, expiry %q", tt.name, got, labelled(t, p, "Expires on (optional)").AttrOr("value", ""))
			}
		}
		list := b.get("/admin/api-keys")
		for _, tt := range tests {
			row := apiKeyRow(t, list, tt.name)
			if got := strings.Join(strings.Fields(row.Find(`[data-testid="scopes"]`).Text()), " "); got != tt.listed {
				t.Errorf("%s: scopes shown %q, want %q", tt.name, got, tt.listed)
			}
			want := "never"
			if tt.expires != "" {
				want = day.Format("2 Jan 2006") + ", 00:00 UTC"
			}
			if got := strings.Join(strings.Fields(row.Find(`[data-testid="expires"]`).Text()), " "); got != want {
				t.Errorf("%s: expiry shown %q, want %q", tt.name, got, want)
			}
			if row.Find(`[data-testid="expired"]`).Length() != 0 || !strings.Contains(row.Text(), "Active") {
				t.Errorf("%s: a live key is not shown active", tt.name)
			}
		}
	})
}

// A refused scope choice or expiry re-renders the form as typed, each
// message beside its field, and stores nothing.
func TestCreateAPIKeyScopesOrExpiryInvalid(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		e.store.SetClock(func() time.Time { return *e.clock.Load() })
		b, tok := e.signedIn()
		today := e.clock.Load().UTC().Format(time.DateOnly)
		tests := []struct {
			name, expires      string
			scopes             []string
			scopesMsg, expMsg  string
			wantChecked, focus string
			htmx               bool
		}{
			{"no scope", "", nil, "Choose at least one scope.", "", "", "key-scope-pets-read", false},
			{"no scope via htmx", "", nil, "Choose at least one scope.", "", "", "key-scope-pets-read", true},
			{"forged scope", "", []string{"pets:read", "admin"}, `Unknown scope "admin": the scopes are pets:read, pets:write and metrics:read.`, "", "pets:read", "key-scope-pets-read", false},
			{"today", today, []string{"pets:write"}, "", "Expiry " + today + "T00:00:00Z is in the past: give a later time.", "pets:write", "key-expires", false},
			{"not a date", "next week", []string{"pets:read"}, "", `Expiry "next week" is not a number of days (90d), a date (2027-03-01) or an RFC 3339 time (2027-03-01T12:00:00Z).`, "pets:read", "key-expires", true},
			{"both", "2020-01-01", nil, "Choose at least one scope.", "Expiry 2020-01-01T00:00:00Z is in the past: give a later time.", "", "key-scope-pets-read", false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var headers []string
				if tt.htmx {
					headers = []string{"HX-Request", "true"}
				}
				p := b.post("/admin/api-keys", url.Values{"csrf_token": {tok}, "name": {"Partner"}, "scope": tt.scopes, "expires": {tt.expires}}, headers...)
				wantStatus(t, p, http.StatusUnprocessableEntity)
				if p.Doc.Find(`[data-testid="new-key"]`).Length() != 0 || countAPIKeys(t, e) != 0 {
					t.Fatal("a key was created")
				}
				if labelled(t, p, "Name").AttrOr("value", "") != "Partner" || labelled(t, p, "Expires on (optional)").AttrOr("value", "") != tt.expires {
					t.Error("the typed name or expiry is not kept")
				}
				boxes := scopeBoxes(t, p)
				if got := checked(p); got != tt.wantChecked {
					t.Errorf("checked after the refusal: %q, want as sent %q", got, tt.wantChecked)
				}
				fieldset := boxes["pets:read"].Closest("fieldset")
				gotScopes := text(p, "#"+fieldset.AttrOr("aria-describedby", "x"))
				if tt.scopesMsg != "" && (gotScopes != tt.scopesMsg || boxes["pets:read"].AttrOr("aria-invalid", "") != "true") {
					t.Errorf("scopes' message %q (invalid %q), want %q", gotScopes, boxes["pets:read"].AttrOr("aria-invalid", ""), tt.scopesMsg)
				}
				if tt.scopesMsg == "" && boxes["pets:read"].AttrOr("aria-invalid", "") != "" {
					t.Error("valid scopes marked invalid")
				}
				expires := labelled(t, p, "Expires on (optional)")
				gotExp := text(p, "#"+expires.AttrOr("aria-describedby", "x"))
				if tt.expMsg != "" && (gotExp != tt.expMsg || expires.AttrOr("aria-invalid", "") != "true") {
					t.Errorf("expiry's message %q (invalid %q), want %q", gotExp, expires.AttrOr("aria-invalid", ""), tt.expMsg)
				}
				if tt.expMsg == "" && expires.AttrOr("aria-invalid", "") != "" {
					t.Error("a valid expiry marked invalid")
				}
				if focus := p.Doc.Find("[autofocus]"); focus.Length() != 1 || focus.AttrOr("id", "") != tt.focus {
					t.Errorf("%d autofocused fields, first #%s; want #%s alone", focus.Length(), focus.AttrOr("id", ""), tt.focus)
				}
			})
		}
	})
}

// The list shows a key past its expiry as expired, and when each key last
// called the deprecated GET /v1/pets/{petId}.
func TestAPIKeyListExpiredAndDeprecatedCalls(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		now := e.clock.Load().UTC().Truncate(time.Second)
		e.store.SetClock(func() time.Time { return now.Add(-48 * time.Hour) })
		if _, _, err := e.store.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "Old", Scopes: defaultScopes, Expires: "1d"}, "test"); err != nil {
			t.Fatal(err)
		}
		e.store.SetClock(func() time.Time { return now })
		_, caller, err := e.store.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "Caller", Scopes: defaultScopes}, "test")
		if err != nil {
			t.Fatal(err)
		}
		_, modern, err := e.store.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: "Modern", Scopes: defaultScopes}, "test")
		if err != nil {
			t.Fatal(err)
		}
		// Caller uses the deprecated endpoint on the API (a 404 counts
		// too), Modern only its successor.
		for key, path := range map[string]string{caller: "/v1/pets/1", modern: "/v1/pets"} {
			req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if want := map[string]int{"/v1/pets/1": http.StatusNotFound, "/v1/pets": http.StatusOK}[path]; res.StatusCode != want {
				t.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
			}
		}

		b, _ := e.signedIn()
		list := b.get("/admin/api-keys")
		cell := func(name, testid string) string {
			return strings.Join(strings.Fields(apiKeyRow(t, list, name).Find(`[data-testid="`+testid+`"]`).Text()), " ")
		}
		old := apiKeyRow(t, list, "Old")
		if got := text(page{Doc: goquery.NewDocumentFromNode(old.Nodes[0])}, `[data-testid="expired"]`); got != "Expired" {
			t.Errorf("expired key's status %q, want Expired", got)
		}
		if want := formatDay(now.Add(-24*time.Hour)) + " UTC"; cell("Old", "expires") != want {
			t.Errorf("expired key's expiry %q, want %q", cell("Old", "expires"), want)
		}
		if old.Find(`a[data-testid="revoke"]`).Length() != 1 {
			t.Error("an expired key cannot be revoked")
		}
		if apiKeyRow(t, list, "Modern").Find(`[data-testid="expired"]`).Length() != 0 {
			t.Error("a key without expiry is shown expired")
		}
		if want := formatDay(now) + " UTC"; cell("Caller", "last-deprecated-call") != want {
			t.Errorf("caller's last deprecated call %q, want %q", cell("Caller", "last-deprecated-call"), want)
		}
		if got := cell("Modern", "last-deprecated-call"); got != "never" {
			t.Errorf("a key that never called it: %q, want never", got)
		}
		if !strings.Contains(list.Doc.Find("main").Text(), "5 December 2030") {
			t.Error("the page does not say when the deprecated endpoint goes")
		}
	})
}

// formatDay is a time as the list shows it, without " UTC".
func formatDay(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04") }
