package webhooks

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// refusedAddrs is one address or more of every refused class, in each form
// that reaches it.
var refusedAddrs = []struct {
	addr  string
	class string
}{
	{"127.0.0.1", "loopback"},
	{"127.255.255.254", "loopback"},
	{"::1", "loopback"},
	{"10.0.0.1", "private"},
	{"172.16.0.1", "private"},
	{"172.31.255.255", "private"},
	{"192.168.1.1", "private"},
	{"fc00::1", "private"},
	{"fd12:3456::1", "private"},
	{"fec0::1", "private"},
	{"169.254.169.254", "link-local"},
	{"169.254.0.1", "link-local"},
	{"fe80::1", "link-local"},
	{"fe80::1%eth0", "link-local"},
	{"100.64.0.1", "shared"},
	{"100.127.255.254", "shared"},
	{"224.0.0.1", "multicast"},
	{"239.255.255.250", "multicast"},
	{"ff02::1", "multicast"},
	{"0.0.0.0", "unspecified"},
	{"::", "unspecified"},
	{"0.1.2.3", "this-network"},
	{"255.255.255.255", "broadcast"},
	{"240.0.0.1", "reserved"},
	{"255.255.255.254", "reserved"},
	{"::127.0.0.1", "reserved"},
	// IPv4-mapped IPv6 is the IPv4 address.
	{"::ffff:127.0.0.1", "loopback"},
	{"::ffff:10.1.2.3", "private"},
	{"::ffff:169.254.169.254", "link-local"},
	{"::ffff:100.64.0.1", "shared"},
	{"::ffff:0.0.0.0", "unspecified"},
	// NAT64 and 6to4 end at the IPv4 address they carry.
	{"64:ff9b::127.0.0.1", "loopback"},
	{"64:ff9b::a9fe:a9fe", "link-local"},
	{"64:ff9b::192.168.0.1", "private"},
	{"2002:7f00:1::", "loopback"},
	{"2002:a00:1::1", "private"},
	{"2002:a9fe:a9fe::1", "link-local"},
	{"2002:6440:1::", "shared"},
}

var allowedAddrs = []string{
	"93.184.216.34",
	"1.1.1.1",
	"8.8.8.8",
	"172.32.0.1",
	"100.128.0.1",
	"169.255.0.1",
	"223.255.255.255",
	"2606:4700::1",
	"2001:4860:4860::8888",
	"::ffff:93.184.216.34",
	"64:ff9b::5db8:d822",
	"2002:5db8:d822::1",
}

func TestRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range refusedAddrs {
		t.Run(tc.addr, func(t *testing.T) {
			class, refused := Refused(netip.MustParseAddr(tc.addr))
			if !refused || class != tc.class {
				t.Errorf("Refused(%s) = %q, %v; want %q, true", tc.addr, class, refused, tc.class)
			}
		})
	}
	for _, addr := range allowedAddrs {
		t.Run(addr, func(t *testing.T) {
			if class, refused := Refused(netip.MustParseAddr(addr)); refused {
				t.Errorf("Refused(%s) = %q, true; want it allowed", addr, class)
			}
		})
	}
	t.Run("zero Addr", func(t *testing.T) {
		if _, refused := Refused(netip.Addr{}); !refused {
			t.Error("the zero Addr is allowed; want it refused")
		}
	})
}

// hostOf puts an address in a URL's host form.
func hostOf(addr string) string {
	if strings.Contains(addr, ":") {
		return "[" + strings.ReplaceAll(addr, "%", "%25") + "]"
	}
	return addr
}

func TestCheckURLRefusesAddressClasses(t *testing.T) {
	t.Parallel()
	for _, tc := range refusedAddrs {
		raw := "https://" + hostOf(tc.addr) + ":8443/hooks"
		t.Run(raw, func(t *testing.T) {
			_, err := CheckURL(raw, false)
			if err == nil {
				t.Fatalf("CheckURL(%q) accepted it; want %s refused", raw, tc.class)
			}
			assertRefusal(t, err, classPhrase[tc.class])
			if _, err := CheckURL(raw, true); err != nil {
				t.Errorf("CheckURL(%q, allowPrivate) = %v; want it accepted", raw, err)
			}
		})
	}
}

