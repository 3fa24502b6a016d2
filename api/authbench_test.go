package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// benchRequest serves req over and over through the whole engine (request
// log, metrics, recovery, routes) on SQLite, with a valid key, and reports
// allocations: the authentication path's cost per request.
func benchRequest(b *testing.B, method, path string, status int) {
	s := modelstest.Open(b, models.DriverSQLite)
	ctx := context.Background()
	if _, err := s.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: 1, Status: models.StatusAvailable}, "bench"); err != nil {
		b.Fatal(err)
	}
	_, key, err := s.CreateAPIKey(ctx, "bench partner", "bench")
	if err != nil {
		b.Fatal(err)
	}
	h := newEngine(b, server.Deps{Store: s, Metrics: server.NewMetrics(nil)})
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != status {
			b.Fatalf("%s %s: status %d, want %d: %s", method, path, w.Code, status, w.Body)
		}
	}
}

// BenchmarkAuthenticatedNotFound is authentication and little else: an
// unknown path under /v1 answered 404 after the key is checked.
func BenchmarkAuthenticatedNotFound(b *testing.B) {
	benchRequest(b, "GET", "/v1/no-such-thing", http.StatusNotFound)
}

// BenchmarkGetPet is the deprecated fetch of one pet, counted per key.
func BenchmarkGetPet(b *testing.B) { benchRequest(b, "GET", "/v1/pets/1", http.StatusOK) }

// BenchmarkListOnePet is a one-pet page.
func BenchmarkListOnePet(b *testing.B) { benchRequest(b, "GET", "/v1/pets?limit=1", http.StatusOK) }
