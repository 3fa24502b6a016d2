// Package models holds petstore's data: the GORM models, the Store that runs
// every query, the schema migrations, and the domain rules (pet validation,
// status values, API-key hashing) shared by the JSON API and the console.
package models

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	gormmysql "gorm.io/driver/mysql"
	gormsqlite "gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/plugin/dbresolver"
	_ "modernc.org/sqlite" // registers the pure-Go driver "sqlite"
)

// The supported drivers, as named by config.
const (
	DriverSQLite = "sqlite"
	DriverMySQL  = "mysql"
)

// Options says which database to open and how to pool connections to it.
type Options struct {
	// Driver is DriverSQLite or DriverMySQL.
	Driver string
	// DSN is a SQLite file path, or a go-sql-driver MySQL DSN. Open adds the
	// settings petstore relies on (utf8mb4, UTC times, busy timeouts).
	DSN             string
	MaxOpenConns    int
	MaxIdleConns    int
	ConnMaxLifetime time.Duration
	// ConnectTimeout bounds the wait for a database that is not up yet.
	ConnectTimeout time.Duration
	// Logger receives slow-query and driver warnings; nil discards them.
	// A slow statement is logged as written, with its values left out.
	Logger *slog.Logger
	// SlowThreshold is how long a statement may run before it is logged as
	// slow; 0 means 500 ms. Tests set it tiny to make every statement slow.
	SlowThreshold time.Duration
	// ReplicaDSNs are MySQL read replicas (DATABASE_REPLICA_URLS): the API's
	// pet list reads go to one of them at random. Every other read (a pet
	// fetched after its creation, the console, keys, sessions, accounts)
	// stays on the primary, so it sees the writes just made.
	ReplicaDSNs []string
	// PasswordCost is the bcrypt cost of new password hashes; 0 means 12.
	// Tests lower it: hashing at cost 12 takes about a quarter second.
	PasswordCost int
	// PasswordHashers is how many bcrypt hashes or comparisons may run at
	// once; 0 means half the usable CPUs (at least one). A sign-in that
	// finds them all busy, and as many sign-ins already waiting, is
	// answered at once (503 with Retry-After) without hashing, so a burst of
	// anonymous sign-ins cannot take the CPUs the API needs.
	PasswordHashers int
	// SecretKeys seal the secrets the service must read back (an
	// authenticator app's): the current key (PETSTORE_SECRET_KEY) first,
	// then older ones that still open what they sealed. None: two-step
	// sign-in with an app cannot be set up or checked.
	SecretKeys [][]byte
	// Zone is the store's time zone (PETSTORE_TIMEZONE), in which the
	// messages staff read name times; nil is UTC.
	Zone *time.Location
}

// Store runs every query of the service. It is safe for concurrent use.
//
// GORM or database/sql: a query goes through GORM (db, and transaction for
// writes) unless its cost is paid per partner request or per row of a
// large table. Those few paths use the pools themselves, with prepared
// statements or multi-row text and the column lists of pets_read.go, and
// retry on their own (retry): the partner API's pet reads and creates
// (pets_read.go, pets_create.go, pets_statements.go), the idempotency
// records that ride on the creates (idempotency.go), the name search's
// key-range reads (search.go), the seed's bulk inserts (seed.go), the
// status counts' sums and fold (statuscounts.go), and the migrations'
// lock (migrate.go). Everything else (the console's reads and writes,
// accounts, sessions, keys, the audit trail) is GORM's.
type Store struct {
	db *gorm.DB
	// sqlDB is the primary pool: MySQL's, or SQLite's single writer.
	sqlDB *sql.DB
	// readDB is SQLite's pool of readers; on MySQL it is sqlDB.
	readDB *sql.DB
	// createDB is MySQL's pool for the API's creates: multi-statement text
	// with the values quoted by the driver (createPetMySQL); nil on SQLite.
	createDB *sql.DB
	driver   string
	log      *slog.Logger
	// clock is what now reads; tests may replace it (SetClock) while
	// background work reads it.
	clock atomic.Pointer[func() time.Time]
	// passwordCost is the bcrypt cost of new password hashes.
	passwordCost int
	// migrateCfg opens the connection migrations use on MySQL (nil on SQLite).
	migrateCfg *mysql.Config
	// replicas are the read replicas' pools, closed with the store.
	replicas []*sql.DB
	// What each resource keeps in this process, beside its rows: the
	// pets' create queue, prepared statements and counts' compaction
	// (pets.go), the API keys' cache and known prefixes (keycache.go),
	// the sign-ins' hashing limit and counters (signin.go), the
	// idempotency keys' statements and purges (idempotency.go), the change
	// feed's waiting readers and purge (events.go).
	pets    petState
	keys    keyState
	signIns signInState
	idem    idempotency
	feed    feedState
	bulk    bulkState    // the bulk jobs this process runs (bulk.go)
	archive archiveState // the archive's purge (pets_archive.go)
	undo    undoState    // the undos and purges this process runs (undo.go)
	imports importState  // the CSV imports this process runs (pets_import.go)
	wal     walState     // SQLite's log checkpoints (sqlite_wal.go)
	// server is what MySQL's create batches need to know of the server.
	server mysqlServer
	// secrets seal the secrets kept in the database (secrets.go).
	secrets secretKeys
	// zone is the store's time zone, for the times in messages (LocalTime).
	zone *time.Location
}

