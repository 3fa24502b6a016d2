package models

import (
	"context"
	"sync"
)

// background is work a Store runs beside requests (the idempotency keys'
// purge and releases, the status counts' compaction), stopped when the
// Store closes: close cancels the context the work is given and waits for
// it.
type background struct {
	mu     sync.Mutex
	closed bool
	ctx    context.Context // ends at close
	cancel context.CancelFunc
	work   sync.WaitGroup
}

// start runs fn in the background and reports true, unless the Store is
// closed; fn should return when ctx ends.
func (b *background) start(fn func(ctx context.Context)) bool {
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

// isClosed reports whether close has been called.
func (b *background) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// close stops the work under way and waits for it; nothing starts after.
func (b *background) close() {
	b.mu.Lock()
	b.closed = true
	if b.cancel != nil {
		b.cancel()
	}
	b.mu.Unlock()
	b.work.Wait()
}
