// Package config reads petstore's settings from environment variables into one
// typed Config, validating every value so that a bad setting stops the start
// with one line naming the variable.
package config

import (
	"encoding/base64"
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
	// LogFormat is how the log on stderr is written (LOG_FORMAT).
	LogFormat LogFormat
	// EventsRetention is how long the change feed keeps an event
	// (EVENTS_RETENTION).
	EventsRetention time.Duration
	// UndoWindow is how long after a console change its member may undo
	// it (UNDO_WINDOW).
	UndoWindow time.Duration
	// Webhooks configure the deliveries to webhook endpoints.
	Webhooks Webhooks
	// TimeZone is the store's time zone (PETSTORE_TIMEZONE, an IANA name):
	// the console shows times in it and reads the dates staff type in it.
	TimeZone *time.Location
	// SecretKeys seal the secrets the service must read back, such as the
	// staff's authenticator app secrets: PETSTORE_SECRET_KEY first (new
	// secrets are sealed with it), then PETSTORE_SECRET_KEYS_OLD (comma
	// separated), which still open what they sealed. Each is 32 random
	// bytes, base64. Empty: two-step sign-in with an app cannot be used.
	SecretKeys [][]byte
	// Backups configure the scheduled backups of serve.
	Backups Backups
	// ArchiveRetention is how long an archived pet is kept before it is
	// purged for good (ARCHIVE_RETENTION).
	ArchiveRetention time.Duration
}

// Backups are the BACKUP_* settings.
type Backups struct {
	// Dir is where serve writes a backup every Interval (BACKUP_DIR); ""
	// takes no scheduled backups.
	Dir string
	// Interval is the time between two scheduled backups (BACKUP_INTERVAL).
	Interval time.Duration
	// Keep is how many of the newest scheduled backups are kept in Dir
	// (BACKUP_KEEP); older ones are deleted.
	Keep int
}

// Webhooks are the WEBHOOK_* settings.
type Webhooks struct {
	// Timeout bounds one delivery attempt (WEBHOOK_TIMEOUT).
	Timeout time.Duration
	// RetryBase is the first wait after a failed attempt, doubled after
	// each (WEBHOOK_RETRY_BASE), for MaxAttempts attempts in all
	// (WEBHOOK_MAX_ATTEMPTS).
	RetryBase   time.Duration
	MaxAttempts int
	// DisableAfter disables an endpoint whose deliveries all failed for
	// that long (WEBHOOK_DISABLE_AFTER).
	DisableAfter time.Duration
	// AllowPrivate lets endpoints be on loopback, private, link-local and
	// other addresses of the server's own network (WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
}

// LogFormat is the format of the log: LogText or LogJSON.
type LogFormat string

// The log formats.
const (
	LogText LogFormat = "text"
	LogJSON LogFormat = "json"
)

// Defaults, in one place.
const (
	DefaultListenAddr          = ":8080"
	DefaultDatabaseURL         = "sqlite:petstore.db"
	DefaultMaxOpenConns        = 20
	DefaultMaxIdleConns        = 20
	DefaultConnMaxLifetime     = 30 * time.Minute
	DefaultConnectTimeout      = 30 * time.Second
	DefaultRateLimitRPS        = 50
	DefaultRateLimitBurst      = 100
	DefaultLogFormat           = LogText
	DefaultEventsRetention     = 720 * time.Hour
	DefaultUndoWindow          = 10 * time.Minute
	DefaultWebhookTimeout      = 10 * time.Second
	DefaultWebhookRetryBase    = 30 * time.Second
	DefaultWebhookMaxAttempts  = 12
	DefaultWebhookDisableAfter = 72 * time.Hour
	DefaultBackupInterval      = 24 * time.Hour
	DefaultBackupKeep          = 7
	DefaultArchiveRetention    = 720 * time.Hour
)

// Error is a configuration error naming the variable at fault.
type Error struct {
	Var string
	Msg string
}

func (e *Error) Error() string { return e.Var + ": " + e.Msg }

