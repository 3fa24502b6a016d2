// Package webhooks holds what a delivery needs that is not storage: which
// destinations the service may reach, the HTTP client that enforces it, and
// the signature partners check.
//
// A webhook URL is typed by an admin but dialled by the server, from inside
// its own network. Left unchecked it would let anyone who can create an
// endpoint make the server POST to its database, its cloud metadata service
// or anything else only reachable from within (server-side request forgery).
// CheckURL refuses such URLs early with a message an admin understands; the
// guarantee is NewClient, which checks the address each connection is
// actually made to, after DNS, so a name that later resolves elsewhere (DNS
// rebinding) gains nothing.
package webhooks

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// MaxURLLength is the longest webhook URL CheckURL accepts, in characters:
// longer ones are almost always a paste gone wrong, and the URL is stored and
// shown on every delivery.
const MaxURLLength = 2000

// ErrRefusedAddress matches, with errors.Is, every refusal of a destination
// for its address class, from CheckURL or from a delivery's dial, so a caller
// can tell "not allowed" from "did not answer".
var ErrRefusedAddress = errors.New("destination address refused")

// The classes Refused names. A class is what an admin is told, so each has
// a phrase in classPhrase.
const (
	classLoopback    = "loopback"
	classPrivate     = "private"
	classLinkLocal   = "link-local"
	classShared      = "shared"
	classMulticast   = "multicast"
	classUnspecified = "unspecified"
	classThisNetwork = "this-network"
	classBroadcast   = "broadcast"
	classReserved    = "reserved"
	classInvalid     = "invalid"
)

var classPhrase = map[string]string{
	classLoopback:    "a loopback address",
	classPrivate:     "a private address",
	classLinkLocal:   "a link-local address (where cloud metadata services answer)",
	classShared:      "a shared (carrier-grade NAT) address",
	classMulticast:   "a multicast address",
	classUnspecified: "the unspecified address",
	classThisNetwork: `a "this network" address (0.0.0.0/8)`,
	classBroadcast:   "the broadcast address",
	classReserved:    "a reserved address",
	classInvalid:     "an invalid address",
}

type prefixClass struct {
	prefix netip.Prefix
	class  string
}

// refusedV4 and refusedV6 are searched in order, the first match wins: a
// single address is listed before the block that contains it.
var refusedV4 = []prefixClass{
	{netip.MustParsePrefix("0.0.0.0/32"), classUnspecified},
	{netip.MustParsePrefix("255.255.255.255/32"), classBroadcast},
	{netip.MustParsePrefix("0.0.0.0/8"), classThisNetwork},
	{netip.MustParsePrefix("127.0.0.0/8"), classLoopback},
	{netip.MustParsePrefix("10.0.0.0/8"), classPrivate},
	{netip.MustParsePrefix("172.16.0.0/12"), classPrivate},
	{netip.MustParsePrefix("192.168.0.0/16"), classPrivate},
	{netip.MustParsePrefix("169.254.0.0/16"), classLinkLocal},
	{netip.MustParsePrefix("100.64.0.0/10"), classShared},
	{netip.MustParsePrefix("224.0.0.0/4"), classMulticast},
	{netip.MustParsePrefix("240.0.0.0/4"), classReserved},
}

var refusedV6 = []prefixClass{
	{netip.MustParsePrefix("::/128"), classUnspecified},
	{netip.MustParsePrefix("::1/128"), classLoopback},
	// IPv4-compatible addresses (::a.b.c.d) are deprecated and reach no
	// public host; some stacks once tunnelled them to the embedded IPv4.
	{netip.MustParsePrefix("::/96"), classReserved},
	{netip.MustParsePrefix("fe80::/10"), classLinkLocal},
	// Site-local is deprecated but still routed inside some networks.
	{netip.MustParsePrefix("fec0::/10"), classPrivate},
	{netip.MustParsePrefix("fc00::/7"), classPrivate},
	{netip.MustParsePrefix("ff00::/8"), classMulticast},
}

