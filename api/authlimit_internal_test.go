package api

import (
	"strconv"
	"testing"
	"time"
)

func TestClientKey(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{"192.0.2.1", "::ffff:192.0.2.1"},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"}, // one /64: one host
	}
	for _, p := range same {
		if clientKey(p[0]) != clientKey(p[1]) {
			t.Errorf("%s and %s are counted apart", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"192.0.2.1", "192.0.2.2"}, {"2001:db8:1:2::1", "2001:db8:1:3::1"}} {
		if clientKey(p[0]) == clientKey(p[1]) {
			t.Errorf("%s and %s share a budget", p[0], p[1])
		}
	}
}

// The map of addresses stays bounded under an address-spraying attack, and
// idle full buckets are dropped.
func TestFailureLimiterBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newFailureLimiter(2, 20, func() time.Time { return now })
	for i := range maxFailureAddrs + 1000 {
		l.fail(clientKey("2001:db8:" + strconv.FormatInt(int64(i>>16), 16) + ":" + strconv.FormatInt(int64(i&0xffff), 16) + "::1"))
	}
	if n := l.size(); n != maxFailureAddrs {
		t.Fatalf("%d addresses tracked, want the cap %d", n, maxFailureAddrs)
	}
	now = now.Add(bucketIdle + sweepEvery)
	l.fail(clientKey("192.0.2.1"))
	if n := l.size(); n != 1 {
		t.Fatalf("%d addresses tracked after they went idle and one more failed, want 1", n)
	}
}

// An address gets its burst of failures, then failures at the rate; one
// over budget is told how long to wait and takes nothing, so it gets its
// next failure after that wait.
func TestFailureLimiterThrottlesOverBudget(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newFailureLimiter(2, 20, clock.now)
	addr := clientKey("203.0.113.9")
	for i := range 20 {
		if _, throttled := l.fail(addr); throttled {
			t.Fatalf("failure %d of a burst of 20 throttled", i+1)
		}
	}
	for range 3 {
		wait, throttled := l.fail(addr)
		if !throttled || wait != 500*time.Millisecond {
			t.Fatalf("failure over budget: throttled %v, wait %v; want throttled, 500ms", throttled, wait)
		}
	}
	if _, throttled := l.fail(clientKey("198.51.100.7")); throttled {
		t.Fatal("another address throttled")
	}
	clock.advance(500 * time.Millisecond)
	if _, throttled := l.fail(addr); throttled {
		t.Fatal("throttled after the wait it was told")
	}
	if _, throttled := l.fail(addr); !throttled {
		t.Fatal("not throttled right after the refilled token was spent")
	}
}