// mysqlServer is what shapes a MySQL create batch's text (createsSQL).
type mysqlServer struct {
	// galera says the server is a Galera node (wsrep_on), whose ids step
	// by the cluster's size.
	galera bool
	// consecutiveIDs says a multi-row INSERT takes consecutive ids: the
	// auto-increment steps by one and InnoDB reserves a simple INSERT's
	// ids at once (innodb_autoinc_lock_mode 0 or 1; at 2 the manual
	// allows another statement's ids between them). The batch's pets are
	// then one INSERT; otherwise one each, each reading its own id. Galera
	// needs mode 2 and steps by the cluster's size, so it never has it.
	consecutiveIDs bool
}

// probeMySQL asks db's server what mysqlServer says. A variable the server
// lacks (wsrep_on on MySQL) reads as off.
func probeMySQL(ctx context.Context, db *sql.DB) mysqlServer {
	var on, step, mode int
	var m mysqlServer
	if err := db.QueryRowContext(ctx, "SELECT @@wsrep_on").Scan(&on); err == nil {
		m.galera = on == 1
	}
	if err := db.QueryRowContext(ctx, "SELECT @@auto_increment_increment, @@innodb_autoinc_lock_mode").Scan(&step, &mode); err == nil {
		m.consecutiveIDs = step == 1 && mode < 2 && !m.galera
	}
	return m
}

// Open connects to the database, waiting with backoff up to
// o.ConnectTimeout for it to answer. It does not migrate: call Migrate.
//
// On SQLite it opens two pools on the file: one connection that does every
// write, so that writers queue in order in Go instead of polling SQLite's
// lock through busy-timeout sleeps, and a pool of readers (o.MaxOpenConns),
// which WAL lets read while the writer writes. GORM sends transactions,
// inserts, updates and deletes to the writer and plain reads to the readers
// (gorm.io/plugin/dbresolver); the readers' connections are query-only, so
// a write sent to them fails loudly instead of taking the lock.
func Open(ctx context.Context, o Options) (*Store, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p, err := openPools(o, log)
	if err != nil {
		return nil, err
	}
	if err := waitForDB(ctx, p.primary, o.ConnectTimeout, log); err != nil {
		p.close()
		return nil, err
	}
	if err := p.openReplicas(o, log); err != nil {
		p.close()
		return nil, err
	}
	db, err := p.openGORM(o, log)
	if err != nil {
		p.close()
		return nil, err
	}
	secrets, err := newSecretKeys(o.SecretKeys)
	if err != nil {
		p.close()
		return nil, err
	}
	cost := o.PasswordCost
	if cost == 0 {
		cost = defaultPasswordCost
	}
	s := &Store{pets: petState{queue: createQueue{MaxLeaders: maxCreateLeaders(o.Driver), MaxBatch: maxCreateBatch}}, db: db,
		sqlDB: p.primary, readDB: p.read, createDB: p.create, replicas: p.replicas, migrateCfg: p.migrateCfg,
		driver: o.Driver, log: log,
		passwordCost: cost, signIns: signInState{hashing: newHashLimiter(o.PasswordHashers)}, secrets: secrets,
		zone: cmp.Or(o.Zone, time.UTC)}
	if o.Driver == DriverMySQL {
		s.server = probeMySQL(ctx, p.primary)
	}
	s.feed.read = s.EventHead
	utcNow := func() time.Time { return time.Now().UTC() }
	s.clock.Store(&utcNow)
	s.pets.createTimeout.Store(int64(defaultCreateTimeout))
	return s, nil
}

