package models

import "sync"

// background is work a Store runs beside requests (the idempotency keys'
// purge, the status counts' compaction), stopped when the Store closes:
// close ends quit, which the work watches, and waits for it.
type background struct {
	mu     sync.Mutex
	closed bool
	quit   chan struct{} // closed by close
	work   sync.WaitGroup
}

// start runs fn in the background and reports true, unless the Store is
// closed; fn should return when quit is closed.
func (b *background) start(fn func(quit <-chan struct{})) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	if b.quit == nil {
		b.quit = make(chan struct{})
	}
	b.work.Add(1)
	go func(quit <-chan struct{}) {
		defer b.work.Done()
		fn(quit)
	}(b.quit)
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
	if b.quit != nil {
		close(b.quit)
	}
	b.mu.Unlock()
	b.work.Wait()
}
