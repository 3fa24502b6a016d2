package api

import (
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"petstore/models"
)

// keyContext is where authenticate leaves the caller's API key.
const keyContext = "petstore.apikey"

// require returns the middleware of a route that needs the scopes need:
// authorize, with them.
func (a *API) require(need models.Scopes) gin.HandlerFunc {
	return func(c *gin.Context) { a.authorize(c, need) }
}

// authenticate is authorize for a request that needs no scope (an unknown
// path or method under /v1, answered 404 or 405 once the caller is known).
func (a *API) authenticate(c *gin.Context) { a.authorize(c, 0) }

// authorize checks the bearer API key and aborts with 401 when it is
// missing, malformed, unknown, revoked or expired; then it spends the key's
// rate limit (429 when exceeded) and aborts with 403 when the key lacks a
// scope of need, so a refusal for scope costs a request like any other
// answer. The key is checked whatever its address did before: a client
// address that keeps failing gets 429 instead of 401 (failureLimiter), and
// a valid key from it goes on.
func (a *API) authorize(c *gin.Context, need models.Scopes) {
	key, ok := bearerToken(c.Request.Header.Values("Authorization"))
	if !ok {
		a.authFailed(c, models.ErrUnauthorized)
		return
	}
	k, err := a.store.Authenticate(c.Request.Context(), key)
	if err != nil {
		if models.ErrorCode(err) == models.CodeUnauthorized {
			a.authFailed(c, err)
			return
		}
		writeError(c, a.log, err)
		return
	}
	c.Set(keyContext, k)
	if !a.rateLimit(c, k) {
		return
	}
	if err := k.Require(need); err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="petstore", error="insufficient_scope", scope="`+need.String()+`"`)
		writeError(c, a.log, err)
		return
	}
	c.Next()
}

// bearerChallenge is the WWW-Authenticate value of a 401 refusing err
// (RFC 6750 section 3): an expired key is an invalid_token, described by
// its message (whose characters RFC 6750 allows: no quote, no backslash);
// any other refusal gets the bare challenge, Bearer realm="petstore", with
// no error code (RFC 6750 section 3.1 asks none of a request without
// credentials).
func bearerChallenge(err error, message string) string {
	if errors.Is(err, models.ErrKeyExpired) {
		return `Bearer realm="petstore", error="invalid_token", error_description="` + message + `"`
	}
	return `Bearer realm="petstore"`
}

// authFailed answers a failed authentication: err (a 401), or 429 when
// the client address is over its failure budget. Either way it counts
// against the address.
func (a *API) authFailed(c *gin.Context, err error) {
	if a.failures != nil {
		if wait, throttled := a.failures.fail(clientKey(c.ClientIP())); throttled {
			a.tooManyFailures(c, wait)
			return
		}
	}
	writeError(c, a.log, err)
}

// bearerToken extracts the credential of "Authorization: Bearer <token>"
// (RFC 6750). The scheme word is case-insensitive; exactly one header, one
// scheme and one token are accepted.
func bearerToken(headers []string) (string, bool) {
	if len(headers) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(headers[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	if !isB64Token(token) {
		return "", false
	}
	return token, true
}

// isB64Token reports whether s is an RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return false
		}
	}
	return true
}

// actor names the caller in the audit trail.
func actor(c *gin.Context) string {
	if v, ok := c.Get(keyContext); ok {
		k := v.(models.APIKey)
		return "apikey " + k.Prefix + " (" + k.Name + ")"
	}
	return "anonymous"
}

// KeyName returns the name of the API key that made the request, for request
// logs, or "".
func KeyName(c *gin.Context) string {
	if v, ok := c.Get(keyContext); ok {
		return v.(models.APIKey).Name
	}
	return ""
}
