package templates

import "petstore/static"

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
}
