package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/webhooks"
)

// WebhookReceiver is a partner's webhook receiver on loopback, for tests
// of the deliveries running instances make: a real HTTP server that
// records each request as it came and answers 204 at once, or holds the
// requests it was told to until Release or until the sender goes away
// (as a receiver that hangs does). It never checks anything itself: a
// test compares what it recorded with the feed, so that a request that
// should not have come is seen too.
type WebhookReceiver struct {
	URL string
	srv *httptest.Server

	hold func(n int) bool
	held chan WebhookRequest

	mu      sync.Mutex
	got     []WebhookRequest
	release chan struct{} // closed by Release: answers the requests held so far
	closed  bool          // the test ended: nothing more is held
}

// WebhookRequest is one request a WebhookReceiver got.
type WebhookRequest struct {
	N                    int // its place in arrival order, from 1
	Method, ContentType  string
	EventID, EventType   string
	Signature, UserAgent string
	Body                 []byte
	RemoteAddr           string    // the sender's end of the connection
	At                   time.Time // when it arrived
	// Answered says a 204 was written; a held request whose sender went
	// away first was not (its delivery was cut).
	Answered bool
	Ended    time.Time // when it was answered or the sender went away
}

// NewWebhookReceiver starts a receiver; hold (nil: none) says whether the
// n-th request, from 1, is held. It stops when the test ends.
func NewWebhookReceiver(tb testing.TB, hold func(n int) bool) *WebhookReceiver {
	tb.Helper()
	r := &WebhookReceiver{hold: hold, held: make(chan WebhookRequest, 16), release: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	tb.Cleanup(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.Release()
		r.srv.Close()
	})
	return r
}

func (r *WebhookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return // the sender went away mid-body: nothing arrived
	}
	h := req.Header
	got := WebhookRequest{Method: req.Method, ContentType: h.Get("Content-Type"), EventID: h.Get("Petstore-Event-Id"),
		EventType: h.Get("Petstore-Event-Type"), Signature: h.Get(webhooks.SignatureHeader), UserAgent: h.Get("User-Agent"),
		Body: body, RemoteAddr: req.RemoteAddr, At: time.Now()}
	r.mu.Lock()
	got.N = len(r.got) + 1
	r.got = append(r.got, got)
	release, closed := r.release, r.closed
	r.mu.Unlock()
	if r.hold != nil && !closed && r.hold(got.N) {
		select {
		case r.held <- got:
		default:
		}
		select {
		case <-release:
		case <-req.Context().Done():
			r.end(got.N, false)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
	r.end(got.N, true)
}

// end notes how request n ended.
func (r *WebhookReceiver) end(n int, answered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[n-1].Answered, r.got[n-1].Ended = answered, time.Now()
}

// Held gives each held request as it arrives.
func (r *WebhookReceiver) Held() <-chan WebhookRequest { return r.held }

// Release answers the requests held so far; those held later wait for
// the next Release.
func (r *WebhookReceiver) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.release)
	r.release = make(chan struct{})
}

// Requests returns what the receiver got so far, in arrival order.
func (r *WebhookReceiver) Requests() []WebhookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]WebhookRequest(nil), r.got...)
}

// AnsweredIDs counts the requests answered 204, by event id.
func (r *WebhookReceiver) AnsweredIDs() map[string]int {
	n := map[string]int{}
	for _, q := range r.Requests() {
		if q.Answered {
			n[q.EventID]++
		}
	}
	return n
}

// CheckSignature checks q's Petstore-Signature as a receiver holding
// secret does when q arrives, with the five minutes' tolerance the partner
// guide suggests.
func (q WebhookRequest) CheckSignature(secret string) error {
	return webhooks.Verify(q.Signature, q.Body, secret, 5*time.Minute, q.At)
}

// Sender returns which of instances (children: StartBinary) holds the
// sending end of request q's connection, if it is still open: the kernel's
// socket table (/proc/net/tcp) says which socket it is, and the
// instances' descriptors (/proc/PID/fd) which process has it. This tells
// a test which instance is delivering, where nothing in the request or
// the database names the instance.
func (r *WebhookReceiver) Sender(q WebhookRequest, instances ...*Instance) (*Instance, error) {
	_, port, err := net.SplitHostPort(q.RemoteAddr)
	if err != nil {
		return nil, err
	}
	_, ours, err := net.SplitHostPort(r.srv.Listener.Addr().String())
	if err != nil {
		return nil, err
	}
	inode, err := clientSocket(port, ours)
	if err != nil {
		return nil, err
	}
	for _, inst := range instances {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", inst.Pid))
		if err != nil {
			continue // exited
		}
		for _, fd := range fds {
			if link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", inst.Pid, fd.Name())); link == "socket:["+inode+"]" {
				return inst, nil
			}
		}
	}
	return nil, fmt.Errorf("no instance holds the socket of %s (inode %s)", q.RemoteAddr, inode)
}

// clientSocket returns the inode of the TCP socket whose local port is
// local and remote port remote (decimal), from /proc/net/tcp and tcp6.
func clientSocket(local, remote string) (string, error) {
	lp, err1 := strconv.Atoi(local)
	rp, err2 := strconv.Atoi(remote)
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	want := func(addr string, port int) bool {
		_, hex, ok := strings.Cut(addr, ":")
		p, err := strconv.ParseUint(hex, 16, 16)
		return ok && err == nil && int(p) == port
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && want(fields[1], lp) && want(fields[2], rp) {
				f.Close()
				return fields[9], nil
			}
		}
		f.Close()
	}
	return "", fmt.Errorf("no socket from port %s to port %s in /proc/net/tcp", local, remote)
}
