package modelstest

import (
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// Test binaries run at once (go test -p), each starting its own server. Their
// bootstraps once shared /tmp and failed at random in CI; four at once must
// all come up and answer.
func TestStartPrivateConcurrently(t *testing.T) {
	needMariaDB(t)
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

// A port taken between choosing and binding it (by another test binary) costs
// a retry on another port, not the run; and the server used is always our
// own, even when the thief is another MariaDB that answers on the port.
func TestStartPrivatePortTaken(t *testing.T) {
	needMariaDB(t)
	t.Run("by a listener that hangs up", func(t *testing.T) {
		taken, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer taken.Close()
		go func() {
			for {
				c, err := taken.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		startOnTakenPort(t, taken.Addr().(*net.TCPAddr).Port)
	})
	t.Run("by another MariaDB", func(t *testing.T) {
		other, err := startPrivate("--skip-log-bin")
		if err != nil {
			t.Fatal(err)
		}
		defer other.stop()
		port, _ := strconv.Atoi(other.base.Port())
		startOnTakenPort(t, port)
	})
}

// startOnTakenPort starts a private server whose first chosen port is taken,
// and checks it came up on another port serving its own data directory.
func startOnTakenPort(t *testing.T, taken int) {
	t.Helper()
	choose := freePort
	calls := 0
	freePort = func() (int, error) {
		calls++
		if calls == 1 {
			return taken, nil
		}
		return choose()
	}
	defer func() { freePort = choose }()
	srv, err := startPrivate("--skip-log-bin")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	if calls != 2 {
		t.Errorf("ports chosen: %d, want 2 (the taken one, then another)", calls)
	}
	if srv.base.Port() == strconv.Itoa(taken) {
		t.Errorf("server claims the taken port %s", srv.base.Port())
	}
	var datadir string
	if err := srv.admin.QueryRow("SELECT @@datadir").Scan(&datadir); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(srv.dir, "data"); filepath.Clean(datadir) != want {
		t.Errorf("connected to the server of %s, want our own %s", datadir, want)
	}
}

// needMariaDB skips the test when Debian's MariaDB is not installed, unless
// it is required; startPrivate then fails the test with the reason.
func needMariaDB(t *testing.T) {
	if _, err := findBinary("mariadbd", "/usr/sbin/mariadbd"); err != nil && !Required() {
		t.Skipf("MariaDB unavailable, skipping (make test installs it): %v", err)
	}
}