// Load reads the configuration through getenv (os.Getenv in production) and
// validates it. Each setting is read by a step of its own; the first bad
// value stops the load.
func Load(getenv func(string) string) (Config, error) {
	var cfg Config
	var err error
	if cfg.ListenAddr, err = address(getenv, "LISTEN_ADDR", DefaultListenAddr); err != nil {
		return Config{}, err
	}
	if cfg.MetricsAddr, err = address(getenv, "METRICS_ADDR", ""); err != nil {
		return Config{}, err
	}
	if cfg.RateLimitRPS, err = rateLimit(getenv); err != nil {
		return Config{}, err
	}
	if cfg.RateLimitBurst, err = positiveInt(getenv, "RATE_LIMIT_BURST", DefaultRateLimitBurst); err != nil {
		return Config{}, err
	}
	if cfg.Database, err = database(getenv); err != nil {
		return Config{}, err
	}
	if cfg.PublicURL, err = publicURL(getenv); err != nil {
		return Config{}, err
	}
	if cfg.TrustedProxies, err = trustedProxies(getenv); err != nil {
		return Config{}, err
	}
	if cfg.LogFormat, err = logFormat(getenv); err != nil {
		return Config{}, err
	}
	if cfg.EventsRetention, err = positiveDuration(getenv, "EVENTS_RETENTION", DefaultEventsRetention); err != nil {
		return Config{}, err
	}
	if cfg.UndoWindow, err = positiveDuration(getenv, "UNDO_WINDOW", DefaultUndoWindow); err != nil {
		return Config{}, err
	}
	if cfg.Webhooks, err = webhooks(getenv); err != nil {
		return Config{}, err
	}
	if cfg.TimeZone, err = timeZone(getenv); err != nil {
		return Config{}, err
	}
	if cfg.SecretKeys, err = secretKeys(getenv); err != nil {
		return Config{}, err
	}
	if cfg.Backups, err = backups(getenv); err != nil {
		return Config{}, err
	}
	if cfg.ArchiveRetention, err = positiveDuration(getenv, "ARCHIVE_RETENTION", DefaultArchiveRetention); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// backups reads the BACKUP_* settings. The interval and the count are
// checked even without BACKUP_DIR, so that a typo shows before the
// directory is set.
func backups(getenv func(string) string) (b Backups, err error) {
	b.Dir = value(getenv, "BACKUP_DIR")
	if b.Interval, err = positiveDuration(getenv, "BACKUP_INTERVAL", DefaultBackupInterval); err != nil {
		return Backups{}, err
	}
	if b.Interval < time.Minute {
		return Backups{}, &Error{"BACKUP_INTERVAL", fmt.Sprintf("%s is shorter than a minute", b.Interval)}
	}
	if b.Keep, err = positiveInt(getenv, "BACKUP_KEEP", DefaultBackupKeep); err != nil {
		return Backups{}, err
	}
	return b, nil
}

// webhooks reads the WEBHOOK_* settings.
func webhooks(getenv func(string) string) (w Webhooks, err error) {
	if w.Timeout, err = positiveDuration(getenv, "WEBHOOK_TIMEOUT", DefaultWebhookTimeout); err != nil {
		return Webhooks{}, err
	}
	if w.RetryBase, err = positiveDuration(getenv, "WEBHOOK_RETRY_BASE", DefaultWebhookRetryBase); err != nil {
		return Webhooks{}, err
	}
	if w.MaxAttempts, err = positiveInt(getenv, "WEBHOOK_MAX_ATTEMPTS", DefaultWebhookMaxAttempts); err != nil {
		return Webhooks{}, err
	}
	if w.DisableAfter, err = positiveDuration(getenv, "WEBHOOK_DISABLE_AFTER", DefaultWebhookDisableAfter); err != nil {
		return Webhooks{}, err
	}
	switch v := strings.ToLower(value(getenv, "WEBHOOK_ALLOW_PRIVATE")); v {
	case "", "false", "0":
	case "true", "1":
		w.AllowPrivate = true
	default:
		return Webhooks{}, &Error{"WEBHOOK_ALLOW_PRIVATE", fmt.Sprintf("%q is not true or false", v)}
	}
	return w, nil
}

// timeZone reads PETSTORE_TIMEZONE; unset is UTC. The zone database is
// embedded in the binary (time/tzdata in main), so a name is valid
// whether or not the machine has one.
func timeZone(getenv func(string) string) (*time.Location, error) {
	v := value(getenv, "PETSTORE_TIMEZONE")
	if v == "" {
		return time.UTC, nil
	}
	if v == "Local" {
		return nil, &Error{"PETSTORE_TIMEZONE", `"Local" is not a time zone name; name the zone, such as Europe/Paris`}
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, &Error{"PETSTORE_TIMEZONE", fmt.Sprintf("%q is not a time zone name (IANA, such as Europe/Paris or America/New_York)", v)}
	}
	return loc, nil
}

// SecretKeyLen is the length of a secret key, before base64.
const SecretKeyLen = 32

// secretKeys reads PETSTORE_SECRET_KEY and PETSTORE_SECRET_KEYS_OLD: base64
// (standard or URL alphabet, padded or not) of SecretKeyLen bytes each.
// Old keys need a current one: they only open, never seal.
func secretKeys(getenv func(string) string) ([][]byte, error) {
	cur := value(getenv, "PETSTORE_SECRET_KEY")
	old := value(getenv, "PETSTORE_SECRET_KEYS_OLD")
	if cur == "" {
		if old != "" {
			return nil, &Error{"PETSTORE_SECRET_KEY", "is unset while PETSTORE_SECRET_KEYS_OLD is set; set the new key here and keep the old ones there"}
		}
		return nil, nil
	}
	key, err := secretKey(cur)
	if err != nil {
		return nil, &Error{"PETSTORE_SECRET_KEY", err.Error()}
	}
	keys := [][]byte{key}
	for i, raw := range strings.Split(old, ",") {
		if raw = strings.TrimSpace(raw); raw == "" {
			continue
		}
		k, err := secretKey(raw)
		if err != nil {
			return nil, &Error{"PETSTORE_SECRET_KEYS_OLD", fmt.Sprintf("key %d: %v", i+1, err)}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func secretKey(v string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			if len(b) != SecretKeyLen {
				return nil, fmt.Errorf("is %d bytes once base64-decoded, want %d (make one with: openssl rand -base64 32)", len(b), SecretKeyLen)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("is not base64 (make one with: openssl rand -base64 32)")
}

// value is a variable's value without surrounding white space.
func value(getenv func(string) string, name string) string {
	return strings.TrimSpace(getenv(name))
}

// address reads a host:port listen address; unset gives def.
func address(getenv func(string) string, name, def string) (string, error) {
	v := value(getenv, name)
	if v == "" {
		return def, nil
	}
	_, port, err := net.SplitHostPort(v)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return "", &Error{name, fmt.Sprintf("%q is not a host:port address with a port from 0 to 65535 (for example :8080 or 127.0.0.1:8080)", v)}
	}
	return v, nil
}

// rateLimit reads RATE_LIMIT_RPS.
func rateLimit(getenv func(string) string) (float64, error) {
	v := value(getenv, "RATE_LIMIT_RPS")
	if v == "" {
		return DefaultRateLimitRPS, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0, &Error{"RATE_LIMIT_RPS", fmt.Sprintf("%q is not a number of requests per second (0 turns the limit off)", v)}
	}
	return f, nil
}

// database reads DATABASE_URL, its read replicas and the pool settings.
func database(getenv func(string) string) (Database, error) {
	raw := value(getenv, "DATABASE_URL")
	if raw == "" {
		raw = DefaultDatabaseURL
	}
	db, err := ParseDatabaseURL(raw)
	if err != nil {
		return Database{}, &Error{"DATABASE_URL", err.Error()}
	}
	if db.ReplicaDSNs, err = replicaDSNs(getenv, db.Driver); err != nil {
		return Database{}, err
	}
	if db.MaxOpenConns, err = positiveInt(getenv, "DATABASE_MAX_OPEN_CONNS", DefaultMaxOpenConns); err != nil {
		return Database{}, err
	}
	if db.MaxIdleConns, err = positiveInt(getenv, "DATABASE_MAX_IDLE_CONNS", DefaultMaxIdleConns); err != nil {
		return Database{}, err
	}
	if db.ConnMaxLifetime, err = positiveDuration(getenv, "DATABASE_CONN_MAX_LIFETIME", DefaultConnMaxLifetime); err != nil {
		return Database{}, err
	}
	if db.ConnectTimeout, err = positiveDuration(getenv, "DATABASE_CONNECT_TIMEOUT", DefaultConnectTimeout); err != nil {
		return Database{}, err
	}
	return db, nil
}

// replicaDSNs reads DATABASE_REPLICA_URLS: comma-separated mysql:// URLs,
// allowed only over a MySQL primary (of driver).
func replicaDSNs(getenv func(string) string, driver Driver) ([]string, error) {
	v := value(getenv, "DATABASE_REPLICA_URLS")
	if v == "" {
		return nil, nil
	}
	if driver != MySQL {
		return nil, &Error{"DATABASE_REPLICA_URLS", "read replicas need DATABASE_URL to be a mysql:// URL"}
	}
	var dsns []string
	for i, raw := range strings.Split(v, ",") {
		r, err := ParseDatabaseURL(strings.TrimSpace(raw))
		if err == nil && r.Driver != MySQL {
			err = fmt.Errorf("not a mysql:// URL")
		}
		if err != nil {
			return nil, &Error{"DATABASE_REPLICA_URLS", fmt.Sprintf("replica %d: %v", i+1, err)}
		}
		dsns = append(dsns, r.DSN)
	}
	return dsns, nil
}

// publicURL reads PETSTORE_PUBLIC_URL, without its trailing slash.
func publicURL(getenv func(string) string) (string, error) {
	v := value(getenv, "PETSTORE_PUBLIC_URL")
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", &Error{"PETSTORE_PUBLIC_URL", fmt.Sprintf("%q is not an absolute http or https URL (for example https://pets.example.com)", v)}
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// trustedProxies reads TRUSTED_PROXIES: comma-separated IPs or CIDR ranges.
func trustedProxies(getenv func(string) string) ([]string, error) {
	var proxies []string
	for _, p := range strings.Split(value(getenv, "TRUSTED_PROXIES"), ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				return nil, &Error{"TRUSTED_PROXIES", fmt.Sprintf("%q is neither an IP address nor a CIDR range", p)}
			}
		}
		proxies = append(proxies, p)
	}
	return proxies, nil
}

// logFormat reads LOG_FORMAT, in any letter case.
func logFormat(getenv func(string) string) (LogFormat, error) {
	v := value(getenv, "LOG_FORMAT")
	switch f := LogFormat(strings.ToLower(v)); f {
	case "":
		return DefaultLogFormat, nil
	case LogText, LogJSON:
		return f, nil
	}
	return "", &Error{"LOG_FORMAT", fmt.Sprintf("%q is not a log format (use text or json)", v)}
}

// ParseDatabaseURL parses the two accepted forms of DATABASE_URL:
// sqlite:PATH and mysql://USER:PASS@HOST:PORT/DB?params.
func ParseDatabaseURL(raw string) (Database, error) {
	switch {
	case strings.HasPrefix(raw, "sqlite:"):
		return parseSQLiteURL(raw)
	case strings.HasPrefix(raw, "mysql://"):
		return parseMySQLURL(raw)
	default:
		scheme := raw
		if i := strings.Index(raw, ":"); i >= 0 {
			scheme = raw[:i]
		}
		return Database{}, fmt.Errorf("unknown scheme %q: use sqlite:PATH or mysql://USER:PASS@HOST:PORT/DB", scheme)
	}
}

// parseSQLiteURL parses sqlite:PATH (or sqlite://PATH).
func parseSQLiteURL(raw string) (Database, error) {
	path := strings.TrimPrefix(raw, "sqlite:")
	path = strings.TrimPrefix(path, "//")
	if path == "" {
		return Database{}, fmt.Errorf("sqlite: needs a file path, for example sqlite:petstore.db")
	}
	if strings.ContainsAny(path, "?#") {
		return Database{}, fmt.Errorf("sqlite path %q must not contain ? or #", path)
	}
	return Database{Driver: SQLite, DSN: path, Redacted: "sqlite:" + path}, nil
}

// parseMySQLURL parses mysql://USER:PASS@HOST:PORT/DB?params into a
// go-sql-driver DSN and a redacted URL.
func parseMySQLURL(raw string) (Database, error) {
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
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the whole
// URL and so the password.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// positiveInt reads a whole number of at least 1; unset gives def.
func positiveInt(getenv func(string) string, name string, def int) (int, error) {
	v := value(getenv, name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, &Error{name, fmt.Sprintf("%q is not a positive whole number", v)}
	}
	return n, nil
}

// positiveDuration reads a duration above zero; unset gives def.
func positiveDuration(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := value(getenv, name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, &Error{name, fmt.Sprintf("%q is not a positive duration (for example 30s or 5m)", v)}
	}
	return d, nil
}
