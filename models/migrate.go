package models

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/mysql/*.sql migrations/sqlite/*.sql
var migrations embed.FS

// MigrationResult says what Migrate did.
type MigrationResult struct {
	// Applied lists the versions applied by this call, oldest first.
	Applied []int64
	// Version is the schema version after the call.
	Version int64
}

// Migrate brings the schema up to date with the versioned migrations in
// migrations/<driver>/, recording each in the goose_db_version table. On
// MySQL a lock table serialises instances that start at once.
func (s *Store) Migrate(ctx context.Context) (MigrationResult, error) {
	return s.migrateTo(ctx, 0)
}

// migrateTo applies the migrations up to version, or all of them when
// version is 0 (Migrate); the name index is built only by the latter.
func (s *Store) migrateTo(ctx context.Context, version int64) (_ MigrationResult, err error) {
	sub, err := fs.Sub(migrations, "migrations/"+s.driver)
	if err != nil {
		return MigrationResult{}, err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	dialect := goose.DialectSQLite3
	db := s.sqlDB
	if s.driver == DriverMySQL {
		dialect = goose.DialectMySQL
		connector, err := mysql.NewConnector(s.migrateCfg)
		if err != nil {
			return MigrationResult{}, err
		}
		db = sql.OpenDB(connector)
		defer db.Close()
		unlock, err := lockMigrations(ctx, db)
		if err != nil {
			return MigrationResult{}, err
		}
		defer func() { err = errors.Join(err, unlock()) }()
	}
	p, err := goose.NewProvider(dialect, db, sub, opts...)
	if err != nil {
		return MigrationResult{}, fmt.Errorf("load migrations: %w", err)
	}
	var results []*goose.MigrationResult
	if version > 0 {
		results, err = p.UpTo(ctx, version)
	} else {
		results, err = p.Up(ctx)
	}
	if err != nil {
		return MigrationResult{}, fmt.Errorf("migrate: %w", err)
	}
	if version == 0 {
		if err := s.buildNameIndex(ctx); err != nil {
			return MigrationResult{}, fmt.Errorf("migrate: build the name search index: %w", err)
		}
	}
	var res MigrationResult
	for _, r := range results {
		res.Applied = append(res.Applied, r.Source.Version)
	}
	res.Version, err = p.GetDBVersion(ctx)
	if err != nil {
		return MigrationResult{}, fmt.Errorf("read schema version: %w", err)
	}
	return res, nil
}

// lockMigrations takes goose's MySQL lock table (waiting up to 5 minutes
// for another instance) and returns what gives it back. It is taken around
// everything goose does, not through goose.WithLocker, which takes it only
// to apply migrations: goose's Up first looks for pending ones unlocked,
// creating the version table and its zero row if missing. Two instances
// starting at once on a Galera cluster then both create the table; the
// loser's CREATE TABLE, ordered across the cluster, aborts the winner's
// INSERT of the zero row, and the table is left without it ("missing zero
// version migration", for every start after).
func lockMigrations(ctx context.Context, db *sql.DB) (func() error, error) {
	locker, err := lock.NewMySQLTableLocker(lock.WithTableLockTimeout(500*time.Millisecond, 600))
	if err != nil {
		return nil, err
	}
	if err := locker.Lock(ctx, db); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return func() error { return locker.Unlock(context.WithoutCancel(ctx), db) }, nil
}
