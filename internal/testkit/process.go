package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"petstore/models/modelstest"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Result is what one command left behind.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Env turns a map into the getenv the program is given; the process
// environment is never read.
func Env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// WantCode fails the test when r did not exit with code.
func WantCode(tb testing.TB, r Result, code int) {
	tb.Helper()
	if r.Code != code {
		tb.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, code, r.Stdout, r.Stderr)
	}
}

// WantOneLine fails the test unless s is exactly one newline-terminated
// line, and returns that line.
func WantOneLine(tb testing.TB, what, s string) string {
	tb.Helper()
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		tb.Fatalf("%s is not exactly one line:\n%s", what, s)
	}
	return strings.TrimSuffix(s, "\n")
}

// LastLine returns the last line of s, without its newline.
func LastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// KeyPattern is the shape of an API key as printed: pst_, an 8-character
// lookup id, _, a 32-character secret.
var KeyPattern = regexp.MustCompile(`^pst_[a-z2-7]{8}_[a-z2-7]{32}$`)

// capture is output a running instance wrote so far.
type capture interface{ String() string }

// SyncBuffer is a bytes.Buffer safe to write from the server's goroutines
// while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// logFile is output a child process writes straight to a file.
type logFile string

func (f logFile) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}

// Instance is one running petstore: `petstore serve` in this process
// (StartInProcess) or the built binary as a child process (StartBinary).
// Whatever it is, it is ended when the test ends, and its output is logged
// if the test failed.
type Instance struct {
	Name           string
	Stdout, Stderr capture
	cmd            *exec.Cmd // the child process; nil in this process
	Pid            int       // the child process's id
	done           chan struct{}
	Code           int           // exit code, once done
	ExitedAt       time.Time     // once done
	Addr           string        // host:port, once listening
	Base           string        // http://addr, once listening
	terminate      func()        // asks it to stop, as SIGTERM does
	kill           func()        // ends it now
	stopLimit      time.Duration // how long Stop waits for the exit
}

// ListeningPattern finds the address in serve's listening line, in the text
// log format and in the JSON one.
var ListeningPattern = regexp.MustCompile(`(?:msg="petstore listening" addr=|"msg":"petstore listening","addr":")([^"\s]+)`)

// RetryWarning is the log line of one failed try to reach the database.
var RetryWarning = regexp.MustCompile(`(?m)^time=\S+ level=(?:INFO|WARN) msg="database not answering yet, retrying" .*\n`)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// Binary builds the petstore binary once per test binary, without
// cgo as the release is built, and returns its path. It is removed when the
// test binary ends.
func Binary(tb testing.TB) string {
	tb.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "petstore-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		modelstest.AtExit(func() { os.RemoveAll(dir) })
		// go test puts GOROOT/bin first on the PATH of the tests it runs.
		goBin, err := exec.LookPath("go")
		if err != nil {
			binaryErr = fmt.Errorf("the go command is not on PATH: %w", err)
			return
		}
		root, err := moduleRoot()
		if err != nil {
			binaryErr = err
			return
		}
		bin := filepath.Join(dir, "petstore")
		// The main package is the module's root, whichever package's
		// tests ask for the binary.
		build := exec.Command(goBin, "build", "-o", bin, ".")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("CGO_ENABLED=0 go build: %v\n%s", err, out)
			return
		}
		binaryPath = bin
	})
	if binaryErr != nil {
		tb.Fatal(binaryErr)
	}
	return binaryPath
}

// moduleRoot returns the directory of petstore's go.mod, asked of the go
// command so that it holds from any package's directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside petstore's module")
	}
	return filepath.Dir(gomod), nil
}

