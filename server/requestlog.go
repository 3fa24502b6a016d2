package server

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"regexp"
	"time"

	"github.com/gin-gonic/gin"

	"petstore/api"
	"petstore/httpcode"
	"petstore/web"
)

// requestIDHeader is X-Request-ID in its canonical form, so that reading
// and setting it on every request allocates no canonical copy of the name.
const requestIDHeader = "X-Request-Id"

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// requestLog gives every request an id (X-Request-ID, accepted when sane,
// else generated; echoed back) and logs one line when it ends, at INFO,
// with the status api.Status gives: 499 for a client that hung up before
// its answer, with committed=true or false when the request was a create
// (whether its pet was written; a create that committed is replayed to a
// retry with its Idempotency-Key).
func requestLog(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		id := ""
		if v := c.Request.Header[requestIDHeader]; len(v) > 0 {
			id = v[0]
		}
		if !requestIDPattern.MatchString(id) {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Writer.Header()[requestIDHeader] = []string{id}
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = unmatchedRoute
		}
		// Typed attributes in a fixed array: the line costs no boxing.
		status := api.Status(c)
		attrs := [9]slog.Attr{slog.String("request_id", id), slog.String("method", c.Request.Method), slog.String("route", route),
			slog.Int("status", status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("client", c.ClientIP())}
		n := 6
		if status == httpcode.StatusClientClosedRequest {
			if committed, known := api.Committed(c); known {
				attrs[n] = slog.Bool("committed", committed)
				n++
			}
		}
		if k := api.KeyName(c); k != "" {
			attrs[n] = slog.String("key", k)
			n++
		}
		if u := web.StaffName(c); u != "" {
			attrs[n] = slog.String("staff", u)
			n++
		}
		log.LogAttrs(c.Request.Context(), slog.LevelInfo, "request", attrs[:n]...)
	}
}