// now is the store's clock, in UTC.
func (s *Store) now() time.Time { return (*s.clock.Load())() }

// pools are the database/sql pools a Store runs on, while Open builds them.
type pools struct {
	primary *sql.DB // MySQL's pool, SQLite's writer
	read    *sql.DB // SQLite's readers; on MySQL, primary
	create  *sql.DB // MySQL's pool for the API's creates; nil on SQLite
	// dialector is GORM's way to the primary.
	dialector gorm.Dialector
	// migrateCfg opens the migrations' own connection on MySQL; nil on SQLite.
	migrateCfg *mysql.Config
	replicas   []*sql.DB
	replicaDia []gorm.Dialector
}

// openPools opens the pools of o.Driver; none of them has connected yet.
func openPools(o Options, log *slog.Logger) (*pools, error) {
	switch o.Driver {
	case DriverSQLite:
		return openSQLite(o)
	case DriverMySQL:
		return openMySQLPools(o, log)
	default:
		return nil, fmt.Errorf("unknown database driver %q", o.Driver)
	}
}

// openSQLite opens the writer and the readers on the file o.DSN.
func openSQLite(o Options) (*pools, error) {
	writer, err := sql.Open(sqliteDriver, sqliteDSN(o.DSN, true))
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	readers, err := sql.Open(sqliteDriver, sqliteDSN(o.DSN, false))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	o.sizePool(readers)
	// SQLite reads use the CPU, not the network: more readers than a few
	// per CPU only queue in SQLite instead of in Go, each holding a page
	// cache of its own (up to 2 MiB).
	if n := sqliteMaxReaders(); o.MaxOpenConns == 0 || o.MaxOpenConns > n {
		readers.SetMaxOpenConns(n)
		readers.SetMaxIdleConns(n)
	}
	return &pools{primary: writer, read: readers,
		dialector: gormsqlite.New(gormsqlite.Config{DriverName: sqliteDriver, Conn: writer})}, nil
}

// openMySQLPools opens the primary pool on o.DSN and the pool of the API's
// creates, and keeps the settings of the migrations' connection.
func openMySQLPools(o Options, log *slog.Logger) (*pools, error) {
	primary, cfg, err := openMySQL(o.DSN, log)
	if err != nil {
		return nil, err
	}
	o.sizePool(primary)
	migrateCfg := cfg.Clone()
	// Migrations may run long statements (an ALTER of a big table): their
	// own connection has no read or write timeout.
	migrateCfg.ReadTimeout, migrateCfg.WriteTimeout = 0, 0
	createCfg := cfg.Clone()
	createCfg.MultiStatements, createCfg.InterpolateParams = true, true
	connector, err := mysql.NewConnector(createCfg)
	if err != nil {
		primary.Close()
		return nil, fmt.Errorf("open mysql: %w", err)
	}
	create := sql.OpenDB(connector)
	o.sizePool(create)
	return &pools{primary: primary, read: primary, create: create, migrateCfg: migrateCfg,
		dialector: gormmysql.New(gormmysql.Config{Conn: primary})}, nil
}

