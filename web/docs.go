package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"
	"github.com/yuin/goldmark"

	"petstore/static"
	"petstore/templates"
)

// DocsPath is where the interactive API reference is served: public, like
// the OpenAPI document it renders.
const DocsPath = "/docs"

// docsSpecURL is the API's OpenAPI document (api.Prefix + "/openapi.json";
// web does not import api), relative to DocsPath.
const docsSpecURL = "v1/openapi.json"

// newDocsView is the /docs page's data, with the title, version and
// introduction of the OpenAPI document spec. Every URL is relative to the
// page (the static paths lose their leading slash), so the page also works
// when a proxy serves the site under a path prefix.
func newDocsView(spec []byte) templates.DocsView {
	rel := func(name string) string { return strings.TrimPrefix(static.Path(name), "/") }
	v := templates.DocsView{
		SpecURL:    docsSpecURL,
		SwaggerCSS: rel("vendor/swagger-ui-5.35.0/swagger-ui.css"),
		SwaggerJS:  rel("vendor/swagger-ui-5.35.0/swagger-ui-bundle.js"),
		DocsCSS:    rel("css/docs.css"),
		DocsJS:     rel("js/docs.js"),
		Favicon:    rel("img/favicon.svg"),
		ConsoleURL: strings.TrimPrefix(Prefix, "/"),
	}
	var doc struct {
		Info struct{ Title, Version, Description string } `json:"info"`
	}
	if len(spec) == 0 || json.Unmarshal(spec, &doc) != nil {
		return v // Swagger UI shows the info, later
	}
	v.Title, v.Version = doc.Info.Title, doc.Info.Version
	if doc.Info.Description != "" {
		var b bytes.Buffer
		// CommonMark as Swagger UI renders it; goldmark escapes any raw
		// HTML in it (html.WithUnsafe is off).
		if err := goldmark.Convert([]byte(doc.Info.Description), &b); err == nil {
			html := b.String()
			v.Description = templ.Raw(`<div class="docs-description">` + html + `</div>`)
		}
	}
	return v
}

// showDocs answers GET /docs with the API reference, under the console's
// Content-Security-Policy; it needs no session.
func (ui *Web) showDocs(c *gin.Context) {
	setPageHeaders(c)
	ui.render(c, http.StatusOK, templates.DocsPage(ui.docs))
}