// RepoPath returns a path under the repository's root, where the tests of
// every package write their figures, screenshots and benchmark results
// (testdata/...), so that they are found in one place.
func RepoPath(tb testing.TB, elem ...string) string {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// StartInProcess runs fn, the product in this process, in a goroutine as an
// Instance named name. Stopping it cancels fn's context, as SIGTERM does to
// the binary; Stop waits at most 5 s for fn to return 0.
func StartInProcess(tb testing.TB, name string, fn func(ctx context.Context, stdout, stderr io.Writer) int) *Instance {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &SyncBuffer{}, &SyncBuffer{}
	p := &Instance{Name: name, Stdout: stdout, Stderr: stderr, done: make(chan struct{}),
		terminate: cancel, kill: cancel, stopLimit: 5 * time.Second}
	go func() { p.exit(fn(ctx, stdout, stderr)) }()
	p.endWithTest(tb)
	return p
}

// ProcEnv is the environment of a child process: vars, plus only what a
// process needs to run, so the developer's own DATABASE_URL and the like
// never leak in.
func ProcEnv(vars map[string]string) []string {
	var environ []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			environ = append(environ, k+"="+v)
		}
	}
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	return environ
}

// ServeVars is the environment of a serve process on databaseURL, on a
// free loopback port. The per-key rate limit is off: the fault tests load
// the service on purpose, and a 429 would hide what they look for.
func ServeVars(databaseURL string) map[string]string {
	return map[string]string{"DATABASE_URL": databaseURL, "LISTEN_ADDR": "127.0.0.1:0", "RATE_LIMIT_RPS": "0"}
}

// StartBinary starts the binary with args and the environment vars (see
// ProcEnv) as a child process; its output is kept in memory.
func StartBinary(tb testing.TB, name string, vars map[string]string, args ...string) *Instance {
	tb.Helper()
	return launchBinary(tb, name, vars, "", args)
}

// StartBinaryLogging is StartBinary with stdout and stderr written straight
// to the file logPath: a server under load would otherwise copy its request
// log through the test process, whose CPU time the load benchmark measures.
// The child is also killed if the test process dies, so that no server
// outlives a benchmark cut short.
func StartBinaryLogging(tb testing.TB, name string, vars map[string]string, logPath string, args ...string) *Instance {
	tb.Helper()
	return launchBinary(tb, name, vars, logPath, args)
}

func launchBinary(tb testing.TB, name string, vars map[string]string, logPath string, args []string) *Instance {
	tb.Helper()
	cmd := exec.Command(Binary(tb), args...)
	cmd.Env = ProcEnv(vars)
	p := &Instance{Name: name, cmd: cmd, done: make(chan struct{}), stopLimit: 20 * time.Second}
	if logPath == "" {
		stdout, stderr := &SyncBuffer{}, &SyncBuffer{}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		p.Stdout, p.Stderr = stdout, stderr
	} else {
		f, err := os.Create(logPath)
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close() // the child has its own descriptor
		cmd.Stdout, cmd.Stderr = f, f
		p.Stdout, p.Stderr = logFile(logPath), logFile(logPath)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	p.Pid = cmd.Process.Pid
	p.terminate = func() { cmd.Process.Signal(syscall.SIGTERM) }
	p.kill = func() { cmd.Process.Kill() }
	go func() {
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code == 0 {
			code = -1
		}
		p.exit(code)
	}()
	p.endWithTest(tb)
	return p
}

// ServeBinary starts `petstore serve` as a child process and waits until it
// listens.
func ServeBinary(tb testing.TB, name string, vars map[string]string) *Instance {
	tb.Helper()
	p := StartBinary(tb, name, vars, "serve")
	p.WaitListening(tb, time.Minute)
	return p
}

// RunBinary runs the binary once to its end.
func RunBinary(tb testing.TB, vars map[string]string, args ...string) Result {
	tb.Helper()
	p := StartBinary(tb, strings.Join(args, " "), vars, args...)
	code := p.Wait(tb, 2*time.Minute)
	return Result{Code: code, Stdout: p.Stdout.String(), Stderr: p.Stderr.String()}
}

// exit records the end of the instance with its exit code.
func (p *Instance) exit(code int) {
	p.Code, p.ExitedAt = code, time.Now()
	close(p.done)
}

// endWithTest ends the instance when the test ends, if the test has not
// stopped it, and logs its output if the test failed.
func (p *Instance) endWithTest(tb testing.TB) {
	tb.Cleanup(func() {
		if !p.Exited() {
			p.kill()
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
			}
		}
		if !tb.Failed() {
			return
		}
		if p.Stdout == p.Stderr {
			tb.Logf("%s output (last lines):\n%s", p.Name, Tail(p.Stderr.String(), 40))
			return
		}
		tb.Logf("%s stdout:\n%s\n%s stderr (last lines):\n%s", p.Name, p.Stdout, p.Name, Tail(p.Stderr.String(), 40))
	})
}

