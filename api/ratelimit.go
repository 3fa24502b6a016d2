package api

import (
	"fmt"
	"math"
	"net/http"
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
	// policy is the RateLimit-Policy header's value, built once: every
	// answer to an authenticated request carries it.
	policy []string
	// oneSecond holds the RateLimit values with t=1, by r (up to
	// maxSharedValues). At a rate of one a second or more the next whole
	// token is never more than a second away, so nearly every answer takes
	// its value from here instead of formatting and allocating one.
	oneSecond [][]string

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
	l := &limiter{limit: limit, burst: burst, now: now, buckets: map[int64]*bucket{},
		policy: []string{rateLimitPolicy(limit, burst)}}
	if limit >= 1 {
		// After a request takes its token at most burst-1 are left.
		l.oneSecond = make([][]string, min(burst, maxSharedValues))
		for r := range l.oneSecond {
			l.oneSecond[r] = []string{rateLimitValue(int64(r), 1)}
		}
	}
	return l
}

// maxSharedValues bounds the RateLimit values a limiter builds ahead (about
// 40 bytes each).
const maxSharedValues = 1024

// setLeft states left tokens in RateLimit (and the policy): r whole
// requests now, t seconds until the next whole token.
func (l *limiter) setLeft(h http.Header, left float64) {
	whole := math.Floor(left)
	l.setHeaders(h, int64(whole), wholeSeconds((whole+1-left)/float64(l.limit)))
}

// allow takes a token from key's bucket and returns how many are left (a
// fraction of one may have refilled). When none is left it takes nothing
// and returns how long until one will be there.
func (l *limiter) allow(key int64) (left float64, wait time.Duration, ok bool) {
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
		return 0, time.Second, false
	}
	if wait = r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return 0, wait, false
	}
	return b.tokens.TokensAt(now), 0, true
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
func retryAfter(wait time.Duration) int { return wholeSeconds(wait.Seconds()) }

// wholeSeconds rounds s seconds up to whole ones, at least 1 and at most
// MaxInt32 (68 years).
func wholeSeconds(s float64) int {
	s = math.Ceil(s)
	switch {
	case s < 1:
		return 1
	case s > math.MaxInt32:
		return math.MaxInt32
	}
	return int(s)
}

// The rate-limit header fields of the IETF httpapi draft "RateLimit header
// fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-11), both RFC 9651
// structured-field lists of one item, the policy "default":
//
//	RateLimit-Policy: "default";q=<burst>;w=<seconds the burst takes to refill>
//	RateLimit: "default";r=<whole tokens left>;t=<seconds until the next whole token>
//
// The token bucket refills at limit tokens a second up to burst, so q=burst
// and w=ceil(burst/limit) state it exactly. t is the time until r grows by
// one: true to both the draft's -10 reading ("until more quota") and -11's
// ("no more than r within t"), and on a 429 it equals Retry-After. The
// names are in Go's canonical form, as Header.Get looks them up.
const (
	headerPolicy    = "Ratelimit-Policy"
	headerRateLimit = "Ratelimit"
)

// rateLimitPolicy is the RateLimit-Policy value of a bucket of burst
// tokens refilled at limit a second.
func rateLimitPolicy(limit rate.Limit, burst int) string {
	b := append([]byte(`"default";q=`), strconv.Itoa(burst)...)
	b = append(b, ";w="...)
	return string(strconv.AppendInt(b, int64(wholeSeconds(float64(burst)/float64(limit))), 10))
}

// rateLimitValue is the RateLimit value for r whole tokens left, the next
// in t seconds.
func rateLimitValue(r int64, t int) string {
	var buf [48]byte
	b := append(buf[:0], `"default";r=`...)
	b = strconv.AppendInt(b, r, 10)
	b = append(b, ";t="...)
	return string(strconv.AppendInt(b, int64(t), 10))
}

// setHeaders sets RateLimit-Policy and RateLimit on an answer: r whole
// tokens remain, and the next comes in t seconds. It runs on every
// authenticated request, so it uses the values built ahead when it can
// and allocates only when it cannot. Sharing them is safe: http.Header
// values are replaced, never written in place.
func (l *limiter) setHeaders(h http.Header, r int64, t int) {
	h[headerPolicy] = l.policy
	if t == 1 && r < int64(len(l.oneSecond)) {
		h[headerRateLimit] = l.oneSecond[r]
		return
	}
	h[headerRateLimit] = []string{rateLimitValue(r, t)}
}

// seconds says n seconds in words: "1 second", "5 seconds".
func seconds(n int) string {
	if n == 1 {
		return "1 second"
	}
	return strconv.Itoa(n) + " seconds"
}

// rateLimit lets the request of key k go on, or answers 429 with
// Retry-After and returns false. Either way the answer carries the
// RateLimit-Policy and RateLimit headers, whatever its status. It runs
// after authentication, so a request without a valid key gets its 401
// first, without them: no key, no quota to state; and before the scope
// check, so a key refused for scope spends its quota like any other.
func (a *API) rateLimit(c *gin.Context, k models.APIKey) bool {
	l := a.limiter
	if l == nil {
		return true
	}
	left, wait, ok := l.allow(k.ID)
	if ok {
		l.setLeft(c.Writer.Header(), left)
		return true
	}
	a.metrics.countRateLimited()
	secs := retryAfter(wait)
	l.setHeaders(c.Writer.Header(), 0, secs)
	c.Header("Retry-After", strconv.Itoa(secs))
	writeError(c, a.log, &models.Error{Code: models.CodeRateLimited, Message: fmt.Sprintf(
		"Too many requests with this API key: the limit is %g per second with bursts of %d. Retry in %s.",
		float64(a.limiter.limit), a.limiter.burst, seconds(secs))})
	return false
}
