// Package background runs work beside requests and stops it when its
// owner closes.
package background

import (
	"context"
	"sync"
)

// Runner is work an owner (the Store) runs beside requests (the
// idempotency keys' purge and releases, the status counts' compaction),
// stopped when the owner closes: Close cancels the context the work is
// given and waits for it. The zero Runner is ready to use.
type Runner struct {
	mu     sync.Mutex
	closed bool
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	work   sync.WaitGroup
}

// Start runs fn in the background and reports true, unless the Runner is
// closed; fn should return when ctx ends.
func (b *Runner) Start(fn func(ctx context.Context)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	if b.ctx == nil {
		b.ctx, b.cancel = context.WithCancel(context.Background())
	}
	b.work.Add(1)
	go func(ctx context.Context) {
		defer b.work.Done()
		fn(ctx)
	}(b.ctx)
	return true
}

// Closed reports whether Close has been called.
func (b *Runner) Closed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// Wait waits for the work under way to end, starting none meanwhile: for
// tests that look at what the work wrote.
func (b *Runner) Wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.work.Wait()
}

// Close stops the work under way and waits for it; nothing starts after.
func (b *Runner) Close() {
	b.mu.Lock()
	b.closed = true
	if b.cancel != nil {
		b.cancel()
	}
	b.mu.Unlock()
	b.work.Wait()
}
