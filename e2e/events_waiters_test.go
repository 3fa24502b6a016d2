package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// idleWaiters is how many readers wait on the feed at once in
// TestEventsIdleWaiters.
const idleWaiters = 1000

// TestEventsIdleWaiters has 1000 partners long-poll one instance (the
// built binary, on SQLite) at once, each on a connection of its own, and
// measures what their waiting costs the server: its resident memory and
// its CPU time while they wait for 10 s, as figures, never asserted. It
// asserts that every reader is answered 200 with an empty page when its
// wait ends, and, with a second 1000 waiting 30 s, that one event wakes
// them all with it.
func TestEventsIdleWaiters(t *testing.T) {
	t.Parallel()
	var lim syscall.Rlimit
	// Go raises the soft limit to the hard one at start; each side of
	// every connection is a descriptor, in this process and the server.
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < 2*idleWaiters+500 {
		t.Fatalf("open files limit %d: the test needs %d (ulimit -n)", lim.Cur, 2*idleWaiters+500)
	}
	inst := testkit.ServeBinary(t, "serve", testkit.ServeVars(modelstest.URL(t, models.DriverSQLite)))
	boot := testkit.BootstrapOf(t, inst.Stdout.String())
	api := testkit.NewAPIClient(inst.Base, boot.Key)
	cursor := feedHead(t, api)
	rssBefore := procStatusMiB(t, inst.Pid, "VmRSS")

	c := testkit.NewHTTPClient(time.Minute)
	tr := &http.Transport{MaxIdleConnsPerHost: idleWaiters}
	c.Transport = tr
	defer tr.CloseIdleConnections()

	t.Run("1000 readers waiting 10 s are answered when their wait ends", func(t *testing.T) {
		const wait = 10 * time.Second
		target := fmt.Sprintf("/v1/events?after=%s&wait=%d", cursor, int(wait/time.Second))
		w := startWaiters(t, c, inst.Base+target, boot.Key)
		// The readers' first reads done, the server only waits: measure
		// that, sampling its resident memory.
		time.Sleep(time.Second)
		cpu0, at0 := procCPUOf(t, inst.Pid), time.Now()
		rss := 0.0
		for time.Since(w.sent) < wait-2*time.Second {
			rss = max(rss, procStatusMiB(t, inst.Pid, "VmRSS"))
			time.Sleep(250 * time.Millisecond)
		}
		cpu, span := procCPUOf(t, inst.Pid)-cpu0, time.Since(at0)
		w.done.Wait()
		testkit.Figure(t, "events_idle_server_rss", rssBefore, "MiB")
		testkit.Figure(t, "events_1000_waiters_server_rss", rss, "MiB")
		testkit.Figure(t, "events_1000_waiters_server_rss_per_waiter", roundTo((rss-rssBefore)*1024/idleWaiters, 1), "KiB")
		testkit.Figure(t, "events_1000_waiters_server_cpu", roundTo(100*cpu.Seconds()/span.Seconds(), 2), "% of a core")
		testkit.Figure(t, "events_1000_waiters_server_peak_rss", procStatusMiB(t, inst.Pid, "VmHWM"), "MiB")
		w.check(t, target, func(i int, a waiterAnswer, n int) error {
			if n != 0 {
				return fmt.Errorf("%d events, want an empty page", n)
			}
			if waited := a.at.Sub(a.wrote); waited < wait-500*time.Millisecond {
				return fmt.Errorf("answered %s after its request was sent, before its %s wait ended", waited, wait)
			}
			return nil
		})
	})

	t.Run("one event wakes 1000 readers waiting 30 s", func(t *testing.T) {
		target := "/v1/events?after=" + cursor + "&wait=30"
		w := startWaiters(t, c, inst.Base+target, boot.Key)
		time.Sleep(time.Second)
		created := time.Now()
		p := testkit.WantCreated(t, api.CreatePet("wakes them all"), "wakes them all")
		w.done.Wait()
		last := created
		w.check(t, target, func(i int, a waiterAnswer, n int) error {
			if a.at.After(last) {
				last = a.at
			}
			if n != 1 {
				return fmt.Errorf("%d events, want the creation of pet %d", n, p.ID)
			}
			if a.at.Sub(created) > 10*time.Second {
				return fmt.Errorf("answered %s after the create", a.at.Sub(created))
			}
			return nil
		})
		testkit.FigureDuration(t, "events_1000_waiters_all_woken", last.Sub(created))
	})
	inst.Stop(t)
}

// waiterAnswer is one reader's answer, when its request was written and
// when the answer came.
type waiterAnswer struct {
	r         testkit.Reply
	wrote, at time.Time
}

// waiters are idleWaiters readers of one target, all sent.
type waiters struct {
	sent    time.Time // when the last request was written
	answers []waiterAnswer
	done    sync.WaitGroup
}

// startWaiters sends idleWaiters requests for target at once and returns
// once each is written.
func startWaiters(t *testing.T, c *http.Client, target, key string) *waiters {
	t.Helper()
	w := &waiters{answers: make([]waiterAnswer, idleWaiters)}
	var sent sync.WaitGroup
	for i := range idleWaiters {
		sent.Add(1)
		w.done.Go(func() {
			var once sync.Once
			trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
				once.Do(func() { w.answers[i].wrote = time.Now(); sent.Done() })
			}}
			req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, target, nil)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+key)
				w.answers[i].r = testkit.Do(c, req)
			} else {
				w.answers[i].r = testkit.Reply{Err: err}
			}
			once.Do(func() { w.answers[i].wrote = time.Now(); sent.Done() })
			w.answers[i].at = time.Now()
		})
	}
	sent.Wait()
	w.sent = time.Now()
	return w
}

// check checks every answer as a page of the feed, and then with fn;
// failures are counted, the first few shown.
func (w *waiters) check(t *testing.T, target string, fn func(i int, a waiterAnswer, events int) error) {
	t.Helper()
	var failed []string
	for i, a := range w.answers {
		events, _, err := testkit.EventsPage(target, a.r)
		if err == nil {
			err = fn(i, a, len(events))
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("reader %d: %v", i, err))
		}
	}
	if len(failed) > 0 {
		t.Errorf("%d of %d readers were not answered as they should be:\n%s", len(failed), len(w.answers), strings.Join(failed[:min(len(failed), 10)], "\n"))
	}
}

// procCPUOf is the CPU time process pid has used.
func procCPUOf(t *testing.T, pid int) time.Duration {
	t.Helper()
	d, err := procCPU(pid)
	if err != nil {
		t.Fatalf("CPU time of process %d: %v", pid, err)
	}
	return d
}

// procStatusMiB reads a memory line of /proc/PID/status (VmRSS, VmHWM),
// in MiB.
func procStatusMiB(t *testing.T, pid int, field string) float64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("memory of process %d: %v", pid, err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				t.Fatalf("%s line %q: %v", field, line, err)
			}
			return roundTo(kb/1024, 1)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
