package api

import (
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/gin-gonic/gin"
)

// Conditional reads (RFC 9110 sections 8.8.3 and 13.1.2): a pet and a page
// of pets carry an ETag, a digest of the very body answered, so it changes
// whenever any field of a returned pet changes, whoever changed it (the
// console included), and instances agree on it. A GET whose If-None-Match
// names it is answered 304 with no body.

// etagOf is the strong entity tag of body: its 64-bit xxHash in 16 hex
// digits, the same on every instance. No secret is at stake, so a fast
// non-cryptographic hash does: a cryptographic digest would be a measurable
// part of serving a page (docs/performance.md).
func etagOf(body []byte) string {
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(body))
	var b [18]byte
	b[0], b[17] = '"', '"'
	hex.Encode(b[1:17], sum[:])
	return string(b[:])
}

// conditional sets the ETag of a GET's body and reports whether the
// request's If-None-Match already names it, in which case it has answered
// 304. Answers that carry an ETag may be kept by the client (private,
// revalidated on every use) instead of no-store.
func conditional(c *gin.Context, body []byte) bool {
	tag := etagOf(body)
	h := c.Writer.Header()
	h["Etag"] = []string{tag} // canonical keys set directly: Set would allocate a canonical "ETag"
	h["Cache-Control"] = cacheRevalidate
	if !noneMatch(c.Request.Header.Values("If-None-Match"), tag) {
		return false
	}
	c.Status(http.StatusNotModified)
	c.Writer.WriteHeaderNow()
	return true
}

// cacheRevalidate is the Cache-Control of an answer with an ETag, shared
// (http.Header values are replaced, never written in place).
var cacheRevalidate = []string{"private, no-cache"}

// noneMatch reports whether If-None-Match header values name tag, by the
// weak comparison GET uses (a W/ prefix is ignored), or are "*". Values
// that are not entity-tags match nothing.
func noneMatch(values []string, tag string) bool {
	for _, v := range values {
		if strings.TrimSpace(v) == "*" {
			return true
		}
		for v != "" {
			v = strings.TrimLeft(v, " \t,")
			v = strings.TrimPrefix(v, "W/")
			if !strings.HasPrefix(v, `"`) {
				break // not an entity-tag: nothing after it is read
			}
			end := strings.IndexByte(v[1:], '"')
			if end < 0 {
				break
			}
			if v[:end+2] == tag {
				return true
			}
			v = v[end+2:]
		}
	}
	return false
}
