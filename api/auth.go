package api

import (
	"errors"
	"net/netip"
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
// missing, malformed, unknown, revoked or expired, and with 403 when it
// lacks a scope of need; then it applies the key's rate limit (429 when
// exceeded), which a refused request does not spend. A client address that
// keeps failing is answered 429 before any of that (failureLimiter).
func (a *API) authorize(c *gin.Context, need models.Scopes) {
	key, ok := bearerToken(c.Request.Header.Values("Authorization"))
	keyHash := models.HashKey(key)
	var addr netip.Prefix
	if a.failures != nil {
		addr = clientKey(c.ClientIP())
		if wait, blocked := a.failures.blocked(addr, keyHash); blocked {
			a.tooManyFailures(c, wait)
			return
		}
	}
	if !ok {
		a.authFailed(addr, keyHash)
		writeError(c, a.log, models.ErrUnauthorized)
		return
	}
	k, err := a.store.AuthenticateHashed(c.Request.Context(), key, keyHash)
	if err != nil {
		if models.ErrorCode(err) == models.CodeUnauthorized {
			a.authFailed(addr, keyHash)
		}
		writeError(c, a.log, err)
		return
	}
	if a.failures != nil {
		a.failures.succeed(keyHash)
	}
	c.Set(keyContext, k)
	if err := k.Require(need); err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="petstore", error="insufficient_scope", scope="`+need.String()+`"`)
		a.rateLimitHeaders(c, k)
		writeError(c, a.log, err)
		return
	}
	if !a.rateLimit(c, k) {
		return
	}
	c.Next()
}

// bearerChallenge is the WWW-Authenticate value of a 401 refusing err
// (RFC 6750 section 3): an expired key is an invalid_token, described by
// its message (whose characters RFC 6750 allows: no quote, no backslash);
// any other refusal carries no error code, as today.
func bearerChallenge(err error, message string) string {
	if errors.Is(err, models.ErrKeyExpired) {
		return `Bearer realm="petstore", error="invalid_token", error_description="` + message + `"`
	}
	return `Bearer realm="petstore"`
}

// authFailed counts a failed authentication against the client address.
func (a *API) authFailed(addr netip.Prefix, keyHash string) {
	if a.failures != nil {
		a.failures.fail(addr, keyHash)
	}
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
