package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
)

const internalMessage = "Something went wrong on our side. Please try again; if it keeps happening, contact the store."

// Error is the body of every error response.
type Error struct {
	Code    models.Code `json:"code"`
	Message string      `json:"message"`
	Status  int         `json:"status"`
	// Details names each bad field of a 400.
	Details []models.FieldError `json:"details,omitempty"`
}

// writeError answers with the Error body for err and aborts the chain: the
// status from httpcode's table, which the console's error pages share.
// Every error response of the API goes through it. A server error is
// logged at ERROR with its reason (httpcode.Reason), which the metrics
// count it by; errors that are not *models.Error are shown generically. A
// request its client gave up (models.CodeCanceled, 499) is no error of the
// service's: the request log's line says it.
func writeError(c *gin.Context, log *slog.Logger, err error) {
	var e *models.Error
	if !errors.As(err, &e) {
		e = &models.Error{Code: models.CodeInternal, Err: err}
	}
	status := httpcode.Status(e.Code)
	body := Error{Code: e.Code, Message: e.Message, Status: status, Details: e.Fields}
	if status >= 500 {
		reason := httpcode.Reason(err)
		c.Set(httpcode.ReasonKey, reason)
		log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "status", status, "reason", reason, "error", err)
		if e.Code == models.CodeInternal || e.Message == "" {
			body = Error{Code: models.CodeInternal, Message: internalMessage, Status: status}
		}
	}
	if status == http.StatusUnauthorized {
		c.Header("WWW-Authenticate", bearerChallenge(err, body.Message))
	}
	writeJSON(c, status, body)
	c.Abort()
}

// writeJSON writes v as JSON. HTML characters are not escaped: the body is
// served as application/json with nosniff, and names round-trip as sent.
func writeJSON(c *gin.Context, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"code":"internal","message":"` + internalMessage + `","status":500}` + "\n")
	}
	c.Data(status, "application/json", buf.Bytes())
}
