package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
)

// The API is for partners' servers, which keep the API key secret, not for
// web pages: it allows no cross-origin request from a browser (CORS). A
// browser asks first with an OPTIONS preflight, which by the Fetch
// standard carries no credentials, so authenticating it first would answer
// 401 and send the developer after a key that is not the problem. A
// preflight gets instead one answer that says so, the same under every
// /v1 path (it needs no key, so it must not tell which paths exist), and
// no failed authentication is counted against its address. Without
// Access-Control-Allow-Origin the browser then blocks the call, with its
// usual CORS message.

// errCORS refuses a CORS preflight.
var errCORS = &models.Error{Code: httpcode.CORSNotSupported,
	Message: "This API is for servers, not browsers: it allows no cross-origin request from a web page (CORS). Call it from your server, which keeps the API key secret."}

// isPreflight reports whether r is a CORS preflight: an OPTIONS request
// with Origin and Access-Control-Request-Method (the Fetch standard).
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// refusePreflight answers a CORS preflight. Gin has set Allow when the
// path exists; it goes, so the answer is the same for every path.
func (a *API) refusePreflight(c *gin.Context) {
	c.Writer.Header().Del("Allow")
	writeError(c, a.log, errCORS)
}
