package templates_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/templates"
)

// TestPetPageConflict: after a conflict the edit form keeps what was
// typed, shows the stored values beside their fields (tied to them for
// screen readers), opens with the message, and escapes every name.
func TestPetPageConflict(t *testing.T) {
	t.Parallel()
	hostile := `<script>alert(1)</script>`
	v := templates.PetPageView{ID: 7, Name: hostile, CategoryID: "3", Status: "pending", Version: 4,
		Form: templates.PetEditForm{Name: "Rexy", CategoryID: "3", Status: "sold", Version: "4",
			Conflict: `bob changed this pet at 2026-01-02 03:04:05 UTC (name "Rex" -> "` + hostile + `") after you opened it.`,
			Theirs:   map[string]string{"name": hostile, "status": "pending"}},
		History: []templates.AuditRow{{At: templates.Time{Text: "2 Jan 2026, 03:04 UTC", UTC: "2026-01-02T03:04:05Z"}, Actor: "bob", Action: "pet.edited",
			Sentence: []templates.AuditPart{{Text: "bob", Actor: true}, {Text: " renamed it to " + hostile}}, Note: hostile}},
	}
	doc, html := render(t, templates.PetPage(page, v))
	if strings.Contains(html, "<script>alert") {
		t.Fatal("user text rendered raw")
	}
	if doc.Find("h1").Text() != hostile || doc.Find(`[data-testid="edit-name-theirs"] strong`).Text() != hostile {
		t.Error("names not shown as text")
	}
	conflict := doc.Find(`#pet-edit [data-testid="edit-conflict"]`)
	if conflict.AttrOr("role", "") != "alert" || conflict.AttrOr("tabindex", "") != "-1" || conflict.Length() != 1 {
		t.Error("the conflict message is not a focusable alert inside the form")
	}
	if _, ok := conflict.Attr("autofocus"); !ok {
		t.Error("the conflict message does not take the focus")
	}
	if doc.Find("#edit-name").AttrOr("value", "") != "Rexy" || doc.Find("#edit-status option[selected]").AttrOr("value", "") != "sold" {
		t.Error("the form does not show what was typed")
	}
	if d := doc.Find("#edit-name").AttrOr("aria-describedby", ""); d != "edit-name-theirs" {
		t.Errorf("name aria-describedby %q", d)
	}
	if doc.Find("#edit-category").AttrOr("aria-describedby", "") != "" || doc.Find(`[data-testid="edit-category-theirs"]`).Length() != 0 {
		t.Error("a field that does not differ shows a stored value")
	}
	if doc.Find(`#pet-edit input[name="version"]`).AttrOr("value", "") != "4" {
		t.Error("the form lacks the version")
	}
	doc.Find("input:not([type=hidden]), select").Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("id", "")
		if s.AttrOr("aria-label", "") == "" && (id == "" || doc.Find(`label[for="`+id+`"]`).Length() == 0) {
			t.Errorf("unlabelled control %s", goquery.NodeName(s)+"#"+id)
		}
	})
}

// TestPetPageErrors: a validation error marks its field, ties the message
// to it and gives the first such field the focus.
func TestPetPageErrors(t *testing.T) {
	t.Parallel()
	v := templates.PetPageView{ID: 7, Name: "Rex", Status: "sold", Form: templates.PetEditForm{Name: "", CategoryID: "x", Status: "sold",
		Errors: map[string]string{"name": "Name is required.", "categoryId": "Category ID must be a whole number."}}}
	doc, _ := render(t, templates.PetPage(page, v))
	for _, id := range []string{"edit-name", "edit-category"} {
		f := doc.Find("#" + id)
		if f.AttrOr("aria-invalid", "") != "true" || f.AttrOr("aria-describedby", "") != id+"-error" || doc.Find("#"+id+"-error").Text() == "" {
			t.Errorf("%s is not marked invalid and tied to its message", id)
		}
	}
	if _, ok := doc.Find("#edit-name").Attr("autofocus"); !ok {
		t.Error("the first field in error does not take the focus")
	}
	if doc.Find("[autofocus]").Length() != 1 {
		t.Errorf("%d elements take the focus, want 1", doc.Find("[autofocus]").Length())
	}
	if _, ok := doc.Find("#edit-status").Attr("aria-invalid"); ok {
		t.Error("status marked invalid without an error")
	}
	if doc.Find(`[data-testid="history-empty"]`).Length() != 1 {
		t.Error("no empty history state")
	}
}
