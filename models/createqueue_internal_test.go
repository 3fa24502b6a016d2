package models

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The group-commit queue under a storm of creates, some of whose clients
// give up: every create returns, those written exactly once and with their
// own result, at most maxLeaders batches are written at once, and none
// holds more than maxCreateBatch.
func TestCreateQueueStorm(t *testing.T) {
	t.Parallel()
	for _, leaders := range []int{1, 4} {
		q := &createQueue{maxLeaders: leaders}
		var (
			mu       sync.Mutex
			written  = map[*createRequest]int{}
			running  atomic.Int32
			peak     atomic.Int32
			tooLarge atomic.Bool
		)
		write := func(batch []*createRequest) {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if len(batch) > maxCreateBatch {
				tooLarge.Store(true)
			}
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			running.Add(-1)
			mu.Lock()
			for _, r := range batch {
				written[r]++
			}
			mu.Unlock()
			for i, r := range batch {
				r.change.After.ID = int64(i + 1)
				r.done <- createResult{err: nil}
			}
		}
		const n = 3000
		var wg sync.WaitGroup
		gone := make([]bool, n)
		reqs := make([]*createRequest, n)
		errs := make([]error, n)
		for i := range n {
			reqs[i] = &createRequest{done: make(chan createResult, 1)}
			wg.Go(func() {
				ctx := context.Background()
				if i%7 == 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(500))*time.Microsecond)
					defer cancel()
				}
				errs[i] = q.submit(ctx, reqs[i], write)
				gone[i] = errs[i] != nil
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%d leaders: creates still waiting after a minute", leaders)
		}
		for i, r := range reqs {
			switch k := written[r]; {
			case gone[i] && (k != 0 || !errors.Is(errs[i], context.DeadlineExceeded)):
				t.Fatalf("%d leaders: create %d gave up (%v) but was written %d times", leaders, i, errs[i], k)
			case !gone[i] && k != 1:
				t.Fatalf("%d leaders: create %d succeeded, written %d times", leaders, i, k)
			}
		}
		if p := peak.Load(); p > int32(leaders) {
			t.Errorf("%d leaders: %d batches written at once", leaders, p)
		}
		if tooLarge.Load() {
			t.Errorf("%d leaders: a batch larger than %d", leaders, maxCreateBatch)
		}
		if q.leaders != 0 || len(q.pending) != 0 {
			t.Errorf("%d leaders: queue left with %d leaders, %d pending", leaders, q.leaders, len(q.pending))
		}
	}
}
