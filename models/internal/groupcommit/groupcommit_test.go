package groupcommit

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The queue under a storm of requests, some of whose callers give up:
// every request returns, those written exactly once and with their own
// result, at most MaxLeaders batches are written at once, and none holds
// more than MaxBatch.
func TestQueueStorm(t *testing.T) {
	t.Parallel()
	const maxBatch = 64
	for _, leaders := range []int{1, 4} {
		q := &Queue[int]{MaxLeaders: leaders, MaxBatch: maxBatch}
		var (
			mu       sync.Mutex
			written  = map[int]int{}
			running  atomic.Int32
			peak     atomic.Int32
			tooLarge atomic.Bool
		)
		write := func(batch []int) []error {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if len(batch) > maxBatch {
				tooLarge.Store(true)
			}
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			running.Add(-1)
			mu.Lock()
			for _, r := range batch {
				written[r]++
			}
			mu.Unlock()
			errs := make([]error, len(batch))
			for i, r := range batch {
				if r%11 == 0 {
					errs[i] = errors.New("refused")
				}
			}
			return errs
		}
		const n = 3000
		var wg sync.WaitGroup
		gone := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				ctx := context.Background()
				if i%7 == 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(500))*time.Microsecond)
					defer cancel()
				}
				errs[i] = q.Submit(ctx, i, write)
				gone[i] = errors.Is(errs[i], context.DeadlineExceeded)
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%d leaders: requests still waiting after a minute", leaders)
		}
		for i := range n {
			switch k := written[i]; {
			case gone[i] && k != 0:
				t.Fatalf("%d leaders: request %d gave up (%v) but was written %d times", leaders, i, errs[i], k)
			case !gone[i] && k != 1:
				t.Fatalf("%d leaders: request %d returned %v, written %d times", leaders, i, errs[i], k)
			case !gone[i] && (i%11 == 0) != (errs[i] != nil):
				t.Fatalf("%d leaders: request %d got %v, not its own result", leaders, i, errs[i])
			}
		}
		if p := peak.Load(); p > int32(leaders) {
			t.Errorf("%d leaders: %d batches written at once", leaders, p)
		}
		if tooLarge.Load() {
			t.Errorf("%d leaders: a batch larger than %d", leaders, maxBatch)
		}
		if !q.Idle() {
			t.Errorf("%d leaders: queue left with %d leaders, %d pending", leaders, q.leaders, len(q.pending))
		}
	}
}

// A request alone is written at once, by its own caller.
func TestQueueAlone(t *testing.T) {
	t.Parallel()
	var q Queue[string]
	var got []string
	err := q.Submit(context.Background(), "rex", func(b []string) []error { got = append(got, b...); return make([]error, len(b)) })
	if err != nil || len(got) != 1 || got[0] != "rex" || !q.Idle() {
		t.Fatalf("Submit = %v, wrote %q", err, got)
	}
}
