package e2e

// The Galera cluster of TestGalera (galera_test.go), as operators deploy
// it, on loopback: three MariaDB nodes replicating with Galera (Debian's
// galera-4), each in a private data directory with its own ports (clients,
// group communication, IST and SST), the first bootstrapped and the others
// joining by SST (mariabackup); an HTTP health check per node that says
// whether it is synced; and HAProxy in front, routing only to synced nodes.
//
// Every process it starts (a node with its SST helpers, HAProxy) runs in a
// process group of its own, which is killed when the test ends, also when
// it fails; and each dies with the test binary (Pdeathsig) if that is
// killed. A node is lost as a machine is: its whole group gets SIGKILL.
//
// Without the packages (mariadb-server, galera-4, mariadb-backup, socat,
// haproxy) the test is skipped, unless CI=true or PETSTORE_REQUIRE_GALERA=1,
// where their absence fails it.

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"petstore/internal/testkit"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// galeraRequired reports whether a missing Galera setup must fail the run.
func galeraRequired() bool {
	return os.Getenv("PETSTORE_REQUIRE_GALERA") == "1" || os.Getenv("CI") == "true"
}

// galeraTools are the programs the cluster needs.
type galeraTools struct {
	mysqld, installDB, provider, haproxy string
}

// needGalera finds the programs, skipping the test without them (failing
// it where they are required).
func needGalera(tb testing.TB) galeraTools {
	tb.Helper()
	var missing []string
	find := func(pkg string, names ...string) string {
		for _, n := range names {
			if filepath.IsAbs(n) {
				if _, err := os.Stat(n); err == nil {
					return n
				}
			} else if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		missing = append(missing, fmt.Sprintf("%s (package %s)", names[0], pkg))
		return ""
	}
	t := galeraTools{
		mysqld:    find("mariadb-server", "mariadbd", "/usr/sbin/mariadbd"),
		installDB: find("mariadb-server", "mariadb-install-db", "/usr/bin/mariadb-install-db"),
		provider:  find("galera-4", "/usr/lib/galera/libgalera_smm.so", "/usr/lib/libgalera_smm.so"),
		haproxy:   find("haproxy", "haproxy", "/usr/sbin/haproxy"),
	}
	// What the SST script (wsrep_sst_mariabackup) runs.
	find("mariadb-backup", "mariadb-backup", "mariabackup")
	find("socat", "socat")
	if len(missing) > 0 {
		msg := "the Galera test needs " + strings.Join(missing, ", ")
		if galeraRequired() {
			tb.Fatalf("%s (required: CI=true or PETSTORE_REQUIRE_GALERA=1); apt-get install galera-4 mariadb-server mariadb-backup socat haproxy", msg)
		}
		tb.Skip(msg + ": skipped (CI and PETSTORE_REQUIRE_GALERA=1 require it)")
	}
	return t
}

// galeraNode is one MariaDB server of the cluster.
type galeraNode struct {
	name      string
	dir       string // my.cnf, data/, tmp/, mariadbd.log
	port      int    // clients
	gcommPort int    // group communication; gcommPort+1 receives IST
	sstPort   int    // receives SST
	checkPort int    // the HTTP health check HAProxy asks
	// admin is root on this node alone, for the test's own checks.
	admin *sql.DB
	tools galeraTools
	// owner is the test that started the cluster: each run of the node
	// is killed when it ends (not when the subtest that restarted it does).
	owner testing.TB

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has ended
	// logFrom is the size of the error log when the node last started:
	// what it logged since is the current run's.
	logFrom int64
	// checks are the health check's verdicts, as they changed.
	checks    []string
	lastCheck string
}

// galeraCluster is the three nodes, their checks and HAProxy.
type galeraCluster struct {
	dir   string
	nodes []*galeraNode
	tools galeraTools
}

// startGaleraCluster starts n nodes: the first bootstraps a new cluster,
// the others join it by SST, one after the other. It returns once all are
// synced; everything is stopped when the test ends.
func startGaleraCluster(tb testing.TB, n int) *galeraCluster {
	tb.Helper()
	tools := needGalera(tb)
	c := &galeraCluster{dir: tb.TempDir(), tools: tools}
	for i := range n {
		node := &galeraNode{name: fmt.Sprintf("node%d", i+1), dir: filepath.Join(c.dir, fmt.Sprintf("node%d", i+1)), tools: tools, owner: tb}
		node.port, node.sstPort = freeTCPPort(tb), freeTCPPort(tb)
		node.gcommPort = freeTCPPortPair(tb)
		for _, d := range []string{"data", "tmp"} {
			if err := os.MkdirAll(filepath.Join(node.dir, d), 0o700); err != nil {
				tb.Fatal(err)
			}
		}
		node.admin = openNodeDB(tb, node.port, "", "")
		c.nodes = append(c.nodes, node)
	}
	for _, node := range c.nodes {
		node.serveCheck(tb)
		if err := os.WriteFile(node.cnf(), []byte(c.nodeConfig(node)), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	first := c.nodes[0]
	out, err := exec.Command(tools.installDB, "--no-defaults", "--datadir="+filepath.Join(first.dir, "data"),
		"--tmpdir="+filepath.Join(first.dir, "tmp"), "--user="+mysqldUser(), "--auth-root-authentication-method=normal",
		"--skip-test-db").CombinedOutput()
	if err != nil {
		tb.Fatalf("mariadb-install-db: %v\n%s", err, testkit.Tail(string(out), 20))
	}
	first.start(tb, "--wsrep-new-cluster")
	first.waitSynced(tb, time.Minute)
	for _, node := range c.nodes[1:] {
		// An empty data directory: the node gets the whole state by SST.
		node.start(tb)
		node.waitSynced(tb, 2*time.Minute)
	}
	return c
}

// nodeConfig is the option file of a node: what a Debian operator puts in
// /etc/mysql/mariadb.conf.d/60-galera.cnf, with this node's paths and
// ports. Its [galera] section is the one docs/operations.md recommends.
func (c *galeraCluster) nodeConfig(n *galeraNode) string {
	var peers []string
	for _, p := range c.nodes {
		peers = append(peers, "127.0.0.1:"+strconv.Itoa(p.gcommPort))
	}
	return fmt.Sprintf(`[mysqld]
datadir=%[1]s/data
tmpdir=%[1]s/tmp
socket=%[1]s/mysqld.sock
pid-file=%[1]s/mysqld.pid
log-error=%[1]s/mariadbd.log
user=%[2]s
bind-address=127.0.0.1
port=%[3]d
skip-name-resolve
character-set-server=utf8mb4
collation-server=utf8mb4_unicode_ci
max-connections=500
innodb-buffer-pool-size=128M
# Durability comes from the other nodes: a commit is replicated before it
# is acknowledged.
innodb-flush-log-at-trx-commit=2

[galera]
wsrep_on=ON
wsrep_provider=%[4]s
wsrep_cluster_name=petstore
wsrep_cluster_address=gcomm://%[5]s
wsrep_node_name=%[6]s
wsrep_node_address=127.0.0.1:%[7]d
wsrep_node_incoming_address=127.0.0.1:%[3]d
wsrep_provider_options="base_port=%[7]d;gcache.size=128M"
wsrep_sst_method=mariabackup
wsrep_sst_auth=root:
wsrep_sst_receive_address=127.0.0.1:%[8]d
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
# The default: each node takes ids n, n+k, n+2k... in a cluster of k nodes.
wsrep_auto_increment_control=ON

[sst]
# The SST script's log goes to the error log (not syslog), and is not
# archived under /tmp.
sst-syslog=-1
sst-log-archive=0
`, n.dir, mysqldUser(), n.port, c.tools.provider, strings.Join(peers, ","), n.name, n.gcommPort, n.sstPort)
}

func (n *galeraNode) cnf() string     { return filepath.Join(n.dir, "my.cnf") }
func (n *galeraNode) logPath() string { return filepath.Join(n.dir, "mariadbd.log") }

// start starts the node's mariadbd with extra options, in a process group
// of its own that is killed when the test that started the cluster ends.
func (n *galeraNode) start(tb testing.TB, extra ...string) {
	tb.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if st, err := os.Stat(n.logPath()); err == nil {
		n.logFrom = st.Size()
	}
	out, err := os.OpenFile(filepath.Join(n.dir, "stdout.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(n.tools.mysqld, append([]string{"--defaults-file=" + n.cnf()}, extra...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", n.name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	n.cmd, n.exited = cmd, exited
	owner := n.owner
	owner.Cleanup(func() {
		killGroup(cmd, exited)
		n.mu.Lock()
		last := n.cmd == cmd
		n.mu.Unlock()
		if owner.Failed() && last {
			owner.Logf("%s error log (last lines):\n%s", n.name, testkit.Tail(n.log(), 30))
		}
	})
}

// killGroup sends SIGKILL to the process group of cmd and waits until cmd
// has ended (bounded: a zombie is not worth hanging the test for).
func killGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
	}
}

// kill ends the node as a lost machine ends: SIGKILL to mariadbd and
// whatever it runs (SST helpers), at once. It returns when it has ended.
func (n *galeraNode) kill(tb testing.TB) time.Time {
	tb.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	at := time.Now()
	killGroup(n.cmd, n.exited)
	select {
	case <-n.exited:
	default:
		tb.Fatalf("%s did not end within 10 s of SIGKILL", n.name)
	}
	return at
}

// recoveredPosition is what `mariadbd --wsrep-recover` logs: the last
// transaction the node committed, from InnoDB.
var recoveredPosition = regexp.MustCompile(`WSREP: Recovered position: ([0-9a-f-]{36}:-?\d+)\s`)

// restart brings a killed node back as its service does (the galera_recovery
// step of Debian's systemd unit): it recovers the node's last committed
// position from InnoDB, then starts it there, so that the cluster can send
// it only what it missed (IST) rather than everything (SST).
func (n *galeraNode) restart(tb testing.TB) {
	tb.Helper()
	recoverLog := filepath.Join(n.dir, "recover.log")
	os.Remove(recoverLog)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.tools.mysqld, "--defaults-file="+n.cnf(), "--wsrep-recover", "--log-error="+recoverLog)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s: mariadbd --wsrep-recover: %v\n%s", n.name, err, out)
	}
	b, _ := os.ReadFile(recoverLog)
	m := recoveredPosition.FindSubmatch(b)
	if m == nil {
		tb.Fatalf("%s: --wsrep-recover logged no position:\n%s", n.name, testkit.Tail(string(b), 20))
	}
	n.start(tb, "--wsrep-start-position="+string(m[1]))
}

// log is the node's error log.
func (n *galeraNode) log() string {
	b, _ := os.ReadFile(n.logPath())
	return string(b)
}

// logSinceStart is what the node logged since it last started.
func (n *galeraNode) logSinceStart() string {
	n.mu.Lock()
	from := n.logFrom
	n.mu.Unlock()
	b := n.log()
	if int(from) > len(b) {
		return ""
	}
	return b[from:]
}

// running reports whether the node's process is alive.
func (n *galeraNode) running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// status returns one of the node's status variables (wsrep_local_state,
// wsrep_cluster_size, ...), or an error if it does not answer.
func (n *galeraNode) status(ctx context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var v string
	err := n.admin.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?", strings.ToUpper(name)).Scan(&v)
	return v, err
}

// wsrepSynced is wsrep_local_state of a node that is synced with the
// cluster: the only state in which it should take clients.
const wsrepSynced = "4"

// waitSynced waits until the node is synced, and returns how long that
// took. It fails the test if the node exits or the time passes first.
func (n *galeraNode) waitSynced(tb testing.TB, limit time.Duration) time.Duration {
	tb.Helper()
	start := time.Now()
	for {
		state, err := n.status(context.Background(), "wsrep_local_state")
		if err == nil && state == wsrepSynced {
			return time.Since(start)
		}
		if !n.running() {
			tb.Fatalf("%s exited before it was synced:\n%s", n.name, testkit.Tail(n.logSinceStart(), 40))
		}
		if time.Since(start) > limit {
			tb.Fatalf("%s not synced within %s (state %q, %v):\n%s", n.name, limit, state, err, testkit.Tail(n.logSinceStart(), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serveCheck serves the node's health check on a loopback port until the
// test ends: 200 while the node is synced and takes queries, 503 otherwise
// (down, joining, donor, or rejecting queries). It is what Percona's
// clustercheck script does, for HAProxy's `option httpchk`: a TCP or
// MySQL-protocol check would pass a node that accepts connections but is
// still receiving its state, or has left the primary component.
func (n *galeraNode) serveCheck(tb testing.TB) {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	n.checkPort = l.Addr().(*net.TCPAddr).Port
	db := openNodeDB(tb, n.port, "", "")
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		var state, reject string
		err := db.QueryRowContext(ctx, "SELECT VARIABLE_VALUE, @@wsrep_reject_queries FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE'").
			Scan(&state, &reject)
		verdict := "synced"
		switch {
		case err != nil:
			verdict = "not answering: " + err.Error()
		case state != wsrepSynced || reject != "NONE":
			verdict = "not synced (wsrep_local_state " + state + ", wsrep_reject_queries " + reject + ")"
		}
		n.noteCheck(verdict)
		if verdict != "synced" {
			http.Error(w, verdict, http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "synced\n")
	})}
	go srv.Serve(l)
	tb.Cleanup(func() {
		srv.Close()
		if tb.Failed() {
			n.mu.Lock()
			tb.Logf("%s health check changes:\n%s", n.name, strings.Join(n.checks, "\n"))
			n.mu.Unlock()
		}
	})
}

// noteCheck keeps the health check's verdict when it differs from the
// last one, with the time, for the test's log.
func (n *galeraNode) noteCheck(verdict string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if verdict != n.lastCheck {
		n.checks = append(n.checks, time.Now().Format("15:04:05.000")+" "+verdict)
		n.lastCheck = verdict
	}
}

// openNodeDB opens root's pool on the node at port (database db, "" for
// none; its sessions' wsrep_sync_wait syncWait, "" for the server's),
// closed when the test ends. It is small and quick to give up: it is for
// checks, not load.
func openNodeDB(tb testing.TB, port int, db, syncWait string) *sql.DB {
	tb.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", "127.0.0.1:"+strconv.Itoa(port), db
	if syncWait != "" {
		cfg.Params = map[string]string{"wsrep_sync_wait": syncWait}
	}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = time.Second, 30*time.Second, 5*time.Second
	cfg.ParseTime = true
	// Connections die with their node; the driver's notes on them are noise.
	cfg.Logger = mysql.Logger(log.New(io.Discard, "", 0))
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	pool := sql.OpenDB(connector)
	pool.SetMaxOpenConns(4)
	pool.SetConnMaxIdleTime(5 * time.Second)
	tb.Cleanup(func() { pool.Close() })
	return pool
}

// haproxy is HAProxy in front of the cluster.
type haproxy struct {
	config string // the configuration file's text
	socket string // its admin socket
	ports  map[string]int
}

// haproxyFrontend is one listener of HAProxy: a port whose connections go
// to the first synced node of order, and to the next ones only while the
// first is down.
type haproxyFrontend struct {
	name  string
	order []*galeraNode
}

// startHAProxy writes HAProxy's configuration for the frontends and
// starts it; it returns once every frontend routes to its first node.
func (c *galeraCluster) startHAProxy(tb testing.TB, frontends []haproxyFrontend) *haproxy {
	tb.Helper()
	h := &haproxy{socket: filepath.Join(c.dir, "haproxy.sock"), ports: map[string]int{}}
	for _, f := range frontends {
		h.ports[f.name] = freeTCPPort(tb)
	}
	h.config = haproxyConfig(h.socket, frontends, h.ports)
	path := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(h.config), 0o600); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command(c.tools.haproxy, "-c", "-q", "-f", path).CombinedOutput(); err != nil {
		tb.Fatalf("haproxy -c: %v\n%s\n%s", err, out, h.config)
	}
	logPath := filepath.Join(c.dir, "haproxy.log")
	out, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	// -db: in the foreground, as a child of the test.
	cmd := exec.Command(c.tools.haproxy, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start haproxy: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		killGroup(cmd, exited)
		if tb.Failed() {
			b, _ := os.ReadFile(logPath)
			tb.Logf("haproxy output (last lines):\n%s", testkit.Tail(string(b), 30))
		}
	})
	for _, f := range frontends {
		h.waitServer(tb, f.name, f.order[0].name, "UP", 30*time.Second)
	}
	return h
}

// haproxyConfig is the configuration docs/operations.md shows: TCP mode; each
// node checked every half second over HTTP (serveCheck), two failures to
// mark it down and two successes to bring it back; the sessions of a node
// marked down closed at once (so no client stays on a node that left the
// cluster or is receiving its state); a connection refused by a dead node
// sent to another; and client and server timeouts longer than petstore's
// pooled connections live (DATABASE_CONN_MAX_LIFETIME, 30 minutes).
func haproxyConfig(socket string, frontends []haproxyFrontend, ports map[string]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    stats socket %s mode 600 level admin
    maxconn 2000

defaults
    mode tcp
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout check 1s
    retries 3
    option redispatch
    option httpchk GET /
    http-check expect status 200
    default-server inter 500ms fastinter 100ms fall 2 rise 2 on-marked-down shutdown-sessions observe layer4 error-limit 3 on-error mark-down
`, socket)
	for _, f := range frontends {
		fmt.Fprintf(&b, "\nlisten %s\n    bind 127.0.0.1:%d\n", f.name, ports[f.name])
		for i, n := range f.order {
			backup := ""
			if i > 0 {
				backup = " backup"
			}
			fmt.Fprintf(&b, "    server %s 127.0.0.1:%d check port %d%s\n", n.name, n.port, n.checkPort, backup)
		}
	}
	return b.String()
}

// serverStates returns the state HAProxy gives each server of each
// frontend ("UP", "DOWN", "UP 1/2", ...), by "frontend/server".
func (h *haproxy) serverStates() (map[string]string, error) {
	conn, err := net.DialTimeout("unix", h.socket, time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(b), "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("haproxy stats: %v: %q", err, b)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	states := map[string]string{}
	for _, row := range rows[1:] {
		if len(row) > col["status"] {
			states[row[col["pxname"]]+"/"+row[col["svname"]]] = row[col["status"]]
		}
	}
	return states, nil
}

// waitServer waits until HAProxy gives server of frontend the state want
// ("UP" or "DOWN", transitions such as "UP 1/2" not counted), and returns
// how long that took.
func (h *haproxy) waitServer(tb testing.TB, frontend, server, want string, limit time.Duration) time.Duration {
	tb.Helper()
	start := time.Now()
	var last string
	for {
		states, err := h.serverStates()
		if last = states[frontend+"/"+server]; err == nil && last == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			tb.Fatalf("haproxy: %s/%s is %q, not %s within %s (%v)", frontend, server, last, want, limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeTCPPort returns a loopback port that was free a moment ago, below
// the range the kernel takes source ports of outgoing connections from
// (ip_local_port_range): the nodes open and close connections all the
// time, and one of them could take a port chosen there before its server
// binds it (seen with Galera's IST port).
func freeTCPPort(tb testing.TB) int {
	tb.Helper()
	return freePorts(tb, 1)
}

// freeTCPPortPair returns a port p such that p and p+1 were both free: a
// node's group communication takes its base port and, for IST, the next.
func freeTCPPortPair(tb testing.TB) int {
	tb.Helper()
	return freePorts(tb, 2)
}

// freePorts returns the first of n consecutive free ports (see
// freeTCPPort).
func freePorts(tb testing.TB, n int) int {
	tb.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 12000 {
				low = v
			}
		}
	}
	for range 200 {
		p := 10000 + rand.N(low-10000-n)
		free := true
		for i := range n {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+i))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return p
		}
	}
	tb.Fatalf("no %d consecutive free ports on loopback below %d", n, low)
	return 0
}

// mysqldUser is the account mariadbd runs as: this process's (root must
// be named with --user=root).
func mysqldUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Geteuid())
}