func assertRefusal(t testing.TB, err error, phrase string) {
	t.Helper()
	if !errors.Is(err, ErrRefusedAddress) {
		t.Errorf("error %q is not ErrRefusedAddress", err)
	}
	for _, want := range []string{"resolves to " + phrase, "webhooks may not reach the server's own network", "Set WEBHOOK_ALLOW_PRIVATE=true to allow it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestCheckURLRefusesLocalhostAndOddIPv4(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, phrase string }{
		{"http://localhost/", "a loopback address"},
		{"http://LocalHost:8080/", "a loopback address"},
		{"http://localhost./", "a loopback address"},
		{"http://api.localhost/hooks", "a loopback address"},
		{"http://a.b.LOCALHOST./", "a loopback address"},
		// Spellings inet_aton reads as an address (glibc, so Go with the
		// cgo resolver, dials each of these as 127.0.0.1).
		{"http://2130706433/", "a loopback address"},
		{"http://0x7f000001/", "a loopback address"},
		{"http://0x7f.1/", "a loopback address"},
		{"http://127.1/", "a loopback address"},
		{"http://0177.0.0.1/", "a loopback address"},
		{"http://017700000001/", "a loopback address"},
		{"http://127.000.000.001/", "a loopback address"},
		{"http://0x7f.0x0.0x0.0x1/", "a loopback address"},
		{"http://127.0.0.1./", "a loopback address"},
		{"http://0/", "the unspecified address"},
		{"http://0x/", "the unspecified address"},
		{"http://10.1/", "a private address"},
		{"http://0xa9.254.0xa9fe/", "a link-local address"},
		{"http://0xa9fea9fe/", "a link-local address"},
		{"http://4294967295/", "the broadcast address"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := CheckURL(tc.raw, false)
			if err == nil {
				t.Fatalf("CheckURL(%q) accepted it", tc.raw)
			}
			assertRefusal(t, err, tc.phrase)
		})
	}
}

func TestCheckURLAccepts(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"https://93.184.216.34/hooks",
		"http://93.184.216.34:8080/",
		"https://[2606:4700::1]/hooks",
		"https://[2606:4700::1]:8443/hooks?x=1",
		"https://example.com/webhooks/petstore?token=abc",
		"HTTPS://Example.COM/",
		"  https://example.com/hooks\n",
		"https://localhost.example.com/",
		"https://mylocalhost/",
		"https://1password.com/",
		"https://0x7f.example/",
		"https://example.com:65535/",
		"https://xn--bcher-kva.example/",
	} {
		t.Run(raw, func(t *testing.T) {
			u, err := CheckURL(raw, false)
			if err != nil {
				t.Fatalf("CheckURL(%q) = %v; want it accepted", raw, err)
			}
			if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
				t.Errorf("CheckURL(%q) = %v; want the parsed URL", raw, u)
			}
		})
	}
}

