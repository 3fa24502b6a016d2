package api_test

import (
	"context"
	"net/http"
	"testing"

	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// discardWriter is the cheapest http.ResponseWriter: it keeps the header
// map (cleared per request) and drops the body, so that a benchmark
// measures the handlers, not a recorder's buffers.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }

// BenchmarkServeListPets serves GET /v1/pets?limit=20 in process through
// the whole HTTP surface (server.New: request log, recovery, bearer key,
// rate limit, the handler) over SQLite with 100 pets, with the per-key rate
// limit off and on (a million a second with bursts of a million, far
// above the load, as the load benchmark runs it).
// Its allocs/op and ns/op are the per-request cost of the API's own code
// on the read path.
//
//	go test -run '^$' -bench ServeListPets -benchmem ./api
func BenchmarkServeListPets(b *testing.B) {
	for _, tc := range []struct {
		name  string
		rps   float64
		burst int
	}{{"rate-limit-off", 0, 0}, {"rate-limit-on", 1e6, 1e6}} {
		b.Run(tc.name, func(b *testing.B) {
			s := modelstest.Open(b, models.DriverSQLite)
			ctx := context.Background()
			for i := range 100 {
				if _, err := s.CreatePet(ctx, models.NewPet{Name: "Rex", CategoryID: int64(i%5 + 1), Status: models.StatusAvailable}, "bench"); err != nil {
					b.Fatal(err)
				}
			}
			_, key, err := s.CreateAPIKey(ctx, "bench", "bench")
			if err != nil {
				b.Fatal(err)
			}
			h := newEngine(b, server.Deps{Store: s, Config: config.Config{RateLimitRPS: tc.rps, RateLimitBurst: tc.burst}})
			req, err := http.NewRequest("GET", "/v1/pets?limit=20", nil)
			if err != nil {
				b.Fatal(err)
			}
			req.RemoteAddr = "127.0.0.1:1234"
			req.Header.Set("Authorization", "Bearer "+key)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				w.status = 0
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}
