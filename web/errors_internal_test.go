package web

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
	"petstore/models/modelstest"
)

// Every error code gets its status from the one table the API uses too, so
// that the codes only HTTP knows (gone, payload_too_large,
// unsupported_media_type) are never logged 500s; only 5xx are logged.
func TestFailStatuses(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	ui, err := New(context.Background(), modelstest.Open(t, models.DriverSQLite),
		Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		err     error
		status  int
		heading string
		message string
	}{
		{&models.Error{Code: models.CodeInvalidRequest, Message: "Bad."}, http.StatusBadRequest, "Bad Request", "Bad."},
		{&models.Error{Code: models.CodeUnauthorized, Message: "Who?"}, http.StatusUnauthorized, "Unauthorized", "Who?"},
		{&models.Error{Code: httpcode.Forbidden, Message: "No."}, http.StatusForbidden, "Forbidden", "No."},
		{&models.Error{Code: models.CodeNotFound, Message: "No pet has id 5."}, http.StatusNotFound, "Not Found", "No pet has id 5."},
		{&models.Error{Code: httpcode.MethodNotAllowed, Message: "Not so."}, http.StatusMethodNotAllowed, "Method Not Allowed", "Not so."},
		{&models.Error{Code: models.CodeConflict, Message: "Taken."}, http.StatusConflict, "Conflict", "Taken."},
		{&models.Error{Code: httpcode.Gone, Message: "Gone."}, http.StatusGone, "Gone", "Gone."},
		{&models.Error{Code: httpcode.PayloadTooLarge, Message: "Big."}, http.StatusRequestEntityTooLarge, "Request Entity Too Large", "Big."},
		{&models.Error{Code: httpcode.UnsupportedMediaType, Message: "Type."}, http.StatusUnsupportedMediaType, "Unsupported Media Type", "Type."},
		{&models.Error{Code: models.CodeRateLimited, Message: "Slow down."}, http.StatusTooManyRequests, "Too Many Requests", "Slow down."},
		{refuse(models.CodeNotFound, "Page not found", "Nothing here."), http.StatusNotFound, "Page not found", "Nothing here."},
		{&models.Error{Code: models.CodeUnavailable, Message: "Down."}, http.StatusServiceUnavailable,
			"The store's database is not answering", "Nothing was lost. Please try again in a moment."},
		{&models.Error{Code: models.CodeInternal, Message: "secret detail"}, http.StatusInternalServerError,
			"Something went wrong", "Something went wrong on our side."},
		{errors.New("a bug"), http.StatusInternalServerError, "Something went wrong", "Something went wrong on our side."},
		{&models.Error{Code: "no_such_code", Message: "secret"}, http.StatusInternalServerError, "Something went wrong", "Something went wrong on our side."},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			logs.Reset()
			r := gin.New()
			r.GET("/admin/x", func(c *gin.Context) { ui.fail(c, tt.err) })
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest("GET", "/admin/x", nil))
			if rec.Code != tt.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				t.Fatalf("status %d, %s; want %d, HTML", rec.Code, rec.Header().Get("Content-Type"), tt.status)
			}
			doc, err := goquery.NewDocumentFromReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			h1, msg := doc.Find("h1").Text(), doc.Find(".error-page p").First().Text()
			if h1 != tt.heading || !strings.HasPrefix(msg, tt.message) || doc.Find("title").Text() != tt.heading+" · Petstore admin" {
				t.Errorf("heading %q, message %q; want %q, %q", h1, msg, tt.heading, tt.message)
			}
			if logged := strings.Contains(logs.String(), "console request failed"); logged != (tt.status >= 500) {
				t.Errorf("logged %v for a %d:\n%s", logged, tt.status, logs.String())
			}
		})
	}
}