func TestCheckURLRefusesMalformed(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", MaxURLLength-len("https://example.com/")+1)
	for _, tc := range []struct{ name, raw, want string }{
		{"empty", "", "Enter the URL"},
		{"blank", "   ", "Enter the URL"},
		{"ftp", "ftp://example.com/hooks", "start with https:// or http://"},
		{"javascript", "javascript:alert(1)", "start with https:// or http://"},
		{"file", "file:///etc/passwd", "start with https:// or http://"},
		{"relative path", "/hooks", "start with https:// or http://"},
		{"scheme-relative", "//example.com/hooks", "start with https:// or http://"},
		{"bare host", "example.com/hooks", "start with https:// or http://"},
		{"no host", "https:///hooks", "must name a host"},
		{"port only", "https://:8443/hooks", "must name a host"},
		{"opaque", "https:example.com", "must name a host"},
		{"user and password", "https://user:pass@example.com/", "user name or password"},
		{"user only", "https://user@example.com/", "user name or password"},
		{"empty user info", "https://@example.com/", "user name or password"},
		{"user info hiding a loopback host", "https://example.com@127.0.0.1/", "user name or password"},
		{"fragment", "https://example.com/hooks#x", "fragment"},
		{"empty fragment", "https://example.com/hooks#", "fragment"},
		{"too long", long, "at most 2000"},
		{"port zero", "https://example.com:0/", "use 1 to 65535"},
		{"port too big", "https://example.com:65536/", "use 1 to 65535"},
		{"bad escape", "https://example.com/%zz", "cannot be read"},
		{"five parts", "http://1.2.3.4.5/", "neither a host name nor an IPv4 address"},
		{"part too big", "http://256.0.0.1/", "neither a host name nor an IPv4 address"},
		{"bad octal", "http://08.0.0.1/", "neither a host name nor an IPv4 address"},
		{"numeric top-level domain", "http://example.123/", "neither a host name nor an IPv4 address"},
		{"too big", "http://4294967296/", "neither a host name nor an IPv4 address"},
		{"odd spelling of a public address", "http://1572395042/", "Write the host 1572395042 as 93.184.216.34"},
		{"octal of a public address", "http://0135.0270.0330.042/", "as 93.184.216.34"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := CheckURL(tc.raw, false)
			if err == nil {
				t.Fatalf("CheckURL(%q) = %v; want it refused", tc.raw, u)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckURL(%q) = %q; want it to say %q", tc.raw, err, tc.want)
			}
			if errors.Is(err, ErrRefusedAddress) {
				t.Errorf("CheckURL(%q) = %q is ErrRefusedAddress; want a plain refusal", tc.raw, err)
			}
			if _, err := CheckURL(tc.raw, true); err == nil {
				t.Errorf("CheckURL(%q, allowPrivate) accepted it; allowPrivate is only about addresses", tc.raw)
			}
		})
	}
	t.Run("exactly the limit", func(t *testing.T) {
		raw := long[:MaxURLLength]
		if _, err := CheckURL(raw, false); err != nil {
			t.Errorf("CheckURL of %d characters = %v; want it accepted", len(raw), err)
		}
	})
}

// TestCheckURLAllowPrivate: with the setting on, names and odd spellings of
// private addresses pass, except that an odd spelling still asks for the
// plain one.
func TestCheckURLAllowPrivate(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"http://localhost:8080/", "http://127.0.0.1:8080/", "http://[::1]/", "http://169.254.169.254/", "http://api.localhost/"} {
		if _, err := CheckURL(raw, true); err != nil {
			t.Errorf("CheckURL(%q, allowPrivate) = %v; want it accepted", raw, err)
		}
	}
	_, err := CheckURL("http://127.1/", true)
	if err == nil || !strings.Contains(err.Error(), "as 127.0.0.1") {
		t.Errorf("CheckURL(http://127.1/, allowPrivate) = %v; want it to ask for 127.0.0.1", err)
	}
}

// receiver is a real HTTP server on loopback that counts the connections
// made to it and the requests it answers.
type receiver struct {
	*httptest.Server
	conns, requests atomic.Int64
}

func newReceiver(t testing.TB, h http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		h(w, req)
	}))
	r.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.Start()
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) port() string { return r.URL[strings.LastIndexByte(r.URL, ':')+1:] }

