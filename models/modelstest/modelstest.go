// Package modelstest gives tests real databases: a fresh SQLite file, or a
// fresh database on a real MariaDB server, both migrated through the same
// constructor main uses. Test packages call Main from TestMain and ForEach
// (or Open) in their tests.
//
// The MariaDB server is, in order of preference: the one named by
// PETSTORE_TEST_MYSQL_URL (mysql://USER:PASS@HOST:PORT/, a user that may
// create databases); or a private mariadbd started in a temporary directory
// for this test binary. When neither can be had, MariaDB cases are skipped
// for a quick local run, but fail the run when PETSTORE_REQUIRE_MARIADB=1 or
// CI=true (as `make test` and CI set).
//
// Fault tests take the private server away and back with Stop and Start
// (or Restart), and pause it with Freeze and Thaw; see Stop for the rule
// they follow.
package modelstest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/crypto/bcrypt"

	"petstore/config"
	"petstore/models"
)

// Drivers are the database drivers every storage test runs against.
var Drivers = []string{models.DriverSQLite, models.DriverMySQL}

var (
	server     *mariadb // nil when no MariaDB is available
	serverErr  error    // why not
	serverOnce sync.Once
)

// Main runs the tests of a package, then stops the private MariaDB server if
// one was started. Use it as: func TestMain(m *testing.M) { modelstest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	atExitMu.Lock()
	fns := atExit
	atExitMu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
	if server != nil {
		server.stop()
	}
	os.Exit(code)
}

var (
	atExitMu sync.Mutex
	atExit   []func()
)

// AtExit registers fn to run once all tests of the binary have finished,
// last registered first, for things shared by several tests (such as a
// binary built once). It needs Main as the package's TestMain.
func AtExit(fn func()) {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	atExit = append(atExit, fn)
}

// Required reports whether a missing MariaDB must fail the run.
func Required() bool {
	return os.Getenv("PETSTORE_REQUIRE_MARIADB") == "1" || os.Getenv("CI") == "true"
}

// ForEach runs fn as a subtest once per driver, each with a fresh, migrated
// store that is closed (and on MariaDB dropped) when the subtest ends.
func ForEach(t *testing.T, fn func(t *testing.T, s *models.Store)) {
	t.Helper()
	for _, driver := range Drivers {
		t.Run(driver, func(t *testing.T) {
			fn(t, Open(t, driver))
		})
	}
}

// Open returns a fresh, migrated store on driver.
func Open(tb testing.TB, driver string) *models.Store {
	tb.Helper()
	cfg := Database(tb, driver)
	// bcrypt's minimum cost: hashing at the production cost dominates the
	// run time of console tests; the hashing code path is the same.
	s, err := models.Open(context.Background(), models.Options{Driver: string(cfg.Driver), DSN: cfg.DSN,
		ConnectTimeout: 20 * time.Second, MaxOpenConns: 20, PasswordCost: bcrypt.MinCost,
		SecretKeys: [][]byte{SecretKey}})
	if err != nil {
		tb.Fatalf("open %s: %v", cfg.Redacted, err)
	}
	tb.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrate %s: %v", cfg.Redacted, err)
	}
	return s
}

// URL returns a DATABASE_URL for a fresh, empty database on driver, for tests
// that go through configuration (the binary's own tests).
func URL(tb testing.TB, driver string) string {
	tb.Helper()
	switch driver {
	case models.DriverSQLite:
		return "sqlite:" + filepath.Join(tb.TempDir(), "petstore.db")
	case models.DriverMySQL:
		srv := need(tb)
		name := srv.createDB(tb)
		u := *srv.base
		u.Path = "/" + name
		return u.String()
	}
	tb.Fatalf("unknown driver %q", driver)
	return ""
}

