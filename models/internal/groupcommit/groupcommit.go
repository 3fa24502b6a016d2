// Package groupcommit writes requests that arrive together in shared
// batches (group commit), without a goroutine of its own.
package groupcommit

import (
	"context"
	"runtime"
	"slices"
	"sync"
)

// Queue is group commit without a goroutine of its own: a request that
// arrives while fewer than MaxLeaders batches are being written leads,
// taking every request waiting at that moment (itself included, at most
// MaxBatch) as its batch and writing it; those arriving meanwhile wait,
// and when a leader is done the oldest of them leads the next batch, taken
// likewise. Before taking a batch a leader yields the processor once
// (runtime.Gosched), so that requests already on their way (their bodies
// being read and checked by other goroutines) join it, each batch's fixed
// cost (a transaction's begin and commit) being paid by more of them; a
// request alone waits for nothing. Batches are only ever taken under the
// lock, so each request is in one batch and hears exactly one thing (its
// result, or its batch to lead) besides, as a leader, its own result. A
// leader writes one batch, so no caller waits for more than its own.
//
// The zero Queue has one leader and no batch limit.
type Queue[R any] struct {
	// MaxLeaders is how many batches may be written at once; 0 means 1.
	MaxLeaders int
	// MaxBatch bounds a batch; 0 means no bound.
	MaxBatch int

	mu      sync.Mutex
	pending []*entry[R]
	leaders int
}

// entry is one request waiting in the queue.
type entry[R any] struct {
	req  R
	done chan result[R]
}

// result tells a waiting request that it was written (or why not), or that
// it leads the batch given.
type result[R any] struct {
	err   error
	batch []*entry[R] // not nil: write this batch (it holds the receiver)
}

// take removes and returns the next batch; q.mu is held.
func (q *Queue[R]) take() []*entry[R] {
	n := len(q.pending)
	if q.MaxBatch > 0 {
		n = min(n, q.MaxBatch)
	}
	batch := q.pending[:n:n]
	q.pending = q.pending[n:]
	if len(q.pending) == 0 {
		q.pending = nil
	}
	return batch
}

// Submit queues req and returns its error once its batch is written, by
// whichever caller leads that batch: write writes a batch and returns one
// error per request, in order. When ctx ends first, a request not yet in
// a batch leaves the queue and is not written (ctx's error is returned);
// one already in a batch is seen through and its result returned, so
// that the caller knows whether it was written although it is gone or out
// of time. write must not depend on any one caller's ctx.
func (q *Queue[R]) Submit(ctx context.Context, req R, write func([]R) []error) error {
	e := &entry[R]{req: req, done: make(chan result[R], 1)}
	q.mu.Lock()
	q.pending = append(q.pending, e)
	lead := q.leaders < max(1, q.MaxLeaders)
	if lead {
		q.leaders++
	}
	q.mu.Unlock()
	var batch []*entry[R]
	if lead {
		runtime.Gosched()
		q.mu.Lock()
		if batch = q.take(); batch == nil {
			batch = []*entry[R]{} // another leader took e meanwhile
		}
		q.mu.Unlock()
	}
	for {
		if batch != nil {
			if len(batch) > 0 {
				writeBatch(batch, write)
			}
			runtime.Gosched()
			q.mu.Lock()
			if len(q.pending) > 0 {
				next := q.take()
				next[0].done <- result[R]{batch: next}
			} else {
				q.leaders--
			}
			q.mu.Unlock()
			batch = nil
		}
		select {
		case res := <-e.done:
			if res.batch == nil {
				return res.err
			}
			batch = res.batch
		case <-ctx.Done():
			q.mu.Lock()
			i := slices.Index(q.pending, e)
			if i >= 0 {
				q.pending = slices.Delete(q.pending, i, i+1)
			}
			q.mu.Unlock()
			if i >= 0 {
				return ctx.Err()
			}
			res := <-e.done
			if res.batch == nil {
				return res.err
			}
			batch = res.batch
		}
	}
}

// writeBatch writes batch and answers each of its requests.
func writeBatch[R any](batch []*entry[R], write func([]R) []error) {
	reqs := make([]R, len(batch))
	for i, e := range batch {
		reqs[i] = e.req
	}
	errs := write(reqs)
	for i, e := range batch {
		e.done <- result[R]{err: errs[i]}
	}
}

// Idle reports whether no request is waiting and no batch is being
// written.
func (q *Queue[R]) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.leaders == 0 && len(q.pending) == 0
}
