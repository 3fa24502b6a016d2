package modelstest

import (
	"os/exec"
	"sync"
	"testing"
)

// Test binaries run at once (go test -p), each starting its own server. Their
// bootstraps once shared /tmp and failed at random in CI; four at once must
// all come up and answer.
func TestStartPrivateConcurrently(t *testing.T) {
	if _, err := exec.LookPath("mariadbd"); err != nil && !Required() {
		t.Skip("MariaDB unavailable, skipping (make test installs it)")
	}
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv, err := startPrivate("--skip-log-bin")
			if err != nil {
				errs[i] = err
				return
			}
			defer srv.stop()
			var one int
			errs[i] = srv.admin.QueryRow("SELECT 1").Scan(&one)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("server %d: %v", i, err)
		}
	}
}
