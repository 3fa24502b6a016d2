package templates

import (
	"github.com/a-h/templ"

	"petstore/static"
)

// siteIcon is the URL of the site's icon, which every console page's head
// links (the API reference links it relative to its page).
var siteIcon = static.Path("img/favicon.svg")

// DocsView is the API reference page: the URLs of what it loads. They are
// relative to the page, so that it also works behind a proxy that serves
// the site under a path prefix.
type DocsView struct {
	// SpecURL is the OpenAPI document the reference is rendered from.
	SpecURL string
	// SwaggerCSS and SwaggerJS are the vendored Swagger UI; DocsCSS and
	// DocsJS are this page's own style and the script that starts it.
	SwaggerCSS, SwaggerJS, DocsCSS, DocsJS string
	// Favicon is the site's icon; ConsoleURL the staff console.
	Favicon, ConsoleURL string
	// Title, Version and Description are the document's info, shown by
	// the page itself rather than by Swagger UI: they are there at the
	// first paint, not seconds later once its 1.7 MB of script has run.
	// Description is the document's Markdown as HTML (web renders it,
	// escaping any HTML in it).
	Title, Version string
	Description    templ.Component
}
