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
		l.fail(clientKey("2001:db8:"+strconv.FormatInt(int64(i>>16), 16)+":"+strconv.FormatInt(int64(i&0xffff), 16)+"::1"), "")
	}
	if n := l.size(); n != maxFailureAddrs {
		t.Fatalf("%d addresses tracked, want the cap %d", n, maxFailureAddrs)
	}
	now = now.Add(bucketIdle + sweepEvery)
	l.blocked(clientKey("192.0.2.1"), "")
	if n := l.size(); n != 0 {
		t.Fatalf("%d addresses still tracked after they went idle", n)
	}
}
