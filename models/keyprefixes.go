package models

import (
	"context"
	"sync"
	"time"
)

// prefixRefreshEvery is how old the set of known key prefixes may be before
// a lookup that misses it reads the table again. A key created on another
// instance is known here at most this long after its creation; an attacker
// spraying made-up prefixes causes at most one read per interval.
const prefixRefreshEvery = 250 * time.Millisecond

// keyPrefixes is the set of the public prefixes of the live (unrevoked) API
// keys, held in memory so that a key whose prefix no key has is refused
// without reading the database. It only ever answers "certainly unknown": a
// known prefix still reads its row, so a revocation applies at once.
type keyPrefixes struct {
	mu  sync.Mutex
	set map[string]struct{} // nil until the first load
	// loadedAt is when set was read, by the monotonic clock (not the
	// store's, which tests pin).
	loadedAt time.Time
	// loading is closed when the refresh under way ends; nil when none is.
	// One refresh runs at a time; other lookups wait for it.
	loading chan struct{}
	// added holds the prefixes this instance created while a refresh was
	// under way: that refresh's read may not see them.
	added []string
	// loads counts the reads of the table, for tests.
	loads int64
}

// known reports whether prefix may belong to a live key: false only when the
// set, read at most prefixRefreshEvery ago, does not hold it. A failed
// refresh answers true, so the key's own read reports the outage.
func (s *Store) keyPrefixKnown(ctx context.Context, prefix string) bool {
	p := &s.keys.prefixes
	p.mu.Lock()
	for {
		if _, ok := p.set[prefix]; ok {
			p.mu.Unlock()
			return true
		}
		if p.loading == nil {
			if p.set != nil && time.Since(p.loadedAt) < prefixRefreshEvery {
				p.mu.Unlock()
				return false
			}
			break
		}
		// A refresh is under way: wait for it, then look again (its set
		// is fresh, so this loops at most once more).
		ch := p.loading
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return true
		}
		p.mu.Lock()
	}
	ch := make(chan struct{})
	p.loading, p.added = ch, nil
	p.mu.Unlock()

	var prefixes []string
	err := s.db.WithContext(ctx).Model(&APIKey{}).Where("revoked_at IS NULL").Pluck("prefix", &prefixes).Error

	p.mu.Lock()
	defer p.mu.Unlock()
	p.loads++
	if err == nil {
		set := make(map[string]struct{}, len(prefixes)+len(p.added))
		for _, x := range append(prefixes, p.added...) {
			set[x] = struct{}{}
		}
		p.set, p.loadedAt = set, time.Now()
	}
	p.loading, p.added = nil, nil
	close(ch)
	if err != nil {
		return true
	}
	_, ok := p.set[prefix]
	return ok
}

// addKeyPrefix notes a key this instance has just created, so that it works
// here at once.
func (s *Store) addKeyPrefix(prefix string) {
	p := &s.keys.prefixes
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.set != nil {
		p.set[prefix] = struct{}{}
	}
	if p.loading != nil {
		p.added = append(p.added, prefix)
	}
}
