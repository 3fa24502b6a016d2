package server

import (
	"log/slog"
	"net/http"
	"time"
)

// NewHTTPServer returns the http.Server that serve runs around h. Its
// timeouts keep slow or stalled clients from pinning connections: headers
// within 10 s, the whole request within 30 s, the answer within 60 s, idle
// connections closed after 2 min. Request bodies are capped by the handlers
// (1 MiB API, 64 KiB forms). It lives here, beside the handler, so that the
// whole-product tests serve the handler with the very same limits.
func NewHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
