package api

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"petstore/models"
)

// Eviction of idle buckets. A bucket is dropped once it has been unused for
// bucketIdle and has refilled completely: a new bucket starts full, so the
// key is then in exactly the state it would be in had it been kept, and
// eviction never loosens a limit. The sweep is amortised over requests (at
// most one pass over the map per sweepEvery) so that no goroutine is needed.
const (
	bucketIdle = 5 * time.Minute
	sweepEvery = time.Minute
)

// limiter is a token bucket per API key (by key id). It lives in this
// process's memory: with several instances behind a load balancer each
// instance enforces the limit on its own, so a key may get up to N times the
// rate across N instances.
//
// The map holds only keys that authenticated, so its size is bounded by the
// keys staff issued, and it shrinks to the keys used in the last few
// minutes.
type limiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[int64]*bucket
	nextSweep time.Time
}

type bucket struct {
	tokens   *rate.Limiter
	lastUsed time.Time
}

// newLimiter returns a limiter of limit requests per second per key with
// bursts of burst (0 or less: two seconds' worth, at least 1), or nil (no
// limit) when limit is 0, negative or rate.Inf. now is the clock.
func newLimiter(limit rate.Limit, burst int, now func() time.Time) *limiter {
	if limit <= 0 || limit == rate.Inf {
		return nil
	}
	if burst < 1 {
		burst = max(1, int(math.Min(math.Ceil(2*float64(limit)), math.MaxInt32)))
	}
	return &limiter{limit: limit, burst: burst, now: now, buckets: map[int64]*bucket{}}
}

// allow takes a token from key's bucket. When none is left it takes
// nothing and returns how long until one will be there.
func (l *limiter) allow(key int64) (wait time.Duration, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !now.Before(l.nextSweep) {
		l.sweep(now)
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.lastUsed = now
	// Reserve then cancel, under l.mu so that no other reservation of this
	// bucket comes in between: a refused request gives its token back whole
	// and so does not push the key's next chance further away.
	r := b.tokens.ReserveN(now, 1)
	if !r.OK() {
		return time.Second, false
	}
	if wait = r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return wait, false
	}
	return 0, true
}

// sweep drops the buckets that are idle and full. The caller holds l.mu.
func (l *limiter) sweep(now time.Time) {
	for key, b := range l.buckets {
		if now.Sub(b.lastUsed) >= bucketIdle && b.tokens.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, key)
		}
	}
	l.nextSweep = now.Add(sweepEvery)
}

// size returns the number of buckets held.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// retryAfter turns a wait into the whole seconds of a Retry-After header,
// rounded up and at least 1 (a client that waits that long will pass).
func retryAfter(wait time.Duration) int {
	s := math.Ceil(wait.Seconds())
	switch {
	case s < 1:
		return 1
	case s > math.MaxInt32:
		return math.MaxInt32
	}
	return int(s)
}

// seconds says n seconds in words: "1 second", "5 seconds".
func seconds(n int) string {
	if n == 1 {
		return "1 second"
	}
	return strconv.Itoa(n) + " seconds"
}

// rateLimit lets the request of key k go on, or answers 429 with
// Retry-After and returns false. It runs after authentication, so a
// request without a valid key gets its 401 first.
func (a *API) rateLimit(c *gin.Context, k models.APIKey) bool {
	if a.limiter == nil {
		return true
	}
	wait, ok := a.limiter.allow(k.ID)
	if ok {
		return true
	}
	a.metrics.countRateLimited()
	secs := retryAfter(wait)
	c.Header("Retry-After", strconv.Itoa(secs))
	writeError(c, a.log, &models.Error{Code: models.CodeRateLimited, Message: fmt.Sprintf(
		"Too many requests with this API key: the limit is %g per second with bursts of %d. Retry in %s.",
		float64(a.limiter.limit), a.limiter.burst, seconds(secs))})
	return false
}
