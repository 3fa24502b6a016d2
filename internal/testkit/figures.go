package testkit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// WaitFor polls fn every interval until it returns true, and returns how
// long that took, failing the test after limit.
func WaitFor(tb testing.TB, what string, limit, interval time.Duration, fn func() bool) time.Duration {
	tb.Helper()
	start := time.Now()
	for {
		if fn() {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			tb.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(interval)
	}
}

var figuresMu sync.Mutex

// Figure logs one measured figure and appends it as a JSON line to the
// file named by PETSTORE_FIGURES (default testdata/figures.jsonl), to be
// compared between runs (docs/performance.md). Figures are never asserted
// on: a loaded machine would fail a threshold for no fault of the code.
func Figure(tb testing.TB, name string, value float64, unit string) {
	tb.Helper()
	tb.Logf("figure %s = %g %s", name, value, unit)
	path := os.Getenv("PETSTORE_FIGURES")
	if path == "" {
		path = RepoPath(tb, "testdata", "figures.jsonl")
	}
	line, err := json.Marshal(struct {
		Test   string    `json:"test"`
		Figure string    `json:"figure"`
		Value  float64   `json:"value"`
		Unit   string    `json:"unit"`
		Time   time.Time `json:"time"`
		CPUs   int       `json:"cpus"`
	}{tb.Name(), name, value, unit, time.Now().UTC().Round(time.Second), runtime.NumCPU()})
	if err != nil {
		tb.Fatal(err)
	}
	figuresMu.Lock()
	defer figuresMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Errorf("figures: %v", err)
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		tb.Errorf("figures: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		tb.Errorf("figures: %v", err)
	}
}

// FigureDuration records a duration in milliseconds.
func FigureDuration(tb testing.TB, name string, d time.Duration) {
	tb.Helper()
	Figure(tb, name, float64(d.Microseconds())/1000, "ms")
}

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Clip quotes s for a failure message, shortened when long.
func Clip(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%q... (%d bytes)", s[:120], len(s))
	}
	return fmt.Sprintf("%q", s)
}
