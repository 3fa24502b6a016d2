package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// countingWriter is a ResponseWriter that keeps the header map (cleared per
// request) and counts the body's bytes, the bytes on the wire but for the
// headers and chunk framing.
type countingWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *countingWriter) Header() http.Header    { return w.h }
func (w *countingWriter) WriteHeader(status int) { w.status = status }
func (w *countingWriter) Flush()                 {}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(b)
	return len(b), nil
}

// BenchmarkCompression serves a page of 100 pets from the API and the
// console's pets page (as a signed-in admin) in process through the whole
// HTTP surface over SQLite, without Accept-Encoding and with gzip or zstd
// (a browser's "gzip, deflate, br, zstd"), and reports the body's bytes per
// answer (B/answer) beside the time and allocations.
//
//	go test -run '^$' -bench Compression -benchmem ./server
func BenchmarkCompression(b *testing.B) {
	s := modelstest.Open(b, models.DriverSQLite)
	ctx := context.Background()
	for i := range 200 {
		if _, err := s.CreatePet(ctx, models.NewPet{Name: fmt.Sprintf("Luna %d", i), CategoryID: int64(i%5 + 1), Status: models.StatusAvailable}, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	_, key, err := s.CreateAPIKey(ctx, "bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.CreateUserWithRole(ctx, "alice", "correct horse battery", models.RoleAdmin, "bench"); err != nil {
		b.Fatal(err)
	}
	h := testkit.NewHandler(b, server.Deps{Store: s})
	srv := httptest.NewServer(h)
	defer srv.Close()
	cookie := testkit.SignedIn(b, srv.URL, "alice", "correct horse battery").Cookie(b)

	for _, page := range []struct{ name, path, header, value string }{
		{"api-list-100", "/v1/pets?limit=100", "Authorization", "Bearer " + key},
		{"console-pets", "/admin/pets", "Cookie", cookie},
	} {
		for _, enc := range []struct{ name, accept string }{{"identity", ""}, {"gzip", "gzip"}, {"zstd", "gzip, deflate, br, zstd"}} {
			b.Run(page.name+"/"+enc.name, func(b *testing.B) {
				req, err := http.NewRequest("GET", page.path, nil)
				if err != nil {
					b.Fatal(err)
				}
				req.RemoteAddr = "127.0.0.1:1234"
				req.Header.Set(page.header, page.value)
				if enc.accept != "" {
					req.Header.Set("Accept-Encoding", enc.accept)
				}
				w := &countingWriter{h: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					clear(w.h)
					w.status, w.n = 0, 0
					h.ServeHTTP(w, req)
					if w.status != http.StatusOK {
						b.Fatalf("status %d", w.status)
					}
				}
				b.ReportMetric(float64(w.n), "B/answer")
			})
		}
	}
}
