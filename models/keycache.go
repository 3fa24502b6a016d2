package models

import (
	"sync"
	"time"
)

// KeyCacheTTL is how long a key whose secret and row were checked is
// trusted without reading its row again. A key revoked on another instance
// is refused here at most this long after the revocation (well within the
// second the service promises); the instance that revokes a key drops it
// from its own cache at once. Failed checks are never cached.
const KeyCacheTTL = 500 * time.Millisecond

// keyCacheMax bounds the cache; past it, expired entries are dropped. Only
// keys that passed the full check are cached, so it holds at most the live
// keys used in the last KeyCacheTTL and cannot be filled by made-up keys.
const keyCacheMax = 1024

// keyCache holds the recently verified API keys, by the hash of the whole
// key.
type keyCache struct {
	mu sync.RWMutex
	m  map[string]cachedKey
	// revocations counts the keys forgotten, so that a check whose read
	// began before a revocation here does not cache what it read.
	revocations uint64
}

type cachedKey struct {
	key APIKey
	// checkedAt is when the row was read, by the monotonic clock (not the
	// store's, which tests pin).
	checkedAt time.Time
}

// get returns the key verified under hash less than KeyCacheTTL ago.
func (c *keyCache) get(hash string) (APIKey, bool) {
	c.mu.RLock()
	e, ok := c.m[hash]
	c.mu.RUnlock()
	if !ok || time.Since(e.checkedAt) >= KeyCacheTTL {
		return APIKey{}, false
	}
	return e.key, true
}

// generation returns the count of revocations, to pass to put.
func (c *keyCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.revocations
}

// put notes k, read from its row at checkedAt and verified, under hash;
// gen is generation() before the read. Nothing is noted if a key was
// revoked here since: the read may predate it.
func (c *keyCache) put(hash string, k APIKey, checkedAt time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.revocations {
		return
	}
	if c.m == nil {
		c.m = map[string]cachedKey{}
	}
	if len(c.m) >= keyCacheMax {
		for h, e := range c.m {
			if time.Since(e.checkedAt) >= KeyCacheTTL {
				delete(c.m, h)
			}
		}
	}
	c.m[hash] = cachedKey{key: k, checkedAt: checkedAt}
}

// setTime records the time t written for the key under hash.
func (c *keyCache) setTime(hash string, t keyTime, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[hash]; ok {
		*e.key.field(t) = &at
		c.m[hash] = e
	}
}

// forget drops the key under hash: it has just been revoked here.
func (c *keyCache) forget(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.revocations++
	delete(c.m, hash)
}
