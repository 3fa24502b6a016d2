package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingWriter records each write it is given.
type countingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *countingWriter) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

func TestLogBufferWritesLinesTogetherAndSoon(t *testing.T) {
	out := &countingWriter{}
	b := newLogBuffer(out)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				fmt.Fprintf(b, "line g=%d i=%d %s\n", g, i, strings.Repeat("x", 40))
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(20 * logFlushDelay)
	for strings.Count(strings.Join(out.get(), ""), "\n") < 400 && time.Now().Before(deadline) {
		time.Sleep(logFlushDelay / 5)
	}
	writes := out.get()
	// Written together: one write unless the machine was slow enough for
	// the delay to pass while the lines were logged.
	if len(writes) > 10 {
		t.Errorf("%d writes for 400 lines logged at once, want a few at most", len(writes))
	}
	lines := strings.Split(strings.TrimSuffix(strings.Join(writes, ""), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines written within %s, want 400", len(lines), 20*logFlushDelay)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "line g=") || !strings.HasSuffix(l, strings.Repeat("x", 40)) {
			t.Fatalf("line split or mixed: %q", l)
		}
		seen[l] = true
	}
	if len(seen) != 400 {
		t.Errorf("%d distinct lines, want 400", len(seen))
	}

	// Later lines arm the timer again.
	fmt.Fprintln(b, "later")
	time.Sleep(5 * logFlushDelay)
	if w := out.get(); len(w) != len(writes)+1 || w[len(w)-1] != "later\n" {
		t.Errorf("writes after a later line: %q, want the line alone", w[len(writes):])
	}
}

func TestLogBufferFlushesWhenFullAndOnFlush(t *testing.T) {
	out := &countingWriter{}
	b := newLogBuffer(out)
	line := strings.Repeat("y", 1023) + "\n"
	for range logBufferSize / len(line) {
		b.Write([]byte(line))
	}
	if w := out.get(); len(w) != 1 || len(w[0]) != logBufferSize {
		t.Fatalf("after %d bytes: %d writes, want one of them all at once", logBufferSize, len(w))
	}
	b.Write([]byte("last\n"))
	b.Flush()
	if w := out.get(); len(w) != 2 || w[1] != "last\n" {
		t.Fatalf("Flush did not write what was left: %d writes", len(w))
	}
	time.Sleep(3 * logFlushDelay)
	if w := out.get(); len(w) != 2 {
		t.Errorf("the timer wrote again after Flush: %d writes", len(w))
	}
}