// openReplicas opens a pool per MySQL read replica (o.ReplicaDSNs).
func (p *pools) openReplicas(o Options, log *slog.Logger) error {
	if len(o.ReplicaDSNs) > 0 && o.Driver != DriverMySQL {
		return errors.New("read replicas need MySQL")
	}
	for i, dsn := range o.ReplicaDSNs {
		r, _, err := openMySQL(dsn, log)
		if err != nil {
			return fmt.Errorf("replica %d: %w", i+1, err)
		}
		o.sizePool(r)
		p.replicas = append(p.replicas, r)
		// A replica that is not up yet does not hold the start: the primary
		// is what the service needs; reads sent to a dead replica answer 503
		// until it returns.
		p.replicaDia = append(p.replicaDia, gormmysql.New(gormmysql.Config{Conn: r, SkipInitializeWithVersion: true}))
	}
	return nil
}

// openGORM opens GORM over the pools and routes its reads: some pet reads
// to the MySQL replicas, or every plain read to SQLite's readers.
func (p *pools) openGORM(o Options, log *slog.Logger) (*gorm.DB, error) {
	slow := o.SlowThreshold
	if slow <= 0 {
		slow = defaultSlowThreshold
	}
	db, err := gorm.Open(p.dialector, &gorm.Config{
		// Every write is a single statement or an explicit transaction.
		SkipDefaultTransaction: true,
		// No PrepareStmt: GORM's statement cache can deadlock a full pool.
		// A lookup waits, holding the cache's read lock, for a statement
		// that another goroutine is preparing on a connection of the pool;
		// if every connection is held by a transaction whose next query
		// needs that lock (a writer queued behind the reader blocks it),
		// nothing moves again. It hung 100 concurrent console requests
		// (TestLastAdminConcurrentRequests, pool of 20, 1 run in 3 under
		// -race; goroutine dump: lruStore.Get under PreparedStmtDB.prepare).
		// The API's hot path prepares its fixed statements itself
		// (pets_statements.go); other queries are prepared by the driver per call
		// on the connection that runs them (modernc keeps SQLite's per
		// connection), which needs no shared lock.
		Logger: slowQueriesOnly{logger.NewSlogLogger(log, logger.Config{
			SlowThreshold:        slow,
			LogLevel:             logger.Warn,
			ParameterizedQueries: true, // never log values: they include password and key hashes
		})},
		NowFunc: func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	switch {
	case len(p.replicaDia) > 0:
		// Only the pets table's reads are routed (the forced-index name is
		// how ListPets names it when it filters by status), and of those
		// only the ones that ask for it (PetQuery.AllowStale).
		resolver := dbresolver.Register(dbresolver.Config{Replicas: p.replicaDia, Policy: dbresolver.RandomPolicy{}},
			"pets", petsByStatus)
		if err := db.Use(resolver); err != nil {
			return nil, fmt.Errorf("read replicas: %w", err)
		}
	case p.read != p.primary:
		// SQLite: every table's plain reads go to the readers.
		readers := gormsqlite.New(gormsqlite.Config{DriverName: sqliteDriver, Conn: p.read})
		if err := db.Use(dbresolver.Register(dbresolver.Config{Replicas: []gorm.Dialector{readers}})); err != nil {
			return nil, fmt.Errorf("sqlite readers: %w", err)
		}
	}
	return db, nil
}

// close closes every pool.
func (p *pools) close() error {
	for _, r := range p.replicas {
		r.Close()
	}
	if p.read != p.primary {
		p.read.Close()
	}
	if p.create != nil {
		p.create.Close()
	}
	return p.primary.Close()
}

// openMySQL opens a pool on dsn with the settings petstore relies on
// (mysqlConfig) and the driver's messages sent to log; it returns the
// config too, for variants such as the migrations' connection.
func openMySQL(dsn string, log *slog.Logger) (*sql.DB, *mysql.Config, error) {
	cfg, err := mysqlConfig(dsn)
	if err != nil {
		return nil, nil, err
	}
	cfg.Logger = driverLogger{log}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open mysql: %w", err)
	}
	return sql.OpenDB(connector), cfg, nil
}

// sizePool applies the configured pool sizes and lifetime to db.
func (o Options) sizePool(db *sql.DB) {
	if o.MaxOpenConns > 0 {
		db.SetMaxOpenConns(o.MaxOpenConns)
	}
	if o.MaxIdleConns > 0 {
		db.SetMaxIdleConns(o.MaxIdleConns)
	}
	if o.ConnMaxLifetime > 0 {
		db.SetConnMaxLifetime(o.ConnMaxLifetime)
	}
}

// sqliteMaxReaders is the most SQLite readers worth having: four per CPU
// the Go scheduler uses.
func sqliteMaxReaders() int { return 4 * runtime.GOMAXPROCS(0) }

// sqliteDriver is the database/sql name of modernc.org/sqlite, a pure-Go
// SQLite that keeps each connection's prepared statements.
const sqliteDriver = "sqlite"

// sqliteDSN adds the pragmas petstore needs: WAL so readers never block the
// writer, a busy timeout so that another process's writer (a CLI command
// beside the server) is waited for instead of failing, and for the writer
// immediate transactions, so a transaction never fails on lock upgrade,
// and checkpoints left to the Store (sqlite_wal.go) unless the log grows
// past walAutoCheckpointPages; readers are query-only.
func sqliteDSN(path string, writer bool) string {
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"
	if writer {
		return dsn + "&_txlock=immediate" +
			fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)&_pragma=journal_size_limit(%d)", walAutoCheckpointPages, walSizeLimit)
	}
	return dsn + "&_pragma=query_only(1)"
}

