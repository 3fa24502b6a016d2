package api

import (
	_ "embed"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
)

// OpenAPIDocument is the OpenAPI 3 description of this API, written by hand
// and checked against real responses by the handler tests.
//
//go:embed openapi.json
var OpenAPIDocument []byte

// renderOpenAPI returns the document with its server set to the public URL
// when one is configured.
func renderOpenAPI(publicURL string) []byte {
	if publicURL == "" {
		return OpenAPIDocument
	}
	var doc map[string]any
	if err := json.Unmarshal(OpenAPIDocument, &doc); err != nil {
		panic("api: embedded openapi.json is not JSON: " + err.Error())
	}
	doc["servers"] = []map[string]string{{"url": publicURL + Prefix}}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic("api: " + err.Error())
	}
	return out
}

// openAPI serves the document; it needs no credential.
func (a *API) openAPI(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json", a.openapi)
}
