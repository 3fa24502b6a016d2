package config_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"petstore/config"
)

// env returns a getenv that reads from m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// defaults is the configuration Load returns with nothing set.
func defaults() config.Config {
	return config.Config{
		ListenAddr: ":8080",
		Database: config.Database{
			Driver:          config.SQLite,
			DSN:             "petstore.db",
			Redacted:        "sqlite:petstore.db",
			MaxOpenConns:    20,
			MaxIdleConns:    20,
			ConnMaxLifetime: 30 * time.Minute,
			ConnectTimeout:  30 * time.Second,
		},
		RateLimitRPS:    50,
		RateLimitBurst:  100,
		LogFormat:       config.LogText,
		EventsRetention: 720 * time.Hour,
		UndoWindow:      10 * time.Minute,
		Webhooks:        config.Webhooks{Timeout: 10 * time.Second, RetryBase: 30 * time.Second, MaxAttempts: 12, DisableAfter: 72 * time.Hour},
		TimeZone:        time.UTC,
		Backups:         config.Backups{Interval: 24 * time.Hour, Keep: 7},

		ArchiveRetention: 720 * time.Hour,
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		env  map[string]string
	}{
		{"nothing set", nil},
		{"empty values", map[string]string{"LISTEN_ADDR": "", "DATABASE_URL": "", "PETSTORE_PUBLIC_URL": "", "TRUSTED_PROXIES": "", "DATABASE_MAX_OPEN_CONNS": "", "LOG_FORMAT": ""}},
		{"blank values", map[string]string{"LISTEN_ADDR": "  ", "DATABASE_URL": " \t", "DATABASE_CONNECT_TIMEOUT": " "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.Load(env(tt.env))
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			if want := defaults(); !reflect.DeepEqual(got, want) {
				t.Fatalf("Load() = %+v, want %+v", got, want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		// want changes the defaults into the expected configuration.
		want func(c *config.Config)
	}{
		{"listen addr with host", map[string]string{"LISTEN_ADDR": "127.0.0.1:9000"}, func(c *config.Config) { c.ListenAddr = "127.0.0.1:9000" }},
		{"rate limit off", map[string]string{"RATE_LIMIT_RPS": "0", "RATE_LIMIT_BURST": "5"}, func(c *config.Config) { c.RateLimitRPS, c.RateLimitBurst = 0, 5 }},
		{"fractional rate", map[string]string{"RATE_LIMIT_RPS": "2.5"}, func(c *config.Config) { c.RateLimitRPS = 2.5 }},
		{"metrics addr", map[string]string{"METRICS_ADDR": "127.0.0.1:9090"}, func(c *config.Config) { c.MetricsAddr = "127.0.0.1:9090" }},
		{"listen addr ipv6", map[string]string{"LISTEN_ADDR": "[::1]:8081"}, func(c *config.Config) { c.ListenAddr = "[::1]:8081" }},
		{"listen addr trimmed", map[string]string{"LISTEN_ADDR": " :9000\n"}, func(c *config.Config) { c.ListenAddr = ":9000" }},
		{"sqlite relative path", map[string]string{"DATABASE_URL": "sqlite:data/pets.db"}, func(c *config.Config) {
			c.Database.DSN, c.Database.Redacted = "data/pets.db", "sqlite:data/pets.db"
		}},
		{"sqlite absolute path", map[string]string{"DATABASE_URL": "sqlite:/var/lib/petstore/pets.db"}, func(c *config.Config) {
			c.Database.DSN, c.Database.Redacted = "/var/lib/petstore/pets.db", "sqlite:/var/lib/petstore/pets.db"
		}},
		{"sqlite URL form", map[string]string{"DATABASE_URL": "sqlite:///var/lib/petstore/pets.db"}, func(c *config.Config) {
			c.Database.DSN, c.Database.Redacted = "/var/lib/petstore/pets.db", "sqlite:/var/lib/petstore/pets.db"
		}},
		{"mysql keeps pool defaults", map[string]string{"DATABASE_URL": "mysql://pets:pw@db:3306/petstore"}, func(c *config.Config) {
			c.Database.Driver = config.MySQL
			c.Database.DSN = "pets:pw@tcp(db:3306)/petstore"
			c.Database.Redacted = "mysql://pets@db:3306/petstore"
		}},
		{"pool settings", map[string]string{
			"DATABASE_MAX_OPEN_CONNS": "50", "DATABASE_MAX_IDLE_CONNS": " 5 ",
			"DATABASE_CONN_MAX_LIFETIME": "1h", "DATABASE_CONNECT_TIMEOUT": "1m30s",
		}, func(c *config.Config) {
			c.Database.MaxOpenConns, c.Database.MaxIdleConns = 50, 5
			c.Database.ConnMaxLifetime, c.Database.ConnectTimeout = time.Hour, 90*time.Second
		}},
		{"public url kept", map[string]string{"PETSTORE_PUBLIC_URL": "https://pets.example.com"}, func(c *config.Config) { c.PublicURL = "https://pets.example.com" }},
		{"public url trailing slash trimmed", map[string]string{"PETSTORE_PUBLIC_URL": "https://pets.example.com/"}, func(c *config.Config) { c.PublicURL = "https://pets.example.com" }},
		{"public url with path", map[string]string{"PETSTORE_PUBLIC_URL": "http://localhost:8080/shop/"}, func(c *config.Config) { c.PublicURL = "http://localhost:8080/shop" }},
		{"trusted proxies", map[string]string{"TRUSTED_PROXIES": "10.0.0.1, 192.168.0.0/16 ,::1,,fd00::/8"}, func(c *config.Config) {
			c.TrustedProxies = []string{"10.0.0.1", "192.168.0.0/16", "::1", "fd00::/8"}
		}},
		{"json logs", map[string]string{"LOG_FORMAT": "json"}, func(c *config.Config) { c.LogFormat = config.LogJSON }},
		{"a week of events", map[string]string{"EVENTS_RETENTION": "168h"}, func(c *config.Config) { c.EventsRetention = 168 * time.Hour }},
		{"archive kept a week", map[string]string{"ARCHIVE_RETENTION": "168h"}, func(c *config.Config) { c.ArchiveRetention = 168 * time.Hour }},
		{"half an hour to undo", map[string]string{"UNDO_WINDOW": "30m"}, func(c *config.Config) { c.UndoWindow = 30 * time.Minute }},
		{"scheduled backups", map[string]string{"BACKUP_DIR": " /var/backups/petstore ", "BACKUP_INTERVAL": "6h", "BACKUP_KEEP": "28"},
			func(c *config.Config) {
				c.Backups = config.Backups{Dir: "/var/backups/petstore", Interval: 6 * time.Hour, Keep: 28}
			}},
		{"a store in Paris", map[string]string{"PETSTORE_TIMEZONE": "Europe/Paris"}, func(c *config.Config) { c.TimeZone = mustZone(t, "Europe/Paris") }},
		{"webhooks on an intranet", map[string]string{"WEBHOOK_ALLOW_PRIVATE": "true", "WEBHOOK_TIMEOUT": "3s", "WEBHOOK_RETRY_BASE": "1s",
			"WEBHOOK_MAX_ATTEMPTS": "3", "WEBHOOK_DISABLE_AFTER": "1h"}, func(c *config.Config) {
			c.Webhooks = config.Webhooks{Timeout: 3 * time.Second, RetryBase: time.Second, MaxAttempts: 3, DisableAfter: time.Hour, AllowPrivate: true}
		}},
		{"json logs in capitals", map[string]string{"LOG_FORMAT": " JSON "}, func(c *config.Config) { c.LogFormat = config.LogJSON }},
		{"text logs named", map[string]string{"LOG_FORMAT": "Text"}, func(c *config.Config) { c.LogFormat = config.LogText }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.Load(env(tt.env))
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			want := defaults()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Load() =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestParseDatabaseURLMySQL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		raw      string
		dsn      string
		redacted string
		// user, pass, addr and db are what go-sql-driver reads back from dsn.
		user, pass, addr, db string
		params               map[string]string
	}{
		{
			name: "plain", raw: "mysql://pets:secret@db.internal:3307/petstore",
			dsn: "pets:secret@tcp(db.internal:3307)/petstore", redacted: "mysql://pets@db.internal:3307/petstore",
			user: "pets", pass: "secret", addr: "db.internal:3307", db: "petstore",
		},
		{
			name: "default port", raw: "mysql://pets:secret@db.internal/petstore",
			dsn: "pets:secret@tcp(db.internal:3306)/petstore", redacted: "mysql://pets@db.internal:3306/petstore",
			user: "pets", pass: "secret", addr: "db.internal:3306", db: "petstore",
		},
		{
			name: "escaped special characters in password", raw: "mysql://pets:p%40ss%3Aw%2Frd@db:3306/petstore",
			dsn: "pets:p@ss:w/rd@tcp(db:3306)/petstore", redacted: "mysql://pets@db:3306/petstore",
			user: "pets", pass: "p@ss:w/rd", addr: "db:3306", db: "petstore",
		},
		{
			name: "unescaped @ in password", raw: "mysql://pets:p@ss@db/petstore",
			dsn: "pets:p@ss@tcp(db:3306)/petstore", redacted: "mysql://pets@db:3306/petstore",
			user: "pets", pass: "p@ss", addr: "db:3306", db: "petstore",
		},
		{
			name: "question mark in password", raw: "mysql://pets:p%3Fw%23d@db/petstore?timeout=5s",
			dsn: "pets:p?w#d@tcp(db:3306)/petstore?timeout=5s", redacted: "mysql://pets@db:3306/petstore",
			user: "pets", pass: "p?w#d", addr: "db:3306", db: "petstore",
		},
		{
			name: "no password", raw: "mysql://root@127.0.0.1:33060/petstore",
			dsn: "root:@tcp(127.0.0.1:33060)/petstore", redacted: "mysql://root@127.0.0.1:33060/petstore",
			user: "root", pass: "", addr: "127.0.0.1:33060", db: "petstore",
		},
		{
			name: "ipv6 host", raw: "mysql://pets:pw@[fd00::1]/petstore",
			dsn: "pets:pw@tcp([fd00::1]:3306)/petstore", redacted: "mysql://pets@[fd00::1]:3306/petstore",
			user: "pets", pass: "pw", addr: "[fd00::1]:3306", db: "petstore",
		},
		{
			name: "params kept", raw: "mysql://pets:pw@db/petstore?tls=skip-verify&readTimeout=10s&time_zone=%27%2B00:00%27",
			dsn:      "pets:pw@tcp(db:3306)/petstore?tls=skip-verify&readTimeout=10s&time_zone=%27%2B00:00%27",
			redacted: "mysql://pets@db:3306/petstore",
			user:     "pets", pass: "pw", addr: "db:3306", db: "petstore",
			params: map[string]string{"time_zone": "'+00:00'"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.ParseDatabaseURL(tt.raw)
			if err != nil {
				t.Fatalf("ParseDatabaseURL(%q) error = %v", tt.raw, err)
			}
			if got.Driver != config.MySQL || got.DSN != tt.dsn || got.Redacted != tt.redacted {
				t.Errorf("ParseDatabaseURL(%q) = %+v, want driver mysql, DSN %q, Redacted %q", tt.raw, got, tt.dsn, tt.redacted)
			}
			if tt.pass != "" && strings.Contains(got.Redacted, tt.pass) {
				t.Errorf("Redacted %q contains the password", got.Redacted)
			}
			if strings.Contains(got.Redacted, ":"+tt.pass+"@") {
				t.Errorf("Redacted %q carries a password field", got.Redacted)
			}
			// The DSN must mean to the driver what the URL meant.
			c, err := mysql.ParseDSN(got.DSN)
			if err != nil {
				t.Fatalf("driver cannot parse DSN %q: %v", got.DSN, err)
			}
			if c.User != tt.user || c.Passwd != tt.pass || c.Net != "tcp" || c.Addr != tt.addr || c.DBName != tt.db {
				t.Errorf("driver reads user %q pass %q net %q addr %q db %q; want %q %q tcp %q %q",
					c.User, c.Passwd, c.Net, c.Addr, c.DBName, tt.user, tt.pass, tt.addr, tt.db)
			}
			for k, v := range tt.params {
				if c.Params[k] != v {
					t.Errorf("driver param %s = %q, want %q", k, c.Params[k], v)
				}
			}
		})
	}
}

func TestParseDatabaseURLKnownParams(t *testing.T) {
	t.Parallel()
	got, err := config.ParseDatabaseURL("mysql://pets:pw@db/petstore?tls=skip-verify&timeout=5s&readTimeout=10s")
	if err != nil {
		t.Fatal(err)
	}
	c, err := mysql.ParseDSN(got.DSN)
	if err != nil {
		t.Fatal(err)
	}
	if c.TLSConfig != "skip-verify" || c.Timeout != 5*time.Second || c.ReadTimeout != 10*time.Second {
		t.Errorf("driver reads tls %q timeout %v readTimeout %v; want skip-verify 5s 10s", c.TLSConfig, c.Timeout, c.ReadTimeout)
	}
	// Values the driver does not unescape pass through as written.
	got, err = config.ParseDatabaseURL("mysql://pets:pw@db/petstore?charset=utf8mb4,utf8")
	if err != nil || !strings.HasSuffix(got.DSN, "?charset=utf8mb4,utf8") {
		t.Errorf("DSN = %q, %v; want the charset list unchanged", got.DSN, err)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	const pw = "s3cretPW"
	tests := []struct {
		name    string
		env     map[string]string
		wantVar string
	}{
		{"listen addr without port", map[string]string{"LISTEN_ADDR": "8080"}, "LISTEN_ADDR"},
		{"listen addr port too big", map[string]string{"LISTEN_ADDR": ":99999"}, "LISTEN_ADDR"},
		{"listen addr empty port", map[string]string{"LISTEN_ADDR": ":"}, "LISTEN_ADDR"},
		{"listen addr host and colon", map[string]string{"LISTEN_ADDR": "localhost:"}, "LISTEN_ADDR"},
		{"listen addr named port", map[string]string{"LISTEN_ADDR": ":http"}, "LISTEN_ADDR"},
		{"metrics addr without port", map[string]string{"METRICS_ADDR": "localhost"}, "METRICS_ADDR"},
		{"negative rate", map[string]string{"RATE_LIMIT_RPS": "-1"}, "RATE_LIMIT_RPS"},
		{"rate not a number", map[string]string{"RATE_LIMIT_RPS": "lots"}, "RATE_LIMIT_RPS"},
		{"zero burst", map[string]string{"RATE_LIMIT_BURST": "0"}, "RATE_LIMIT_BURST"},
		{"mysql user with colon", map[string]string{"DATABASE_URL": "mysql://a%3Ab:pw@db/petstore"}, "DATABASE_URL"},
		{"replicas on sqlite", map[string]string{"DATABASE_REPLICA_URLS": "mysql://u:p@r1/petstore"}, "DATABASE_REPLICA_URLS"},
		{"replica not mysql", map[string]string{"DATABASE_URL": "mysql://u:p@db/petstore", "DATABASE_REPLICA_URLS": "sqlite:x.db"}, "DATABASE_REPLICA_URLS"},
		{"replica without database", map[string]string{"DATABASE_URL": "mysql://u:p@db/petstore", "DATABASE_REPLICA_URLS": "mysql://u:p@r1/petstore, mysql://u:p@r2/"}, "DATABASE_REPLICA_URLS"},
		{"secret key not base64", map[string]string{"PETSTORE_SECRET_KEY": "not base64!"}, "PETSTORE_SECRET_KEY"},
		{"secret key too short", map[string]string{"PETSTORE_SECRET_KEY": "c2hvcnQ="}, "PETSTORE_SECRET_KEY"},
		{"old secret keys without a current one", map[string]string{"PETSTORE_SECRET_KEYS_OLD": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}, "PETSTORE_SECRET_KEY"},
		{"old secret key too short", map[string]string{"PETSTORE_SECRET_KEY": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "PETSTORE_SECRET_KEYS_OLD": "c2hvcnQ="}, "PETSTORE_SECRET_KEYS_OLD"},
		{"listen addr host only", map[string]string{"LISTEN_ADDR": "localhost"}, "LISTEN_ADDR"},
		{"listen addr ipv6 without port", map[string]string{"LISTEN_ADDR": "[::1]"}, "LISTEN_ADDR"},
		{"unknown scheme postgres", map[string]string{"DATABASE_URL": "postgres://pets:" + pw + "@db:5432/petstore"}, "DATABASE_URL"},
		{"no scheme", map[string]string{"DATABASE_URL": "petstore.db"}, "DATABASE_URL"},
		{"mysql without slashes", map[string]string{"DATABASE_URL": "mysql:pets:" + pw + "@db/petstore"}, "DATABASE_URL"},
		{"sqlite without path", map[string]string{"DATABASE_URL": "sqlite:"}, "DATABASE_URL"},
		{"sqlite URL without path", map[string]string{"DATABASE_URL": "sqlite://"}, "DATABASE_URL"},
		{"sqlite path with query", map[string]string{"DATABASE_URL": "sqlite:pets.db?mode=ro"}, "DATABASE_URL"},
		{"mysql without host", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "@/petstore"}, "DATABASE_URL"},
		{"mysql without authority", map[string]string{"DATABASE_URL": "mysql:///petstore"}, "DATABASE_URL"},
		{"mysql without user", map[string]string{"DATABASE_URL": "mysql://db:3306/petstore"}, "DATABASE_URL"},
		{"mysql with password but no user", map[string]string{"DATABASE_URL": "mysql://:" + pw + "@db:3306/petstore"}, "DATABASE_URL"},
		{"mysql without database", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "@db:3306"}, "DATABASE_URL"},
		{"mysql with empty database", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "@db:3306/"}, "DATABASE_URL"},
		{"mysql with two path segments", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "@db:3306/a/b"}, "DATABASE_URL"},
		{"mysql non-numeric port", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "@db:abc/petstore"}, "DATABASE_URL"},
		{"mysql port zero", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "@db:0/petstore"}, "DATABASE_URL"},
		{"mysql port too large", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "@db:65536/petstore"}, "DATABASE_URL"},
		{"mysql bad escape", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "%zz@db/petstore"}, "DATABASE_URL"},
		{"mysql control character", map[string]string{"DATABASE_URL": "mysql://pets:" + pw + "@db/pet\nstore"}, "DATABASE_URL"},
		{"public url relative", map[string]string{"PETSTORE_PUBLIC_URL": "/pets"}, "PETSTORE_PUBLIC_URL"},
		{"public url without scheme", map[string]string{"PETSTORE_PUBLIC_URL": "pets.example.com"}, "PETSTORE_PUBLIC_URL"},
		{"public url ftp", map[string]string{"PETSTORE_PUBLIC_URL": "ftp://pets.example.com"}, "PETSTORE_PUBLIC_URL"},
		{"public url without host", map[string]string{"PETSTORE_PUBLIC_URL": "https://"}, "PETSTORE_PUBLIC_URL"},
		{"public url with query", map[string]string{"PETSTORE_PUBLIC_URL": "https://pets.example.com/?a=1"}, "PETSTORE_PUBLIC_URL"},
		{"public url with fragment", map[string]string{"PETSTORE_PUBLIC_URL": "https://pets.example.com/#top"}, "PETSTORE_PUBLIC_URL"},
		{"max open conns zero", map[string]string{"DATABASE_MAX_OPEN_CONNS": "0"}, "DATABASE_MAX_OPEN_CONNS"},
		{"max open conns negative", map[string]string{"DATABASE_MAX_OPEN_CONNS": "-1"}, "DATABASE_MAX_OPEN_CONNS"},
		{"max open conns not a number", map[string]string{"DATABASE_MAX_OPEN_CONNS": "abc"}, "DATABASE_MAX_OPEN_CONNS"},
		{"max open conns fraction", map[string]string{"DATABASE_MAX_OPEN_CONNS": "1.5"}, "DATABASE_MAX_OPEN_CONNS"},
		{"max idle conns zero", map[string]string{"DATABASE_MAX_IDLE_CONNS": "0"}, "DATABASE_MAX_IDLE_CONNS"},
		{"max idle conns negative", map[string]string{"DATABASE_MAX_IDLE_CONNS": "-1"}, "DATABASE_MAX_IDLE_CONNS"},
		{"max idle conns not a number", map[string]string{"DATABASE_MAX_IDLE_CONNS": "abc"}, "DATABASE_MAX_IDLE_CONNS"},
		{"lifetime not a duration", map[string]string{"DATABASE_CONN_MAX_LIFETIME": "abc"}, "DATABASE_CONN_MAX_LIFETIME"},
		{"lifetime without unit", map[string]string{"DATABASE_CONN_MAX_LIFETIME": "30"}, "DATABASE_CONN_MAX_LIFETIME"},
		{"lifetime zero", map[string]string{"DATABASE_CONN_MAX_LIFETIME": "0s"}, "DATABASE_CONN_MAX_LIFETIME"},
		{"connect timeout negative", map[string]string{"DATABASE_CONNECT_TIMEOUT": "-5s"}, "DATABASE_CONNECT_TIMEOUT"},
		{"connect timeout not a duration", map[string]string{"DATABASE_CONNECT_TIMEOUT": "soon"}, "DATABASE_CONNECT_TIMEOUT"},
		{"trusted proxy host name", map[string]string{"TRUSTED_PROXIES": "10.0.0.1,proxy.local"}, "TRUSTED_PROXIES"},
		{"trusted proxy bad cidr", map[string]string{"TRUSTED_PROXIES": "10.0.0.0/33"}, "TRUSTED_PROXIES"},
		{"trusted proxy bad ip", map[string]string{"TRUSTED_PROXIES": "300.1.1.1"}, "TRUSTED_PROXIES"},
		{"newline in value", map[string]string{"TRUSTED_PROXIES": "10.0.0.1,a\nb"}, "TRUSTED_PROXIES"},
		{"log format misspelt", map[string]string{"LOG_FORMAT": "jsn"}, "LOG_FORMAT"},
		{"log format of another tool", map[string]string{"LOG_FORMAT": "logfmt"}, "LOG_FORMAT"},
		{"events kept in days", map[string]string{"EVENTS_RETENTION": "30d"}, "EVENTS_RETENTION"},
		{"events kept for no time", map[string]string{"EVENTS_RETENTION": "0s"}, "EVENTS_RETENTION"},
		{"archive kept for no time", map[string]string{"ARCHIVE_RETENTION": "0"}, "ARCHIVE_RETENTION"},
		{"archive kept for less than none", map[string]string{"ARCHIVE_RETENTION": "-1h"}, "ARCHIVE_RETENTION"},
		{"archive kept in days", map[string]string{"ARCHIVE_RETENTION": "30d"}, "ARCHIVE_RETENTION"},
		{"no time to undo", map[string]string{"UNDO_WINDOW": "0s"}, "UNDO_WINDOW"},
		{"backups every second", map[string]string{"BACKUP_INTERVAL": "1s"}, "BACKUP_INTERVAL"},
		{"backups every day, in days", map[string]string{"BACKUP_INTERVAL": "1d"}, "BACKUP_INTERVAL"},
		{"no backups kept", map[string]string{"BACKUP_KEEP": "0"}, "BACKUP_KEEP"},
		{"backups kept: many", map[string]string{"BACKUP_KEEP": "many"}, "BACKUP_KEEP"},
		{"a zone that does not exist", map[string]string{"PETSTORE_TIMEZONE": "Europe/Atlantis"}, "PETSTORE_TIMEZONE"},
		{"the machine's zone, whatever it is", map[string]string{"PETSTORE_TIMEZONE": "Local"}, "PETSTORE_TIMEZONE"},
		{"webhook private maybe", map[string]string{"WEBHOOK_ALLOW_PRIVATE": "yes please"}, "WEBHOOK_ALLOW_PRIVATE"},
		{"webhook attempts zero", map[string]string{"WEBHOOK_MAX_ATTEMPTS": "0"}, "WEBHOOK_MAX_ATTEMPTS"},
		{"webhook timeout without unit", map[string]string{"WEBHOOK_TIMEOUT": "10"}, "WEBHOOK_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.Load(env(tt.env))
			var e *config.Error
			if !errors.As(err, &e) {
				t.Fatalf("Load() = %+v, %v; want a *config.Error", got, err)
			}
			if e.Var != tt.wantVar {
				t.Errorf("Var = %q, want %q (error %q)", e.Var, tt.wantVar, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tt.wantVar+": ") || len(msg) <= len(tt.wantVar)+2 {
				t.Errorf("error %q does not start with %q and a message", msg, tt.wantVar+": ")
			}
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("error %q is not one line", msg)
			}
			if strings.Contains(msg, pw) {
				t.Errorf("error %q shows the password", msg)
			}
			if !reflect.DeepEqual(got, config.Config{}) {
				t.Errorf("Load() returned %+v with an error, want the zero Config", got)
			}
		})
	}
}

func TestLoadReplicas(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "mysql://u:p@db/petstore", "DATABASE_REPLICA_URLS": " mysql://r:s@r1:3307/petstore , mysql://r:s@r2/petstore"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"r:s@tcp(r1:3307)/petstore", "r:s@tcp(r2:3306)/petstore"}
	if strings.Join(cfg.Database.ReplicaDSNs, " ") != strings.Join(want, " ") {
		t.Errorf("replica DSNs = %q, want %q", cfg.Database.ReplicaDSNs, want)
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// The secret keys: the current one first, then the old ones, each 32
// bytes in any base64 alphabet.
func TestLoadSecretKeys(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"PETSTORE_SECRET_KEY":      "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
		"PETSTORE_SECRET_KEYS_OLD": " ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA , YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY",
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210", "abcdefghijklmnopqrstuvwxyz123456"}
	if len(cfg.SecretKeys) != len(want) {
		t.Fatalf("%d keys, want %d", len(cfg.SecretKeys), len(want))
	}
	for i, k := range cfg.SecretKeys {
		if string(k) != want[i] {
			t.Errorf("key %d = %q, want %q", i, k, want[i])
		}
	}
}
