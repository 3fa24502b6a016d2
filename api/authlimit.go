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

// The production limit of failed authentications per client address
// (server.New sets it; the zero Options leave it off): a typo or a rotated
// key gets its 401s, a client that keeps failing gets 429 after a burst of
// 20 failures and then 2 failures a second.
const (
	DefaultAuthFailureRate  rate.Limit = 2
	DefaultAuthFailureBurst int        = 20
)

// maxFailureAddrs caps the addresses tracked at once, so that a client
// spraying source addresses cannot grow the map without bound. Past it, new
// addresses are not tracked until the sweep frees room: each of them would
// only ever have had its first burst anyway.
const maxFailureAddrs = 100_000

// failureLimiter is a token bucket of failed authentications per client
// address (IPv6 addresses by their /64, what one host is usually given), in
// this process's memory. Only failures take tokens, and only once the key
// has been checked: a request whose key is valid is never refused by it,
// whatever others do from its address (a NAT, a shared egress, a proxy
// without TRUSTED_PROXIES), on any instance, from its first request. That
// check costs a bounded amount even under a flood: a made-up prefix no
// database read, a known one at most one read of its row per
// models.KeyCacheTTL (the store's key cache), so nothing is saved by
// refusing before it. A failure from an address with no token left is
// answered 429 instead of 401 and takes nothing, so a client that waits
// its Retry-After gets its next 401.
type failureLimiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	addrs     map[netip.Prefix]*bucket
	nextSweep time.Time
}

// newFailureLimiter returns a limiter of limit failures per second per
// address with bursts of burst, or nil (no limit) when limit is 0,
// negative or rate.Inf.
func newFailureLimiter(limit rate.Limit, burst int, now func() time.Time) *failureLimiter {
	if limit <= 0 || limit == rate.Inf {
		return nil
	}
	return &failureLimiter{limit: limit, burst: max(burst, 1), now: now, addrs: map[netip.Prefix]*bucket{}}
}

// clientKey groups an address as the sign-in limits do: IPv4 alone, IPv6
// by its /64; every unreadable address shares one bucket.
func clientKey(addr string) netip.Prefix { return models.ClientNetwork(addr) }

// fail counts a failed authentication from addr: it takes a token from
// addr's bucket, or, when none is left, reports throttled and how long
// until one will be there.
func (l *failureLimiter) fail(addr netip.Prefix) (wait time.Duration, throttled bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	// At most one sweep per sweepEvery: a sweep per request of a spraying
	// client would be the attack.
	if !now.Before(l.nextSweep) {
		l.sweep(now)
	}
	b := l.addrs[addr]
	if b == nil {
		if len(l.addrs) >= maxFailureAddrs {
			return 0, false
		}
		b = &bucket{tokens: rate.NewLimiter(l.limit, l.burst)}
		l.addrs[addr] = b
	}
	b.lastUsed = now
	if tokens := b.tokens.TokensAt(now); tokens < 1 {
		return time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second)), true
	}
	b.tokens.AllowN(now, 1)
	return 0, false
}

// sweep drops the buckets that are idle and full. The caller holds l.mu.
func (l *failureLimiter) sweep(now time.Time) {
	for addr, b := range l.addrs {
		if now.Sub(b.lastUsed) >= bucketIdle && b.tokens.TokensAt(now) >= float64(l.burst) {
			delete(l.addrs, addr)
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

// tooManyFailures answers 429 with Retry-After to a request that failed
// authentication from an address over its failure budget.
func (a *API) tooManyFailures(c *gin.Context, wait time.Duration) {
	secs := retryAfter(wait)
	c.Header("Retry-After", strconv.Itoa(secs))
	writeError(c, a.log, &models.Error{Code: models.CodeRateLimited, Message: fmt.Sprintf(
		"Too many requests without a valid API key from this address. Retry in %s with a valid key: send Authorization: Bearer <API_KEY>.",
		seconds(secs))})
}
