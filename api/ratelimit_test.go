package api

// Unit tests of the token buckets on a fake clock. The rate limit over real
// HTTP, with both databases, is tested in metrics_test.go (TestRateLimit),
// next to the refusal counter it feeds.

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"petstore/models"
)

// fakeClock is a clock that only moves when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func TestNewLimiter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		limit     rate.Limit
		burst     int
		off       bool
		wantLimit rate.Limit
		wantBurst int
	}{
		{"set values", 5, 7, false, 5, 7},
		{"zero burst is two seconds' worth", 50, 0, false, 50, 100},
		{"negative burst is two seconds' worth", 10, -1, false, 10, 20},
		{"slow rate gets a burst of at least 1", 0.1, 0, false, 0.1, 1},
		{"fractional rate", 0.5, 1, false, 0.5, 1},
		{"zero rate turns it off", 0, 100, true, 0, 0},
		{"rate.Inf turns it off", rate.Inf, 0, true, 0, 0},
		{"negative rate turns it off", -1, 10, true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(tt.limit, tt.burst, time.Now)
			if tt.off {
				if l != nil {
					t.Fatalf("limiter = %+v, want none", l)
				}
				return
			}
			if l == nil || l.limit != tt.wantLimit || l.burst != tt.wantBurst {
				t.Fatalf("limiter = %+v, want limit %v burst %d", l, tt.wantLimit, tt.wantBurst)
			}
		})
	}
}

func TestLimiterPerKey(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(5, 5, clock.now)
	for i := range 5 {
		if _, _, ok := l.allow(1); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	_, wait, ok := l.allow(1)
	if ok {
		t.Fatal("6th request in the same instant allowed")
	}
	if wait != 200*time.Millisecond {
		t.Errorf("wait = %v, want 200ms (one token at 5/s)", wait)
	}
	if _, _, ok := l.allow(2); !ok {
		t.Error("another key was refused: buckets are not per key")
	}
	clock.advance(199 * time.Millisecond)
	if _, _, ok := l.allow(1); ok {
		t.Error("allowed before the announced wait was over")
	}
	clock.advance(time.Millisecond)
	if _, _, ok := l.allow(1); !ok {
		t.Error("refused after the announced wait")
	}
}

// A refused request takes no token: hammering a limited key does not push
// its next chance further away.
func TestLimiterRefusalTakesNothing(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(5, 5, clock.now)
	for range 5 {
		l.allow(1)
	}
	for range 1000 {
		if _, wait, ok := l.allow(1); ok || wait != 200*time.Millisecond {
			t.Fatalf("allow = %v, %v; want refused with 200ms", wait, ok)
		}
	}
	clock.advance(200 * time.Millisecond)
	if _, _, ok := l.allow(1); !ok {
		t.Fatal("refused requests consumed tokens")
	}
	if _, _, ok := l.allow(1); ok {
		t.Fatal("more than the refilled token was given")
	}
}

func TestLimiterEvictsIdleBuckets(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(50, 100, clock.now)
	for key := range int64(10000) {
		l.allow(key)
	}
	if n := l.size(); n != 10000 {
		t.Fatalf("size = %d, want 10000", n)
	}
	// Still in use within the idle window: kept.
	clock.advance(bucketIdle - time.Second)
	l.allow(1)
	if n := l.size(); n != 10000 {
		t.Fatalf("size = %d within the idle window, want 10000", n)
	}
	// Past it (and past the next sweep): only key 1, used a moment ago, is left.
	clock.advance(sweepEvery + time.Second)
	l.allow(1)
	if n := l.size(); n != 1 {
		t.Fatalf("size = %d after the idle window, want 1", n)
	}
}

// Eviction never loosens a limit: a bucket that has not refilled is kept
// however long it has been idle.
func TestLimiterKeepsBucketsThatHaveNotRefilled(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(rate.Every(time.Hour), 1, clock.now) // refills in an hour
	if _, _, ok := l.allow(1); !ok {
		t.Fatal("first request refused")
	}
	clock.advance(2 * bucketIdle)
	l.allow(2) // sweeps
	if n := l.size(); n != 2 {
		t.Fatalf("size = %d, want 2: the spent bucket was dropped", n)
	}
	_, wait, ok := l.allow(1)
	if want := time.Hour - 2*bucketIdle; ok || (wait-want).Abs() > time.Millisecond {
		t.Fatalf("allow = %v, %v; want refused for %v", wait, ok, want)
	}
	clock.advance(time.Hour)
	l.allow(2)
	if n := l.size(); n != 1 {
		t.Fatalf("size = %d, want 1 once key 1 refilled and stayed idle", n)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		wait time.Duration
		want int
	}{
		{0, 1},
		{time.Nanosecond, 1},
		{200 * time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Millisecond, 2},
		{2500 * time.Millisecond, 3},
		{time.Hour, 3600},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.wait); got != tt.want {
			t.Errorf("retryAfter(%v) = %d, want %d", tt.wait, got, tt.want)
		}
	}
}

func TestRateLimitPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		limit rate.Limit
		burst int
		want  string
	}{
		{50, 100, `"default";q=100;w=2`}, // the production default
		{1, 5, `"default";q=5;w=5`},
		{3, 0, `"default";q=6;w=2`},      // two seconds' worth
		{0.01, 5, `"default";q=5;w=500`}, // w is the refill of the whole burst
		{7, 10, `"default";q=10;w=2`},    // rounded up: 1.43 s
		{1e9, 0, `"default";q=2000000000;w=2`},
		{rate.Every(time.Hour), 1, `"default";q=1;w=3600`},
		{1e-300, 1, `"default";q=1;w=2147483647`}, // capped, never overflows
	}
	for _, tt := range tests {
		l := newLimiter(tt.limit, tt.burst, time.Now)
		if got := l.policy; len(got) != 1 || got[0] != tt.want {
			t.Errorf("limit %v burst %d: policy %q, want %q", tt.limit, tt.burst, got, tt.want)
		}
	}
}

// TestRateLimitHeaders follows one key's bucket (0.5 a second, bursts of 2)
// on a fake clock: RateLimit counts the whole tokens left and the seconds
// until the next one, and a 429 says r=0 with t equal to Retry-After.
func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	gin.SetMode(gin.ReleaseMode)
	clock := newFakeClock()
	a := &API{limiter: newLimiter(0.5, 2, clock.now), log: slog.New(slog.DiscardHandler)}
	k := models.APIKey{ID: 1}
	steps := []struct {
		advance    time.Duration
		ok         bool
		rateLimit  string
		retryAfter string
	}{
		{0, true, `"default";r=1;t=2`, ""},                      // 1 token left, the 2nd back in 2 s
		{500 * time.Millisecond, true, `"default";r=0;t=2`, ""}, // 0.25 left: a whole one in 1.5 s
		{0, false, `"default";r=0;t=2`, "2"},                    // refused: Retry-After is t
		{1500 * time.Millisecond, true, `"default";r=0;t=2`, ""},
		{4 * time.Second, true, `"default";r=1;t=2`, ""}, // refilled to the burst, not beyond
	}
	for i, st := range steps {
		clock.advance(st.advance)
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		if ok := a.rateLimit(c, k); ok != st.ok {
			t.Fatalf("step %d: allowed %v, want %v", i, ok, st.ok)
		}
		h := w.Header()
		if got := h.Values("RateLimit-Policy"); len(got) != 1 || got[0] != `"default";q=2;w=4` {
			t.Errorf("step %d: RateLimit-Policy %q", i, got)
		}
		if got := h.Values("RateLimit"); len(got) != 1 || got[0] != st.rateLimit {
			t.Errorf("step %d: RateLimit %q, want %q", i, got, st.rateLimit)
		}
		if got := h.Get("Retry-After"); got != st.retryAfter {
			t.Errorf("step %d: Retry-After %q, want %q", i, got, st.retryAfter)
		}
		if !st.ok && w.Code != http.StatusTooManyRequests {
			t.Errorf("step %d: status %d, want 429", i, w.Code)
		}
	}
}

// At a rate of one a second or more the next token is at most a second
// away: t=1, the values built ahead of time.
func TestRateLimitHeadersFastRate(t *testing.T) {
	t.Parallel()
	gin.SetMode(gin.ReleaseMode)
	clock := newFakeClock()
	a := &API{limiter: newLimiter(10, 20, clock.now), log: slog.New(slog.DiscardHandler)}
	for _, want := range []string{`"default";r=19;t=1`, `"default";r=18;t=1`, `"default";r=17;t=1`} {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		if !a.rateLimit(c, models.APIKey{ID: 1}) {
			t.Fatal("refused")
		}
		if got := w.Header().Get("RateLimit"); got != want {
			t.Errorf("RateLimit %q, want %q", got, want)
		}
		if got := w.Header().Get("RateLimit-Policy"); got != `"default";q=20;w=2` {
			t.Errorf("RateLimit-Policy %q", got)
		}
	}
}

// BenchmarkRateLimit is the per-request cost of the rate limit on the
// authenticated path: one key's bucket, far from empty, and the headers it
// sets on the answer; with a burst of 100 (the production default's: its
// RateLimit values are built ahead) and of a million (the load
// benchmark's, formatted per request).
//
//	go test -run '^$' -bench RateLimit -benchmem ./api
func BenchmarkRateLimit(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	for _, burst := range []int{100, 1_000_000} {
		b.Run("burst-"+strconv.Itoa(burst), func(b *testing.B) {
			a := &API{limiter: newLimiter(1e9, burst, time.Now)}
			w := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(w)
			k := models.APIKey{ID: 1}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.Header())
				if !a.rateLimit(c, k) {
					b.Fatal("refused")
				}
			}
		})
	}
}