// Database returns the parsed configuration of a fresh, empty database.
func Database(tb testing.TB, driver string) config.Database {
	tb.Helper()
	db, err := config.ParseDatabaseURL(URL(tb, driver))
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// need returns the MariaDB server, skipping or failing the test without one.
func need(tb testing.TB) *mariadb {
	tb.Helper()
	serverOnce.Do(func() { server, serverErr = startMariaDB() })
	if server == nil {
		if Required() {
			tb.Fatalf("MariaDB is required (CI=true or PETSTORE_REQUIRE_MARIADB=1) but unavailable: %v", serverErr)
		}
		tb.Skipf("MariaDB unavailable, skipping (make test installs it): %v", serverErr)
	}
	return server
}

type mariadb struct {
	base  *url.URL // mysql://root@127.0.0.1:PORT
	admin *sql.DB
	dir   string

	mu     sync.Mutex      // guards cmd, down and frozen, for Stop, Start, Freeze and Thaw
	cmd    *exec.Cmd       // nil for an outside server
	exited <-chan struct{} // closed when cmd has ended
	down   bool            // stopped by Stop
	frozen bool            // paused by Freeze
}

func startMariaDB() (*mariadb, error) {
	if raw := os.Getenv("PETSTORE_TEST_MYSQL_URL"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "mysql" {
			return nil, fmt.Errorf("PETSTORE_TEST_MYSQL_URL %q is not a mysql:// URL", raw)
		}
		u.Path = ""
		return connect(u, nil, "", nil)
	}
	return startPrivate("--skip-log-bin")
}

// startPrivate starts a private mariadbd in a new temporary directory with
// the given extra options.
func startPrivate(extra ...string) (*mariadb, error) {
	mysqld, err := findBinary("mariadbd", "/usr/sbin/mariadbd")
	if err != nil {
		return nil, err
	}
	installDB, err := findBinary("mariadb-install-db", "/usr/bin/mariadb-install-db")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "petstore-mariadb-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*mariadb, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	p := privateServer{mysqld: mysqld, dir: dir, data: filepath.Join(dir, "data"), tmp: filepath.Join(dir, "tmp"), extra: extra}
	if err := p.install(installDB); err != nil {
		return fail(err)
	}
	if p.log, err = os.Create(filepath.Join(dir, "mariadbd.log")); err != nil {
		return fail(err)
	}
	// The port is free when chosen but another test binary may take it
	// before mariadbd binds it: then try another.
	for attempt := 1; ; attempt++ {
		srv, err := p.launch()
		if err == nil {
			return srv, nil
		}
		if errors.Is(err, errPortTaken) && attempt < 3 {
			continue
		}
		return fail(err)
	}
}

// privateServer is a MariaDB server of a test binary's own, in dir.
type privateServer struct {
	mysqld, dir, data, tmp string
	extra                  []string // more mariadbd options
	log                    *os.File
}

// install creates the data directory.
func (p privateServer) install(installDB string) error {
	// A private tmpdir: servers of test binaries running at once otherwise
	// share /tmp, and their bootstraps trip over each other's temporary
	// tables ("Unknown table 'mysql.tmp_user_sys'").
	if err := os.Mkdir(p.tmp, 0o700); err != nil {
		return err
	}
	out, err := exec.Command(installDB, "--no-defaults", "--datadir="+p.data, "--tmpdir="+p.tmp, "--user="+currentUser(),
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadb-install-db: %v: %s", err, installFailure(out))
	}
	return nil
}

// launch starts mariadbd on a free port and connects to it; an error
// wrapping errPortTaken means another server took the port first.
func (p privateServer) launch() (*mariadb, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--no-defaults", "--datadir=" + p.data, "--tmpdir=" + p.tmp, "--user=" + currentUser(),
		"--bind-address=127.0.0.1", "--port=" + strconv.Itoa(port), "--socket=" + filepath.Join(p.dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(p.dir, "mysqld.pid"), "--skip-name-resolve",
		"--innodb-buffer-pool-size=128M", "--max-connections=500",
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci"}, p.extra...)
	cmd := exec.Command(p.mysqld, args...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// The server dies with the test binary even if the binary is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logStart, _ := p.log.Seek(0, io.SeekCurrent)
	exited, err := startProcess(cmd)
	if err != nil {
		return nil, fmt.Errorf("start mariadbd: %w", err)
	}
	u := &url.URL{Scheme: "mysql", User: url.User("root"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	srv, err := connect(u, cmd, p.dir, exited)
	if err == nil {
		// Reached a server: ours only if it serves our data directory.
		var datadir string
		err = srv.admin.QueryRow("SELECT @@datadir").Scan(&datadir)
		if err == nil && filepath.Clean(datadir) != p.data {
			err = fmt.Errorf("port %d answered for %s, not ours: %w", port, datadir, errPortTaken)
			srv.admin.Close()
		}
		if err == nil {
			return srv, nil
		}
	}
	cmd.Process.Kill()
	<-exited
	log, _ := os.ReadFile(p.log.Name())
	log = log[min(int(logStart), len(log)):]
	if errors.Is(err, errExited) && bytes.Contains(log, []byte("Address already in use")) {
		err = errPortTaken
	}
	return nil, fmt.Errorf("%w; mariadbd log: %s", err, lastLines(log))
}

var (
	errPortTaken = errors.New("port taken by another server")
	errExited    = errors.New("mariadbd exited at start")
)

// startProcess starts cmd and returns a channel closed once it has ended;
// only that channel may wait for it.
func startProcess(cmd *exec.Cmd) (<-chan struct{}, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	return exited, nil
}

// connect waits for the server at base to answer. For a private server,
// exited is closed when its process ends, and connect then gives up.
func connect(base *url.URL, cmd *exec.Cmd, dir string, exited <-chan struct{}) (*mariadb, error) {
	pass, _ := base.User.Password()
	cfg, err := mysql.ParseDSN(fmt.Sprintf("%s:%s@tcp(%s)/?timeout=2s", base.User.Username(), pass, base.Host))
	if err != nil {
		return nil, err
	}
	// The admin connection outlives server restarts in the fault tests; the
	// driver's notes about the connections it drops then are noise.
	cfg.Logger = mysql.Logger(log.New(io.Discard, "", 0))
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err = db.Ping()
		if err == nil {
			break
		}
		select {
		case <-exited:
			db.Close()
			return nil, errExited
		default:
		}
		if time.Now().After(deadline) {
			db.Close()
			return nil, fmt.Errorf("mariadb at %s did not answer: %w", base.Host, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &mariadb{base: base, admin: db, cmd: cmd, exited: exited, dir: dir}, nil
}

// createDB makes an empty utf8mb4 database, dropped when the test ends.
func (m *mariadb) createDB(tb testing.TB) string {
	tb.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "petstore_test_" + hex.EncodeToString(b[:])
	if _, err := m.admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() { m.admin.Exec("DROP DATABASE IF EXISTS " + name) })
	return name
}

// Restart stops the MariaDB server and starts it again after down, for
// outage tests. Like Stop, it needs the private server.
func Restart(tb testing.TB, down time.Duration) {
	tb.Helper()
	Stop(tb)
	time.Sleep(down)
	Start(tb)
}

// Stop shuts the private MariaDB server down (SIGTERM, as an operator
// would) and returns once it has exited, for outage tests; Start brings it
// back. If the test ends with the server still down, it is started again.
//
// The server is shared by every test of the binary, so a test that stops it
// must not run in parallel (no t.Parallel) with tests that use MariaDB:
// sequential top-level tests run before any parallel one resumes. A server
// given by PETSTORE_TEST_MYSQL_URL is not ours to stop: the test is skipped.
func Stop(tb testing.TB) {
	tb.Helper()
	srv := private(tb)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.down {
		return
	}
	srv.shutdown()
	tb.Cleanup(func() {
		srv.mu.Lock()
		down := srv.down
		srv.mu.Unlock()
		if down {
			Start(tb)
		}
	})
}

// Start starts the private MariaDB server again after Stop, on the same
// port and data, and returns once it answers. It does nothing when the
// server is running.
func Start(tb testing.TB) {
	tb.Helper()
	srv := private(tb)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if !srv.down {
		return
	}
	cmd := exec.Command(srv.cmd.Path, srv.cmd.Args[1:]...)
	cmd.Stdout, cmd.Stderr = srv.cmd.Stdout, srv.cmd.Stderr
	cmd.SysProcAttr = srv.cmd.SysProcAttr
	exited, err := startProcess(cmd)
	if err != nil {
		tb.Fatalf("restart mariadbd: %v", err)
	}
	srv.cmd, srv.exited, srv.down = cmd, exited, false
	if err := waitPing(srv.admin, 30*time.Second); err != nil {
		tb.Fatalf("mariadb did not come back: %v", err)
	}
}

// Freeze pauses the private MariaDB server (SIGSTOP): it still accepts TCP
// connections but answers nothing, like a hung host or a network partition.
// Thaw resumes it; if the test ends with the server frozen, it is thawed.
// The same rule as for Stop applies: no t.Parallel in tests that call it.
func Freeze(tb testing.TB) {
	tb.Helper()
	srv := private(tb)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.down || srv.frozen {
		return
	}
	if err := srv.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatalf("freeze mariadbd: %v", err)
	}
	srv.frozen = true
	tb.Cleanup(func() { Thaw(tb) })
	// The signal is only queued: wait until every thread has stopped, so
	// that nothing the test sends next is answered.
	deadline := time.Now().Add(5 * time.Second)
	for !stopped(srv.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			tb.Fatal("mariadbd did not stop within 5s of SIGSTOP")
		}
		time.Sleep(time.Millisecond)
	}
}

// stopped reports whether every thread of process pid is stopped, from
// /proc; without /proc it waits a moment and says yes.
func stopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		time.Sleep(100 * time.Millisecond)
		return true
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread has ended
		}
		// The state follows the command name in parentheses: "pid (comm) S ...".
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}

// Thaw resumes the server paused by Freeze and returns once it answers.
func Thaw(tb testing.TB) {
	tb.Helper()
	srv := private(tb)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if !srv.frozen {
		return
	}
	if err := srv.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		tb.Fatalf("thaw mariadbd: %v", err)
	}
	srv.frozen = false
	if err := waitPing(srv.admin, 30*time.Second); err != nil {
		tb.Fatalf("mariadb did not answer after thawing: %v", err)
	}
}

// private returns the private MariaDB server, skipping the test when the
// server is an outside one (or failing or skipping it without MariaDB).
func private(tb testing.TB) *mariadb {
	tb.Helper()
	srv := need(tb)
	if srv.cmd == nil {
		tb.Skip("stopping MariaDB needs the private server, not the one of PETSTORE_TEST_MYSQL_URL")
	}
	return srv
}

func waitPing(db *sql.DB, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		err := db.Ping()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// shutdown ends the running private server as an operator would (thawing
// it first if frozen), killing it if it takes over 30 s. m.mu must be held.
func (m *mariadb) shutdown() {
	if m.frozen {
		m.cmd.Process.Signal(syscall.SIGCONT)
		m.frozen = false
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(30 * time.Second):
		m.cmd.Process.Kill()
		<-m.exited
	}
	m.down = true
}

func (m *mariadb) stop() {
	m.admin.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil && !m.down {
		m.shutdown()
	}
	if m.dir != "" {
		os.RemoveAll(m.dir)
	}
}

func findBinary(name, fallback string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if _, err := os.Stat(fallback); err == nil {
		return fallback, nil
	}
	return "", fmt.Errorf("%s not found (install Debian's mariadb-server, or set PETSTORE_TEST_MYSQL_URL)", name)
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if os.Geteuid() == 0 {
		return "root"
	}
	return strconv.Itoa(os.Geteuid())
}

var freePort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// installFailure keeps what mariadb-install-db said before its generic
// advice ("Installation of system tables failed! ..."), which is where the
// cause is.
func installFailure(out []byte) string {
	head, _, found := strings.Cut(string(out), "Installation of system tables failed")
	if !found {
		return lastLines(out)
	}
	return lastLines([]byte(head))
}

func lastLines(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}
