package testkit

import (
	"bytes"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// HTMLDoc parses a console page.
func HTMLDoc(tb testing.TB, r Reply) *goquery.Document {
	tb.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		tb.Fatal(err)
	}
	return doc
}

// CSRFToken returns the CSRF token of a console page's forms.
func CSRFToken(tb testing.TB, r Reply) string {
	tb.Helper()
	tok := FormCSRF(HTMLDoc(tb, r))
	if tok == "" {
		tb.Fatalf("no csrf_token on the page: %s", r)
	}
	return tok
}

// FormCSRF returns the CSRF token of a parsed console page's forms, or ""
// when it has none.
func FormCSRF(doc *goquery.Document) string {
	tok, _ := doc.Find(`input[name="csrf_token"]`).First().Attr("value")
	return tok
}
