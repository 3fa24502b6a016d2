package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// TestSignInBurstLoad measures what a burst of anonymous sign-ins does to
// the API: GET /v1/pets?limit=1 p50 and p95, unloaded and while 64
// attackers each post a wrong password every quarter second (or as soon as
// answered, when slower), each attempt from a new address and for a new
// username (so no limit stops them: only the cap on password hashing
// does), against `petstore serve` at the production bcrypt cost. It
// records figures and asserts no times: figures are compared between
// runs, not against a threshold that a loaded machine would miss.
func TestSignInBurstLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load measurement")
	}
	p := testkit.ServeBinary(t, "serve", testkit.ServeVars(modelstest.URL(t, models.DriverSQLite)))
	partner := testkit.NewAPIClient(p.Base, testkit.BootstrapOf(t, p.Stdout.String()).Key)
	sample := func(n int) []time.Duration {
		took := make([]time.Duration, 0, n)
		for range n {
			r := partner.Get("/v1/pets?limit=1")
			if r.Err != nil || r.Status != http.StatusOK {
				t.Fatalf("GET /v1/pets?limit=1: %s", r)
			}
			took = append(took, r.Took)
		}
		slices.Sort(took)
		return took
	}
	pct := func(d []time.Duration, p float64) time.Duration { return d[int(float64(len(d)-1)*p)] }
	sample(50) // warm up
	idle := sample(300)

	const (
		attackers   = 64
		attackEvery = 250 * time.Millisecond
	)
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		next     atomic.Int64
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	for range attackers {
		attacker := testkit.NewConsole(p.Base)
		attacker.HTTP.Timeout = time.Minute
		tok := testkit.CSRFToken(t, attacker.Get("/admin/login"))
		wg.Go(func() {
			for !stop.Load() {
				due := time.Now().Add(attackEvery)
				n := next.Add(1)
				// A new address each time: 127.1.0.1, 127.1.0.2, ...
				ip := net.IPv4(127, byte(1+n>>16), byte(n>>8), byte(n))
				d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
				attacker.HTTP.Transport = &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}
				r := attacker.Post("/admin/login", url.Values{"csrf_token": {tok}, "username": {fmt.Sprintf("guess%d", n)}, "password": {"not the password at all"}})
				mu.Lock()
				statuses[r.Status]++
				mu.Unlock()
				time.Sleep(time.Until(due))
			}
		})
	}
	time.Sleep(2 * time.Second) // let the burst build up
	start := time.Now()
	loaded := sample(300)
	elapsed := time.Since(start)
	stop.Store(true)
	wg.Wait()

	testkit.FigureDuration(t, "api_idle_p50", pct(idle, 0.5))
	testkit.FigureDuration(t, "api_idle_p95", pct(idle, 0.95))
	testkit.FigureDuration(t, "api_signin_burst_p50", pct(loaded, 0.5))
	testkit.FigureDuration(t, "api_signin_burst_p95", pct(loaded, 0.95))
	for status, n := range statuses {
		testkit.Figure(t, fmt.Sprintf("signin_burst_status_%d_per_s", status), float64(n)/(elapsed+2*time.Second).Seconds(), "1/s")
	}
	for status := range statuses {
		if status == 0 || status >= 500 && status != http.StatusServiceUnavailable {
			t.Errorf("sign-in answers during the burst: %v", statuses)
		}
	}
}
