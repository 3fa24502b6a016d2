package background

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// Close cancels the work's context and waits for it; nothing starts after.
func TestRunnerClose(t *testing.T) {
	t.Parallel()
	var r Runner
	var ended atomic.Bool
	started := make(chan struct{})
	if !r.Start(func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		time.Sleep(10 * time.Millisecond)
		ended.Store(true)
	}) {
		t.Fatal("a new Runner refused work")
	}
	<-started
	r.Close()
	if !ended.Load() {
		t.Error("Close returned before the work ended")
	}
	if !r.Closed() || r.Start(func(context.Context) { t.Error("work ran after Close") }) {
		t.Error("a closed Runner took work")
	}
}

// Wait waits for the work under way without stopping the Runner.
func TestRunnerWait(t *testing.T) {
	t.Parallel()
	var r Runner
	var done atomic.Int32
	for range 3 {
		r.Start(func(context.Context) { time.Sleep(5 * time.Millisecond); done.Add(1) })
	}
	r.Wait()
	if done.Load() != 3 || r.Closed() {
		t.Errorf("after Wait: %d of 3 done, closed %v", done.Load(), r.Closed())
	}
	r.Close()
}
