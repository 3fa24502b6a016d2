package models

import (
	"context"
	"errors"
	"sync"
	"time"

	"gorm.io/gorm"
)

// keyState is what authenticating API keys keeps in this process.
type keyState struct {
	// cache holds the api_keys rows read in the last KeyCacheTTL, by
	// prefix.
	cache keyCache
	// prefixes are the live keys' prefixes (keyprefixes.go): a key whose
	// prefix none has is refused without a read.
	prefixes keyPrefixes
}

// KeyCacheTTL is how long a key's row (hash, revocation, expiry, scopes),
// once read, is used to check the keys sent under its prefix without
// reading it again. A key revoked on another instance is refused here at
// most this long after the revocation (well within the second the service
// promises); the instance that revokes a key drops its row at once.
const KeyCacheTTL = 500 * time.Millisecond

// keyCacheMax bounds the cache; past it, expired rows are dropped. Only the
// prefixes of live keys are ever read (keyPrefixes refuses the others
// first), so it holds at most the rows of keys sent in the last
// KeyCacheTTL and cannot be filled by made-up keys.
const keyCacheMax = 1024

// keyCache holds the api_keys rows read recently, by prefix, whether or not
// the secret sent with them matched: every request is checked against the
// row, from here or from the database alike, so a wrong secret is refused
// either way, and a flood of wrong secrets under a known prefix reads that
// row at most once per KeyCacheTTL. This is what lets the API check every
// key, even from an address that keeps failing, at a bounded cost.
type keyCache struct {
	mu sync.RWMutex
	m  map[string]cachedKey
	// reading holds the reads under way, by prefix: one at a time per
	// prefix, which the other requests for it wait for and share.
	reading map[string]*keyRead
	// revocations counts the keys forgotten, so that a read that began
	// before a revocation here is not cached.
	revocations uint64
	// reads counts the rows read, for KeyReads.
	reads int64
}

type cachedKey struct {
	key APIKey
	// checkedAt is when the row was read, by the monotonic clock (not the
	// store's, which tests pin).
	checkedAt time.Time
}

// keyRead is one read of a key's row, shared by the requests that wait
// for it; done is closed when its result is set.
type keyRead struct {
	done  chan struct{}
	key   APIKey
	found bool
	err   error
	// cancelled is set when the read failed because the context of the
	// request that ran it ended: the others read again.
	cancelled bool
}

// keyRow returns the row of the key with prefix, read at most KeyCacheTTL
// ago; found is false when no key has it. A prefix that no live key has
// (keyPrefixKnown) is answered without a read.
func (s *Store) keyRow(ctx context.Context, prefix string) (k APIKey, found bool, err error) {
	c := &s.keys.cache
	c.mu.RLock()
	e, ok := c.m[prefix]
	c.mu.RUnlock()
	if ok && time.Since(e.checkedAt) < KeyCacheTTL {
		return e.key, true, nil
	}
	if !s.keyPrefixKnown(ctx, prefix) {
		return APIKey{}, false, nil
	}
	for {
		r, mine := c.startRead(prefix)
		if mine {
			s.readKeyRow(ctx, prefix, r)
			return r.key, r.found, r.err
		}
		select {
		case <-r.done:
		case <-ctx.Done():
			return APIKey{}, false, s.dbErr("authenticate", ctx.Err())
		}
		if !r.cancelled || ctx.Err() != nil {
			return r.key, r.found, r.err
		}
	}
}

// startRead returns the read of prefix under way, or a new one that the
// caller is to run (mine) when there is none. A row cached meanwhile is
// returned as a read already done.
func (c *keyCache) startRead(prefix string) (r *keyRead, mine bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[prefix]; ok && time.Since(e.checkedAt) < KeyCacheTTL {
		r = &keyRead{done: make(chan struct{}), key: e.key, found: true}
		close(r.done)
		return r, false
	}
	if r = c.reading[prefix]; r != nil {
		return r, false
	}
	if c.reading == nil {
		c.reading = map[string]*keyRead{}
	}
	r = &keyRead{done: make(chan struct{})}
	c.reading[prefix] = r
	return r, true
}

// readKeyRow runs r, the read of prefix's row, caches what it found and
// lets the requests waiting for it go on.
func (s *Store) readKeyRow(ctx context.Context, prefix string, r *keyRead) {
	c := &s.keys.cache
	c.mu.RLock()
	gen := c.revocations
	c.mu.RUnlock()
	readAt := time.Now()

	err := s.db.WithContext(ctx).Where("prefix = ?", prefix).Take(&r.key).Error
	switch {
	case err == nil:
		r.found = true
	case errors.Is(err, gorm.ErrRecordNotFound):
	default:
		r.err = s.dbErr("authenticate", err)
		r.cancelled = ctx.Err() != nil
	}

	c.mu.Lock()
	c.reads++
	// forget may have dropped r already, and a new read may stand in its
	// place.
	if c.reading[prefix] == r {
		delete(c.reading, prefix)
	}
	// A read that may predate a revocation here is not cached.
	if r.found && gen == c.revocations {
		c.put(prefix, r.key, readAt)
	}
	c.mu.Unlock()
	close(r.done)
}

// put notes row k of prefix, read at checkedAt. The caller holds c.mu.
func (c *keyCache) put(prefix string, k APIKey, checkedAt time.Time) {
	if c.m == nil {
		c.m = map[string]cachedKey{}
	}
	if len(c.m) >= keyCacheMax {
		for p, e := range c.m {
			if time.Since(e.checkedAt) >= KeyCacheTTL {
				delete(c.m, p)
			}
		}
	}
	c.m[prefix] = cachedKey{key: k, checkedAt: checkedAt}
}

// setTime records the time t written for the key with prefix.
func (c *keyCache) setTime(prefix string, t keyTime, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[prefix]; ok {
		*e.key.field(t) = &at
		c.m[prefix] = e
	}
}

// forget drops the row of the key with prefix: it has just been revoked
// here. A read of it under way is left to the requests already waiting
// for it (they came before the revocation); later ones read again.
func (c *keyCache) forget(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.revocations++
	delete(c.m, prefix)
	delete(c.reading, prefix)
}