func (r *receiver) assertUntouched(t testing.TB) {
	t.Helper()
	if c, n := r.conns.Load(), r.requests.Load(); c != 0 || n != 0 {
		t.Errorf("the receiver saw %d connections and %d requests; want none", c, n)
	}
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

func post(t testing.TB, c *http.Client, url string) (*http.Response, error) {
	t.Helper()
	t.Cleanup(c.CloseIdleConnections)
	resp, err := c.Post(url, "application/json", strings.NewReader(`{"type":"ping"}`))
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

func assertDialRefused(t testing.TB, err error, phrase string) {
	t.Helper()
	if err == nil {
		t.Fatal("the POST was made; want it refused")
	}
	if !errors.Is(err, ErrRefusedAddress) {
		t.Errorf("error %q is not ErrRefusedAddress", err)
	}
	if !strings.Contains(err.Error(), phrase) || !strings.Contains(err.Error(), "WEBHOOK_ALLOW_PRIVATE=true") {
		t.Errorf("error %q does not name %q and the setting", err, phrase)
	}
}

func TestClientRefusesLoopbackBeforeConnecting(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			r := newReceiver(t, ok)
			_, err := post(t, NewClient(5*time.Second, false), "http://"+host+":"+r.port()+"/hooks")
			assertDialRefused(t, err, "a loopback address")
			r.assertUntouched(t)

			resp, err := post(t, NewClient(5*time.Second, true), "http://"+host+":"+r.port()+"/hooks")
			if err != nil {
				t.Fatalf("with allowPrivate the POST failed: %v", err)
			}
			if resp.StatusCode != http.StatusNoContent || r.requests.Load() != 1 {
				t.Errorf("with allowPrivate: status %d, %d requests received; want 204 and 1", resp.StatusCode, r.requests.Load())
			}
		})
	}
}

// fakeDNS answers every A query with ip and every other query with no
// records, as a name an attacker controls would resolve.
func fakeDNS(t testing.TB, ip netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], ip); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", pc.LocalAddr().String())
		},
	}
}

// dnsAnswer builds the reply to query (RFC 1035 section 4): its header and
// question, and for an A question one record holding ip.
func dnsAnswer(query []byte, ip netip.Addr) []byte {
	if len(query) < 12 {
		return nil
	}
	end := 12
	for end < len(query) && query[end] != 0 {
		end += int(query[end]) + 1
	}
	end += 5 // the root label, QTYPE and QCLASS
	if end > len(query) {
		return nil
	}
	isA := binary.BigEndian.Uint16(query[end-4:]) == 1
	resp := append([]byte(nil), query[:2]...)               // ID
	resp = append(resp, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0) // QR RD RA, QDCOUNT 1
	resp = append(resp, query[12:end]...)
	if isA {
		resp[7] = 1 // ANCOUNT
		a := ip.As4()
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, a[:]...)
	}
	return resp
}

func TestClientRefusesANameResolvingToLoopback(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, ok)
	resolver := fakeDNS(t, netip.MustParseAddr("127.0.0.1"))
	url := "http://partner.example.test:" + r.port() + "/hooks"
	if _, err := CheckURL(url, false); err != nil {
		t.Fatalf("CheckURL(%q) = %v; a name is not resolved there", url, err)
	}

	_, err := post(t, newClient(5*time.Second, false, resolver), url)
	assertDialRefused(t, err, "127.0.0.1 is a loopback address")
	r.assertUntouched(t)

	resp, err := post(t, newClient(5*time.Second, true, resolver), url)
	if err != nil {
		t.Fatalf("with allowPrivate the POST failed: %v", err)
	}
	if resp.StatusCode != http.StatusNoContent || r.requests.Load() != 1 {
		t.Errorf("with allowPrivate: status %d, %d requests received; want 204 and 1", resp.StatusCode, r.requests.Load())
	}
}

func TestClientRefusesPrivateAndMetadata(t *testing.T) {
	t.Parallel()
	// Nothing listens there, or must not be reached: the refusal has to come
	// before the connection is tried.
	for _, tc := range []struct{ url, phrase string }{
		{"http://169.254.169.254/latest/meta-data/", "a link-local address"},
		{"http://10.0.0.1:9/", "a private address"},
		{"http://[::ffff:127.0.0.1]:9/", "a loopback address"},
		{"http://0.0.0.0:9/", "the unspecified address"},
		{"http://[::]:9/", "the unspecified address"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := post(t, NewClient(5*time.Second, false), tc.url)
			assertDialRefused(t, err, tc.phrase)
		})
	}
}

