// Package config reads petstore's settings from environment variables into one
// typed Config, validating every value so that a bad setting stops the start
// with one line naming the variable.
package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Driver names the database engine behind DATABASE_URL.
type Driver string

// The supported database engines.
const (
	SQLite Driver = "sqlite"
	MySQL  Driver = "mysql"
)

// Database says where the data lives and how to pool connections to it.
type Database struct {
	// Driver is the engine; DSN is its data source name: a file path for
	// SQLite, a go-sql-driver DSN (USER:PASS@tcp(HOST:PORT)/DB?params) for MySQL.
	Driver Driver
	DSN    string
	// Redacted is DATABASE_URL without its password, for logs and messages.
	Redacted string
	// ReplicaDSNs are MySQL read replicas (DATABASE_REPLICA_URLS, comma
	// separated mysql:// URLs) in the driver's DSN form.
	ReplicaDSNs []string

	MaxOpenConns    int
	MaxIdleConns    int
	ConnMaxLifetime time.Duration
	// ConnectTimeout bounds how long the start waits for the database to answer.
	ConnectTimeout time.Duration
}

// Config is every setting of the service.
type Config struct {
	// ListenAddr is the address the HTTP server listens on (LISTEN_ADDR).
	ListenAddr string
	// Database is parsed from DATABASE_URL and the DATABASE_* pool settings.
	Database Database
	// PublicURL is the external base URL (PETSTORE_PUBLIC_URL) without a
	// trailing slash, or "" when unset.
	PublicURL string
	// TrustedProxies lists the proxy addresses or CIDRs whose
	// X-Forwarded-For is believed (TRUSTED_PROXIES, comma separated).
	TrustedProxies []string
	// RateLimitRPS is how many requests per second one API key may make on
	// one instance (RATE_LIMIT_RPS; 0 turns the limit off), with bursts of
	// RateLimitBurst (RATE_LIMIT_BURST).
	RateLimitRPS   float64
	RateLimitBurst int
	// MetricsAddr is where Prometheus metrics are served without
	// authentication (METRICS_ADDR), a private address; "" serves no
	// metrics: the main address never does, partners' API keys must not
	// read them.
	MetricsAddr string
}

// Defaults, in one place.
const (
	DefaultListenAddr      = ":8080"
	DefaultDatabaseURL     = "sqlite:petstore.db"
	DefaultMaxOpenConns    = 20
	DefaultMaxIdleConns    = 20
	DefaultConnMaxLifetime = 30 * time.Minute
	DefaultConnectTimeout  = 30 * time.Second
	DefaultRateLimitRPS    = 50
	DefaultRateLimitBurst  = 100
)

// Error is a configuration error naming the variable at fault.
type Error struct {
	Var string
	Msg string
}

func (e *Error) Error() string { return e.Var + ": " + e.Msg }

// Load reads the configuration through getenv (os.Getenv in production) and
// validates it.
func Load(getenv func(string) string) (Config, error) {
	cfg := Config{ListenAddr: DefaultListenAddr, RateLimitRPS: DefaultRateLimitRPS, RateLimitBurst: DefaultRateLimitBurst}
	for _, a := range []struct {
		name string
		dst  *string
	}{{"LISTEN_ADDR", &cfg.ListenAddr}, {"METRICS_ADDR", &cfg.MetricsAddr}} {
		if v := strings.TrimSpace(getenv(a.name)); v != "" {
			_, port, err := net.SplitHostPort(v)
			if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
				return Config{}, &Error{a.name, fmt.Sprintf("%q is not a host:port address with a port from 0 to 65535 (for example :8080 or 127.0.0.1:8080)", v)}
			}
			*a.dst = v
		}
	}
	if v := strings.TrimSpace(getenv("RATE_LIMIT_RPS")); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1e9 {
			return Config{}, &Error{"RATE_LIMIT_RPS", fmt.Sprintf("%q is not a number of requests per second (0 turns the limit off)", v)}
		}
		cfg.RateLimitRPS = f
	}
	burst, err := positiveInt(getenv("RATE_LIMIT_BURST"), DefaultRateLimitBurst)
	if err != nil {
		return Config{}, &Error{"RATE_LIMIT_BURST", err.Error()}
	}
	cfg.RateLimitBurst = burst

	raw := strings.TrimSpace(getenv("DATABASE_URL"))
	if raw == "" {
		raw = DefaultDatabaseURL
	}
	db, err := ParseDatabaseURL(raw)
	if err != nil {
		return Config{}, &Error{"DATABASE_URL", err.Error()}
	}
	if v := strings.TrimSpace(getenv("DATABASE_REPLICA_URLS")); v != "" {
		if db.Driver != MySQL {
			return Config{}, &Error{"DATABASE_REPLICA_URLS", "read replicas need DATABASE_URL to be a mysql:// URL"}
		}
		for i, raw := range strings.Split(v, ",") {
			r, err := ParseDatabaseURL(strings.TrimSpace(raw))
			if err == nil && r.Driver != MySQL {
				err = fmt.Errorf("not a mysql:// URL")
			}
			if err != nil {
				return Config{}, &Error{"DATABASE_REPLICA_URLS", fmt.Sprintf("replica %d: %v", i+1, err)}
			}
			db.ReplicaDSNs = append(db.ReplicaDSNs, r.DSN)
		}
	}
	ints := []struct {
		name string
		dst  *int
		def  int
	}{
		{"DATABASE_MAX_OPEN_CONNS", &db.MaxOpenConns, DefaultMaxOpenConns},
		{"DATABASE_MAX_IDLE_CONNS", &db.MaxIdleConns, DefaultMaxIdleConns},
	}
	for _, s := range ints {
		n, err := positiveInt(getenv(s.name), s.def)
		if err != nil {
			return Config{}, &Error{s.name, err.Error()}
		}
		*s.dst = n
	}
	durations := []struct {
		name string
		dst  *time.Duration
		def  time.Duration
	}{
		{"DATABASE_CONN_MAX_LIFETIME", &db.ConnMaxLifetime, DefaultConnMaxLifetime},
		{"DATABASE_CONNECT_TIMEOUT", &db.ConnectTimeout, DefaultConnectTimeout},
	}
	for _, s := range durations {
		d, err := positiveDuration(getenv(s.name), s.def)
		if err != nil {
			return Config{}, &Error{s.name, err.Error()}
		}
		*s.dst = d
	}
	cfg.Database = db

	if v := strings.TrimSpace(getenv("PETSTORE_PUBLIC_URL")); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return Config{}, &Error{"PETSTORE_PUBLIC_URL", fmt.Sprintf("%q is not an absolute http or https URL (for example https://pets.example.com)", v)}
		}
		cfg.PublicURL = strings.TrimRight(u.String(), "/")
	}

	if v := strings.TrimSpace(getenv("TRUSTED_PROXIES")); v != "" {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if net.ParseIP(p) == nil {
				if _, _, err := net.ParseCIDR(p); err != nil {
					return Config{}, &Error{"TRUSTED_PROXIES", fmt.Sprintf("%q is neither an IP address nor a CIDR range", p)}
				}
			}
			cfg.TrustedProxies = append(cfg.TrustedProxies, p)
		}
	}
	return cfg, nil
}