// Translation prefixes whose packets end at an embedded IPv4 address, which
// is therefore the one to judge.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// Refused reports whether a delivery may not connect to ip, and the class
// that forbids it ("loopback", "private", "link-local", "shared",
// "multicast", "unspecified", "this-network", "broadcast", "reserved").
// Every such address leads back into the server's own network or to no
// single host. An IPv4-mapped IPv6 address is judged as its IPv4 address, and
// a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address by the IPv4 address it
// carries, since that is where its packets end. A zone is ignored. The zero
// Addr is refused as "invalid".
func Refused(ip netip.Addr) (class string, refused bool) {
	if !ip.IsValid() {
		return classInvalid, true
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return lookup(refusedV4, ip)
	}
	b := ip.As16()
	switch {
	case nat64Prefix.Contains(ip):
		if class, refused := lookup(refusedV4, netip.AddrFrom4([4]byte(b[12:16]))); refused {
			return class, true
		}
	case sixToFour.Contains(ip):
		if class, refused := lookup(refusedV4, netip.AddrFrom4([4]byte(b[2:6]))); refused {
			return class, true
		}
	}
	return lookup(refusedV6, ip)
}

func lookup(table []prefixClass, ip netip.Addr) (string, bool) {
	for _, pc := range table {
		if pc.prefix.Contains(ip) {
			return pc.class, true
		}
	}
	return "", false
}

// checkError is a refusal meant for an admin: a full sentence, shown as is.
type checkError struct {
	msg     string
	refused bool
}

func (e *checkError) Error() string { return e.msg }

// Is lets errors.Is(err, ErrRefusedAddress) single out refusals by class.
func (e *checkError) Is(target error) bool { return e.refused && target == ErrRefusedAddress }

func invalid(format string, args ...any) error {
	return &checkError{msg: fmt.Sprintf(format, args...)}
}

func refusedHost(host, class string) error {
	return &checkError{refused: true, msg: fmt.Sprintf("The host %s resolves to %s; webhooks may not reach the server's own network. "+
		"Set WEBHOOK_ALLOW_PRIVATE=true to allow it (tests, an intranet).", host, classPhrase[class])}
}

// CheckURL validates a webhook URL as an admin types it and returns it
// parsed: an absolute http or https URL with a host, no user name or
// password (the signature is what authenticates a delivery, and a password
// would be stored and shown in clear), no fragment (it is never sent), at
// most MaxURLLength characters. Unless allowPrivate, a literal IP address in
// a class Refused names, and the name localhost with its subdomains, are
// refused with a sentence naming the class. Other names are not resolved:
// what they resolve to may change, and NewClient checks every connection.
//
// A host that ends in a number is read as an IPv4 address the way inet_aton
// and browsers read it (2130706433, 0x7f.1 and 127.1 are all 127.0.0.1),
// since a resolver that follows inet_aton (glibc's, which Go uses when built
// with cgo and told to) dials it so. Such a spelling is refused even when the
// address is allowed: Go's own resolver looks it up as a name instead, so
// where it goes would depend on the build. The admin is told the plain form.
func CheckURL(raw string, allowPrivate bool) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, invalid("Enter the URL the events should be sent to.")
	}
	if n := utf8.RuneCountInString(raw); n > MaxURLLength {
		return nil, invalid("The URL is %d characters long; at most %d are allowed.", n, MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, invalid("The URL cannot be read: %v.", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, invalid("The URL must be absolute and start with https:// or http://.")
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, invalid("The URL must name a host, as in https://example.com/webhooks.")
	}
	if u.User != nil {
		return nil, invalid("The URL must not contain a user name or password: every delivery is signed with the endpoint's secret instead.")
	}
	if strings.Contains(raw, "#") {
		return nil, invalid("The URL must not contain a fragment (#…): it is never sent to the server.")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, invalid("The port %s is out of range: use 1 to 65535.", p)
		}
	}
	if err := checkHost(u.Hostname(), allowPrivate); err != nil {
		return nil, err
	}
	return u, nil
}

func checkHost(host string, allowPrivate bool) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if class, refused := Refused(ip); refused && !allowPrivate {
			return refusedHost(host, class)
		}
		return nil
	}
	if strings.Contains(host, ":") {
		return invalid("The host %s is not a valid IPv6 address.", host)
	}
	if endsInNumber(host) {
		ip, ok := parseIPv4Loose(host)
		if !ok {
			return invalid("The host %s is neither a host name nor an IPv4 address.", host)
		}
		if class, refused := Refused(ip); refused && !allowPrivate {
			return refusedHost(fmt.Sprintf("%s (%s)", host, ip), class)
		}
		return invalid("Write the host %s as %s: resolvers disagree on other spellings of an IPv4 address.", host, ip)
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if (name == "localhost" || strings.HasSuffix(name, ".localhost")) && !allowPrivate {
		// RFC 6761: these names are the machine itself, whatever DNS says.
		return refusedHost(host, classLoopback)
	}
	return nil
}

