package api

import (
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"petstore/models"
)

// The production limit of failed authentications per client address (main
// sets it; the zero Options leave it off): a typo or a rotated key gets its
// 401s, a client that keeps failing gets 429 after a burst of 20 failures
// and then 2 failures a second.
const (
	DefaultAuthFailureRate  rate.Limit = 2
	DefaultAuthFailureBurst int        = 20
)

const (
	// maxFailureAddrs caps the addresses tracked at once, so that a client
	// spraying source addresses cannot grow the map without bound. Past it,
	// new addresses are not tracked until the sweep frees room: each of
	// them would only ever have had its first burst anyway.
	maxFailureAddrs = 100_000
	// trustedFor is how long a key that authenticated stays let through
	// from an address that is over its failure budget.
	trustedFor = 10 * time.Minute
)

// failureLimiter is a token bucket of failed authentications per client
// address (IPv6 addresses by their /64, what one host is usually given), in
// this process's memory. Only failures take tokens: a client whose key is
// valid is never slowed by it. When an address has no token left, its
// requests are answered 429 before any database work, except those with a
// key that authenticated on this instance in the last trustedFor (such a
// key still has its own per-key limit), so a partner behind the same
// address as a failing client keeps working.
type failureLimiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	addrs     map[netip.Prefix]*bucket
	trusted   map[string]time.Time // key hash -> last success
	nextSweep time.Time
}

// newFailureLimiter returns a limiter of limit failures per second per
// address with bursts of burst, or nil (no limit) when limit is 0,
// negative or rate.Inf.
func newFailureLimiter(limit rate.Limit, burst int, now func() time.Time) *failureLimiter {
	if limit <= 0 || limit == rate.Inf {
		return nil
	}
	return &failureLimiter{limit: limit, burst: max(burst, 1), now: now,
		addrs: map[netip.Prefix]*bucket{}, trusted: map[string]time.Time{}}
}

// clientKey groups an address as the sign-in limits do: IPv4 alone, IPv6
// by its /64; every unreadable address shares one bucket.
func clientKey(addr string) netip.Prefix { return models.ClientNetwork(addr) }

// blocked reports whether addr has no failure left in its budget and the
// key (by hash) is not one that authenticated recently; wait is how long
// until one failure is allowed again.
func (l *failureLimiter) blocked(addr netip.Prefix, keyHash string) (wait time.Duration, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !now.Before(l.nextSweep) {
		l.sweep(now)
	}
	b := l.addrs[addr]
	if b == nil {
		return 0, false
	}
	tokens := b.tokens.TokensAt(now)
	if tokens >= 1 {
		return 0, false
	}
	if at, ok := l.trusted[keyHash]; ok && now.Sub(at) < trustedFor {
		return 0, false
	}
	return time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second)), true
}

// fail takes one token from addr's bucket, and stops trusting the key.
func (l *failureLimiter) fail(addr netip.Prefix, keyHash string) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.trusted, keyHash)
	b := l.addrs[addr]
	if b == nil {
		if len(l.addrs) >= maxFailureAddrs {
			// At most one sweep per sweepEvery, here too: a sweep per
			// request of a spraying client would be the attack.
			if !now.Before(l.nextSweep) {
				l.sweep(now)
			}
			if len(l.addrs) >= maxFailureAddrs {
				return
			}
		}
		b = &bucket{tokens: rate.NewLimiter(l.limit, l.burst)}
		l.addrs[addr] = b
	}
	b.lastUsed = now
	b.tokens.AllowN(now, 1)
}

// succeed notes a key that authenticated.
func (l *failureLimiter) succeed(keyHash string) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.trusted) < maxFailureAddrs {
		l.trusted[keyHash] = now
	}
}

// sweep drops the buckets that are idle and full, and the keys trusted too
// long ago. The caller holds l.mu.
func (l *failureLimiter) sweep(now time.Time) {
	for addr, b := range l.addrs {
		if now.Sub(b.lastUsed) >= bucketIdle && b.tokens.TokensAt(now) >= float64(l.burst) {
			delete(l.addrs, addr)
		}
	}
	for h, at := range l.trusted {
		if now.Sub(at) >= trustedFor {
			delete(l.trusted, h)
		}
	}
	l.nextSweep = now.Add(sweepEvery)
}

// size returns the number of addresses tracked.
func (l *failureLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.addrs)
}

// tooManyFailures answers 429 with Retry-After for an address over its
// failure budget.
func (a *API) tooManyFailures(c *gin.Context, wait time.Duration) {
	secs := retryAfter(wait)
	c.Header("Retry-After", strconv.Itoa(secs))
	writeError(c, a.log, &models.Error{Code: models.CodeRateLimited, Message: fmt.Sprintf(
		"Too many requests without a valid API key from this address. Retry in %s with a valid key: send Authorization: Bearer <API_KEY>.",
		seconds(secs))})
}
