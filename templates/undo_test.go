package templates_test

import (
	"testing"

	"petstore/templates"
)

// A message that offers Undo holds a POST form with the CSRF token and the
// page to come back to, whose button names the change for screen readers
// and carries htmx's request; a bulk change's offer has no text of its own
// (its summary has a live region).
func TestFlashUndoOffer(t *testing.T) {
	t.Parallel()
	offer := &templates.UndoOffer{URL: "/admin/undo/7", CSRFToken: "tok-123", Back: "/admin/pets?status=sold", What: "Rex is now sold."}
	for _, tc := range []struct {
		name     string
		text     string
		wantText bool
	}{
		{"with its message", "Rex is now sold.", true},
		{"the offer alone", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, _ := render(t, templates.FlashMessage(templates.Flash{Kind: "success", Text: tc.text, Undo: offer}))
			form := doc.Find(`form[data-testid="undo-form"]`)
			if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/admin/undo/7" {
				t.Errorf("form method %q action %q", form.AttrOr("method", ""), form.AttrOr("action", ""))
			}
			if form.Find(`input[name="csrf_token"]`).AttrOr("value", "") != "tok-123" || form.Find(`input[name="back"]`).AttrOr("value", "") != offer.Back {
				t.Errorf("hidden fields missing")
			}
			b := form.Find(`button[type="submit"][data-testid="undo"]`)
			if b.Text() != "Undo" || b.AttrOr("aria-label", "") != "Undo: Rex is now sold." || b.AttrOr("hx-post", "") != "/admin/undo/7" ||
				b.AttrOr("hx-vals", "") != `{"back":"/admin/pets?status=sold"}` {
				t.Errorf("button %q aria-label %q hx-post %q hx-vals %q", b.Text(), b.AttrOr("aria-label", ""), b.AttrOr("hx-post", ""), b.AttrOr("hx-vals", ""))
			}
			if got := doc.Find(`[data-testid="flash"][role="status"]`).Length() == 1; got != tc.wantText {
				t.Errorf("status message shown %v, want %v", got, tc.wantText)
			}
		})
	}
}