func (p *Instance) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitLog waits, at most limit, until the log (stderr) holds a match of re,
// and returns the first match and its submatches. It fails the test when
// the instance ends or the time passes first.
func (p *Instance) WaitLog(tb testing.TB, re *regexp.Regexp, limit time.Duration) []string {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		ended := p.Exited() // before reading: the log is complete once ended
		if m := re.FindStringSubmatch(p.Stderr.String()); m != nil {
			return m
		}
		if ended {
			tb.Fatalf("%s exited with %d before logging %s\nstdout:\n%s\nstderr:\n%s", p.Name, p.Code, re, p.Stdout, p.Stderr)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not log %s within %s\nstderr:\n%s", p.Name, re, limit, Tail(p.Stderr.String(), 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitListening waits for the listening log line and notes the address.
func (p *Instance) WaitListening(tb testing.TB, limit time.Duration) {
	tb.Helper()
	p.Addr = p.WaitLog(tb, ListeningPattern, limit)[1]
	p.Base = "http://" + p.Addr
}

// Signal sends sig to the child process and returns when it was sent.
func (p *Instance) Signal(tb testing.TB, sig os.Signal) time.Time {
	tb.Helper()
	if p.cmd == nil {
		tb.Fatalf("%s runs in this process: it cannot be sent %s", p.Name, sig)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		tb.Fatalf("signal %s: %v", p.Name, err)
	}
	return time.Now()
}

// Wait returns the exit code, failing the test if the instance runs longer
// than limit.
func (p *Instance) Wait(tb testing.TB, limit time.Duration) int {
	tb.Helper()
	select {
	case <-p.done:
		return p.Code
	case <-time.After(limit):
		tb.Fatalf("%s still running %s later\nstderr:\n%s", p.Name, limit, Tail(p.Stderr.String(), 40))
		return -1
	}
}

// Stop asks the instance to Stop as SIGTERM does and wants exit code 0:
// within 5 s in this process, within 20 s for the binary (the 15 s
// shutdown bound and a margin for the process to exit).
func (p *Instance) Stop(tb testing.TB) {
	tb.Helper()
	if p.Exited() {
		tb.Fatalf("%s had exited with %d before it was stopped\nstderr:\n%s", p.Name, p.Code, Tail(p.Stderr.String(), 40))
	}
	p.terminate()
	if code := p.Wait(tb, p.stopLimit); code != 0 {
		tb.Errorf("%s exited with %d when stopped, want 0\nstderr:\n%s", p.Name, code, Tail(p.Stderr.String(), 40))
	}
}

// The lines of the bootstrap block the first start prints: the account,
// the console's address, the API key and the curl example.
var (
	BootstrapAccount = regexp.MustCompile(`(?m)^\s+Username:\s+(\S+)\n\s+Password:\s+(\S+)$`)
	BootstrapConsole = regexp.MustCompile(`(?m)^\s+Admin console:\s+(http://\S+/admin)$`)
	BootstrapKey     = regexp.MustCompile(`(?m)^\s+API key:\s+(\S+)$`)
	BootstrapCurl    = regexp.MustCompile(`(?m)^\s+curl -H 'Authorization: Bearer (\S+)' (\S+)$`)
)

// Boot is what the first start printed.
type Boot struct{ Username, Password, Key string }

// BootstrapOf reads the bootstrap block a serve process printed.
func BootstrapOf(tb testing.TB, out string) Boot {
	tb.Helper()
	acct := BootstrapAccount.FindStringSubmatch(out)
	key := BootstrapKey.FindStringSubmatch(out)
	if acct == nil || key == nil {
		tb.Fatalf("no bootstrap block with account and key on stdout:\n%s", out)
	}
	return Boot{Username: acct[1], Password: acct[2], Key: key[1]}
}