// TestClientIgnoresProxyEnvironment: through a proxy the proxy is the
// address dialled, so the check would judge the proxy, not the destination.
// The destination is a name, since environment proxies never take loopback
// addresses or localhost.
func TestClientIgnoresProxyEnvironment(t *testing.T) {
	proxy := newReceiver(t, ok)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	r := newReceiver(t, ok)
	c := newClient(5*time.Second, true, fakeDNS(t, netip.MustParseAddr("127.0.0.1")))
	if _, err := post(t, c, "http://partner.example.test:"+r.port()+"/"); err != nil {
		t.Fatal(err)
	}
	if proxy.requests.Load() != 0 || r.requests.Load() != 1 {
		t.Errorf("proxy got %d requests, receiver %d; want 0 and 1", proxy.requests.Load(), r.requests.Load())
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	target := newReceiver(t, ok)
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target.URL+"/elsewhere", http.StatusFound)
	})
	resp, err := post(t, NewClient(5*time.Second, true), r.URL+"/hooks")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status %d; want the 302 itself", resp.StatusCode)
	}
	target.assertUntouched(t)
}

func TestClientTimesOutAHangingReceiver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		h    func(release <-chan struct{}) http.HandlerFunc
	}{
		{"no headers", func(release <-chan struct{}) http.HandlerFunc {
			return func(http.ResponseWriter, *http.Request) { <-release }
		}},
		{"endless body", func(release <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				<-release
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			r := newReceiver(t, tc.h(release))
			t.Cleanup(func() { close(release) }) // before r.Close, which waits for handlers
			done := make(chan error, 1)
			go func() {
				resp, err := post(t, NewClient(300*time.Millisecond, true), r.URL)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the POST still runs after 10 s; want it cut at its timeout")
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("error %v; want a timeout", err)
			}
		})
	}
}

// endless is a body as good as endless: it ends after a mebibyte only so
// that a reader that reads it all fails the test instead of hanging it.
type endless struct {
	read   int64
	closed bool
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= 1<<20 {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'x'
	}
	e.read += int64(len(p))
	return len(p), nil
}

func (e *endless) Close() error { e.closed = true; return nil }

func TestReadLimited(t *testing.T) {
	t.Parallel()
	t.Run("endless body", func(t *testing.T) {
		body := &endless{}
		b, err := ReadLimited(body, 1024)
		if err != nil || len(b) != 1024 {
			t.Errorf("ReadLimited = %d bytes, %v; want 1024, nil", len(b), err)
		}
		if body.read > 1024+drainLimit {
			t.Errorf("read %d bytes of the body; want at most a few kilobytes past 1024", body.read)
		}
		if !body.closed {
			t.Error("the body was not closed")
		}
	})
	t.Run("short body", func(t *testing.T) {
		b, err := ReadLimited(io.NopCloser(strings.NewReader("accepted")), 1024)
		if err != nil || string(b) != "accepted" {
			t.Errorf("ReadLimited = %q, %v; want accepted", b, err)
		}
	})
	t.Run("endless body over HTTP", func(t *testing.T) {
		release := make(chan struct{})
		r := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			chunk := []byte(strings.Repeat("y", 32<<10))
			for {
				select {
				case <-release:
					return
				default:
				}
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		})
		t.Cleanup(func() { close(release) })
		resp, err := post(t, NewClient(5*time.Second, true), r.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReadLimited(resp.Body, 512)
		if err != nil || len(b) != 512 || resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("ReadLimited = %d bytes, %v, status %d; want 512 bytes of the 500", len(b), err, resp.StatusCode)
		}
	})
}