// ParseDatabaseURL parses the two accepted forms of DATABASE_URL:
// sqlite:PATH and mysql://USER:PASS@HOST:PORT/DB?params.
func ParseDatabaseURL(raw string) (Database, error) {
	switch {
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(raw, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return Database{}, fmt.Errorf("sqlite: needs a file path, for example sqlite:petstore.db")
		}
		if strings.ContainsAny(path, "?#") {
			return Database{}, fmt.Errorf("sqlite path %q must not contain ? or #", path)
		}
		return Database{Driver: SQLite, DSN: path, Redacted: "sqlite:" + path}, nil
	case strings.HasPrefix(raw, "mysql://"):
		u, err := url.Parse(raw)
		if err != nil {
			return Database{}, fmt.Errorf("not a valid mysql:// URL: %v", unwrapURLError(err))
		}
		if u.Hostname() == "" {
			return Database{}, fmt.Errorf("mysql:// URL needs a host, as in mysql://USER:PASS@HOST:3306/DB")
		}
		port := u.Port()
		if port == "" {
			port = "3306"
		} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Database{}, fmt.Errorf("mysql:// URL has an invalid port %q", port)
		}
		name := strings.TrimPrefix(u.Path, "/")
		if name == "" || strings.Contains(name, "/") {
			return Database{}, fmt.Errorf("mysql:// URL needs one database name as its path, as in mysql://USER:PASS@HOST:3306/petstore")
		}
		user, pass := "", ""
		if u.User != nil {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		if user == "" || strings.Contains(user, ":") {
			return Database{}, fmt.Errorf("mysql:// URL needs a user without ':', as in mysql://USER:PASS@HOST:3306/DB")
		}
		host := net.JoinHostPort(u.Hostname(), port)
		// go-sql-driver splits USER:PASS@ at the first colon and the last @,
		// so the password needs no escaping. The query is passed through as
		// written: the driver unescapes the values it expects escaped, and
		// re-encoding would break others (charset=utf8mb4,utf8).
		dsn := user + ":" + pass + "@tcp(" + host + ")/" + name
		if u.RawQuery != "" {
			dsn += "?" + u.RawQuery
		}
		redacted := url.URL{Scheme: "mysql", User: url.User(user), Host: host, Path: "/" + name}
		return Database{Driver: MySQL, DSN: dsn, Redacted: redacted.String()}, nil
	default:
		scheme := raw
		if i := strings.Index(raw, ":"); i >= 0 {
			scheme = raw[:i]
		}
		return Database{}, fmt.Errorf("unknown scheme %q: use sqlite:PATH or mysql://USER:PASS@HOST:PORT/DB", scheme)
	}
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the whole
// URL and so the password.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func positiveInt(v string, def int) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a positive whole number", v)
	}
	return n, nil
}

func positiveDuration(v string, def time.Duration) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (for example 30s or 5m)", v)
	}
	return d, nil
}