// walAutoCheckpointPages is the size of SQLite's log (in pages of 4 KiB)
// past which the writer checkpoints it itself: far beyond what the Store's
// own checkpoints let it reach while they keep up. walSizeLimit is the
// size the log's file is cut back to once copied, so a burst's log does
// not keep its disk space.
const (
	walAutoCheckpointPages = 16384
	walSizeLimit           = 64 << 20
)

// ioTimeout bounds each read from and write to MySQL unless DATABASE_URL
// sets readTimeout or writeTimeout. A database that accepts connections but
// does not answer (a hung host, a network partition) then fails a request
// with 503 after this long instead of holding it until the client gives up:
// not every request has a deadline.
// Every query of the request path takes milliseconds; migrations use a
// connection of their own without these timeouts.
const ioTimeout = 10 * time.Second

// mysqlConfig forces the settings the schema and the code rely on: utf8mb4
// for any Unicode name, DATETIME scanned as time.Time in UTC, and bounded
// dials, reads and writes.
func mysqlConfig(dsn string) (*mysql.Config, error) {
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("invalid mysql DSN: %w", err)
	}
	c.ParseTime = true
	c.Loc = time.UTC
	c.Collation = "utf8mb4_unicode_ci"
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Second
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = ioTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = ioTimeout
	}
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	c.Params["time_zone"] = "'+00:00'"
	return c, nil
}

// driverLogger sends the MySQL driver's own messages (such as a pooled
// connection found dead after a database restart) to the service's log, so
// they keep its format instead of going raw to stderr.
type driverLogger struct{ log *slog.Logger }

func (l driverLogger) Print(v ...any) {
	l.log.Warn("mysql driver", "message", strings.TrimSpace(fmt.Sprint(v...)))
}

