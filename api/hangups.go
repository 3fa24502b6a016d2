package api

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"

	"petstore/httpcode"
)

// A client that hangs up is not a failure of the service: the request log
// and the metrics record its request as 499 "client closed request"
// (httpcode.StatusClientClosedRequest), at INFO, whatever the handler then
// answered to the closed connection. net/http cancels a request's context
// when its client closes the connection (and only then, while the handler
// runs), so a cancelled context is a hang-up; a deadline of the service's
// own ends a context with DeadlineExceeded instead, which stays a 503
// (httpcode.Reason).

// Keys of the request's gin context.
const (
	hungUpKey    = "petstore.hungUp"
	committedKey = "petstore.committed"
)

// HangUps marks a request whose client hung up before its answer was sent.
// Install it on the engine after the request log and the metrics, which
// then read Status. An answer of 500 or more keeps its status: the server
// failed, whether or not its client waited for the answer.
func HangUps() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Next()
		if c.Writer.Status() < 500 && errors.Is(c.Request.Context().Err(), context.Canceled) {
			c.Set(hungUpKey, true)
		}
	}
}

// Status is the status a request is logged and counted with: 499 when its
// client hung up before the answer (HangUps), else the status answered.
func Status(c *gin.Context) int {
	if c.GetBool(hungUpKey) {
		return httpcode.StatusClientClosedRequest
	}
	return c.Writer.Status()
}

// noteWrite records whether the request's write committed, for the request
// log's line of a request whose client hung up (Committed).
func noteWrite(c *gin.Context, committed bool) { c.Set(committedKey, committed) }

// Committed reports whether the request's write committed, when the
// request wrote or tried to and the outcome is known (known).
func Committed(c *gin.Context) (committed, known bool) {
	v, ok := c.Get(committedKey)
	committed, known = v.(bool)
	return committed, ok && known
}