// endsInNumber is the URL standard's test for a host meant as IPv4: its
// last label (a trailing dot aside) is decimal digits or 0x and hex digits.
// No top-level domain is numeric, so no host name is lost.
func endsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if rest, ok := cutHexPrefix(last); ok {
		return strings.Trim(rest, "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

func cutHexPrefix(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:], true
	}
	return s, false
}

// parseIPv4Loose reads host as inet_aton does: one to four parts, each
// decimal, octal (a leading 0) or hex (0x), the last filling the bytes left,
// so 127.1 is 127.0.0.1. One trailing dot is allowed, as in the URL standard.
func parseIPv4Loose(host string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v = v<<8 | n
			continue
		}
		rest := 8 * uint(5-len(parts))
		if n >= 1<<rest {
			return netip.Addr{}, false
		}
		v = v<<rest | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	if rest, ok := cutHexPrefix(p); ok {
		if rest == "" {
			return 0, true
		}
		p, base = rest, 16
	} else if len(p) > 1 && p[0] == '0' {
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}

// dialRefusal is why a delivery's connection was not made.
type dialRefusal struct {
	addr  string
	class string
}

func (e *dialRefusal) Error() string {
	return fmt.Sprintf("refused: %s is %s; webhooks may not reach the server's own network (WEBHOOK_ALLOW_PRIVATE=true allows it)",
		e.addr, classPhrase[e.class])
}

func (e *dialRefusal) Is(target error) bool { return target == ErrRefusedAddress }

// refuseDial is a net.Dialer's ControlContext: it runs once the address is
// resolved and before connect, so it sees the very address that would be
// reached, whatever the URL named.
func refuseDial(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &dialRefusal{addr: address, class: classInvalid}
	}
	if class, refused := Refused(ap.Addr()); refused {
		return &dialRefusal{addr: ap.Addr().String(), class: class}
	}
	return nil
}

// maxResponseHeaderBytes bounds what a receiver can make the server hold for
// an answer whose only use is its status.
const maxResponseHeaderBytes = 16 << 10

// NewClient returns the HTTP client deliveries are made with. Unless
// allowPrivate, every connection is checked against Refused on the address
// actually dialled, after DNS, and a refused one fails before connecting with
// an error that names the class (errors.Is ErrRefusedAddress). Environment
// proxies are ignored: through a proxy the proxy is the address dialled and
// the check would judge the wrong host. Redirects are not followed (a 3xx is
// returned like any other answer that is not 2xx), so a receiver cannot
// bounce a delivery somewhere else. The whole attempt, body included, is
// bounded by timeout, which must be positive. TLS certificates are verified.
func NewClient(timeout time.Duration, allowPrivate bool) *http.Client {
	return newClient(timeout, allowPrivate, nil)
}

// newClient is NewClient with the resolver names are looked up with (nil:
// the system's), so tests can make a name resolve to a refused address.
func newClient(timeout time.Duration, allowPrivate bool, resolver *net.Resolver) *http.Client {
	if timeout <= 0 {
		panic("webhooks: NewClient needs a positive timeout")
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: resolver}
	if !allowPrivate {
		dialer.ControlContext = refuseDial
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// drainLimit is how much of a body past what is kept ReadLimited reads so
// that the connection can serve the next delivery; a longer remainder is
// dropped with the connection, which costs less than reading it.
const drainLimit = 4 << 10

// ReadLimited reads at most n bytes of body, the part of a receiver's answer
// worth keeping, and closes it. The rest is never read beyond a few
// kilobytes, so a receiver that answers with an endless body holds a delivery
// no longer than it takes to read n bytes. On a read error the bytes read so
// far are returned with it.
func ReadLimited(body io.ReadCloser, n int64) ([]byte, error) {
	defer body.Close()
	if n < 0 {
		n = 0
	}
	b, err := io.ReadAll(io.LimitReader(body, n))
	if err != nil {
		return b, err
	}
	_, _ = io.CopyN(io.Discard, body, drainLimit)
	return b, nil
}
