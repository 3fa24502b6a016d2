package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/models"
	"petstore/models/modelstest"
	"petstore/webhooks"
)

// The receiver of docs/partners.md, run: it accepts the dispatcher's
// deliveries, refuses a forged one, and queues each event once.
func TestReceiverExample(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		var (
			mu     sync.Mutex
			ids    = map[string]bool{}
			queued [][]byte
		)
		seen := func(id string) bool {
			mu.Lock()
			defer mu.Unlock()
			was := ids[id]
			ids[id] = true
			return was
		}
		queue := func(body []byte) {
			mu.Lock()
			defer mu.Unlock()
			queued = append(queued, body)
		}
		var secret string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Handler(secret, seen, queue).ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		_, secret = create(t, s, srv.URL)
		start(t, s, webhooks.Options{})
		addPet(t, s, "Rex")
		waitFor(t, "the queued event", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(queued) == 1 && strings.Contains(string(queued[0]), `"name":"Rex"`)
		})
		forged, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"id":"99"}`))
		forged.Header.Set("Petstore-Signature", webhooks.Signature(time.Now(), []byte(`{"id":"99"}`), "whsec_guess"))
		res, err := http.DefaultClient.Do(forged)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a forged delivery got %d, want 401", res.StatusCode)
		}
	})
}

// Handler verifies each delivery, records it once by its event id, and
// answers at once; seen and queue are yours (a database table, a channel).
func Handler(secret string, seen func(id string) bool, queue func(body []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := verify(r.Header.Get("Petstore-Signature"), body, secret, 5*time.Minute); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if !seen(r.Header.Get("Petstore-Event-Id")) {
			queue(body)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// verify checks a Petstore-Signature header: t=<unix seconds>,v1=<hex>[,v1=<hex>].
func verify(header string, body []byte, secret string, tolerance time.Duration) error {
	var t string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			t = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	ts, err := strconv.ParseInt(t, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("malformed signature header")
	}
	if d := time.Since(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("timestamp outside the tolerance")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(t + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no signature matches")
}
