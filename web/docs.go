package web

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"petstore/static"
	"petstore/templates"
)

// DocsPath is where the interactive API reference is served: public, like
// the OpenAPI document it renders.
const DocsPath = "/docs"

// docsSpecURL is the API's OpenAPI document (api.Prefix + "/openapi.json";
// web does not import api), relative to DocsPath.
const docsSpecURL = "v1/openapi.json"

// newDocsView is the /docs page's data. Every URL is relative to the page
// (the static paths lose their leading slash), so the page also works when
// a proxy serves the site under a path prefix.
func newDocsView() templates.DocsView {
	rel := func(name string) string { return strings.TrimPrefix(static.Path(name), "/") }
	return templates.DocsView{
		SpecURL:    docsSpecURL,
		SwaggerCSS: rel("vendor/swagger-ui-5.35.0/swagger-ui.css"),
		SwaggerJS:  rel("vendor/swagger-ui-5.35.0/swagger-ui-bundle.js"),
		DocsCSS:    rel("css/docs.css"),
		DocsJS:     rel("js/docs.js"),
		Favicon:    rel("img/favicon.svg"),
		ConsoleURL: strings.TrimPrefix(Prefix, "/"),
	}
}

// showDocs answers GET /docs with the API reference, under the console's
// Content-Security-Policy; it needs no session.
func (ui *Web) showDocs(c *gin.Context) {
	setPageHeaders(c)
	ui.render(c, http.StatusOK, templates.DocsPage(ui.docs))
}