// waitForDB pings until the database answers or the timeout passes, backing
// off from 100 ms to 2 s between tries.
func waitForDB(ctx context.Context, db *sql.DB, timeout time.Duration, log *slog.Logger) error {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := 100 * time.Millisecond
	start := time.Now()
	for {
		pingCtx, pingCancel := context.WithTimeout(ctx, 5*time.Second)
		err := db.PingContext(pingCtx)
		pingCancel()
		if err == nil {
			return nil
		}
		if isPermanent(err) {
			return fmt.Errorf("database refused the connection: %w", err)
		}
		log.Info("database not answering yet, retrying", "error", err, "waited", time.Since(start).Round(time.Millisecond).String())
		select {
		case <-ctx.Done():
			return fmt.Errorf("database did not answer within %s: %w", timeout, err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
	}
}

// isPermanent reports errors that waiting will not cure: bad credentials, an
// unknown database, or a SQLite file that cannot be opened.
func isPermanent(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1044, 1045, 1049: // access denied to db, access denied, unknown database
			return true
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "unable to open database file") || strings.Contains(msg, "out of memory (14)")
}

// defaultSlowThreshold is how long a statement runs before it is logged.
const defaultSlowThreshold = 500 * time.Millisecond

// slowQueriesOnly keeps GORM's slow-query warnings but drops its log of
// failed statements: the Store classifies every error (a duplicate key is
// often expected), and the callers log the ones that are server errors.
//
// It also never lets a value reach the log: statements carry password and
// key hashes, session ids, usernames and client addresses. GORM asks the
// logger itself (gorm.ParamsFilter) whether to write values into the
// statement it logs; a wrapper that does not answer loses the inner
// logger's ParameterizedQueries, so this one answers: no values, ever.
type slowQueriesOnly struct{ logger.Interface }

var _ gorm.ParamsFilter = slowQueriesOnly{}

// ParamsFilter drops the values of a statement before GORM renders it for
// the log: placeholders stay as ?.
func (l slowQueriesOnly) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

func (l slowQueriesOnly) LogMode(level logger.LogLevel) logger.Interface {
	return slowQueriesOnly{l.Interface.LogMode(level)}
}

func (l slowQueriesOnly) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if err == nil {
		l.Interface.Trace(ctx, begin, fc, err)
	}
}

// Ping checks that the database answers, for readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.sqlDB.PingContext(ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			return canceled("ping", err)
		}
		return &Error{Code: CodeUnavailable, Message: "The database is not answering; try again shortly.", Err: err}
	}
	return nil
}

// Close closes the connection pools.
func (s *Store) Close() error {
	s.bulk.bg.Close()
	s.archive.bg.Close()
	s.undo.close()
	s.imports.sweep.Close()
	s.imports.bg.Close()
	s.wal.bg.Close()
	s.feed.stop()
	s.idem.close()
	s.pets.counts.bg.Close()
	s.closePetStatements()
	p := pools{primary: s.sqlDB, read: s.readDB, create: s.createDB, replicas: s.replicas}
	return p.close()
}

// Pools names the connection pools for their statistics: "petstore" is the
// pool sized by DATABASE_MAX_OPEN_CONNS (MySQL's, or SQLite's readers) and,
// on SQLite, "petstore_writer" is the one connection that writes.
func (s *Store) Pools() map[string]*sql.DB {
	if s.readDB == s.sqlDB {
		return map[string]*sql.DB{"petstore": s.sqlDB}
	}
	return map[string]*sql.DB{"petstore": s.readDB, "petstore_writer": s.sqlDB}
}

// dbErr classifies an error from the database. The caller's context
// cancelled is the caller giving up (CodeCanceled), not the database
// failing: an HTTP client that hung up. A context deadline (the service's
// own bound on the work, such as defaultCreateTimeout) is unavailable, its cause
// DeadlineExceeded kept for the logs and metrics to tell it apart; a
// dropped or refused connection, or a database that does not answer within
// the driver's I/O timeout, or a cluster's passing state (isTransient: a
// conflict that retries did not get past, a node not ready or shutting
// down) is unavailable (retryable); anything else is internal.
func (s *Store) dbErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return canceled(op, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeUnavailable, Message: "The database did not answer in time; try again shortly.", Err: fmt.Errorf("%s: %w", op, err)}
	}
	if isConnErr(err) {
		return &Error{Code: CodeUnavailable, Message: "The database is not answering; try again shortly.", Err: fmt.Errorf("%s: %w", op, err)}
	}
	if isTransient(err) {
		return &Error{Code: CodeUnavailable, Message: "The database could not take this request just now; try again shortly.", Err: fmt.Errorf("%s: %w", op, err)}
	}
	return internal(op, err)
}

// canceled is the failure of an operation whose caller gave up.
func canceled(op string, err error) error {
	return &Error{Code: CodeCanceled, Message: "The request was cancelled before it was answered.", Err: fmt.Errorf("%s: %w", op, err)}
}

func isConnErr(err error) bool {
	if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "broken pipe", "connection reset", "bad connection", "i/o timeout", "database is locked"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// isDuplicate reports a unique-index violation on either engine.
func isDuplicate(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1062 {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
