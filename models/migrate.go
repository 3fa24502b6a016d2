package models

import (
	"context"
	"database/sql"
	"embed"
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
	sub, err := fs.Sub(migrations, "migrations/"+s.driver)
	if err != nil {
		return MigrationResult{}, err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	dialect := goose.DialectSQLite3
	if s.driver == DriverMySQL {
		dialect = goose.DialectMySQL
		locker, err := lock.NewMySQLTableLocker(
			lock.WithTableLockTimeout(500*time.Millisecond, 600), // wait up to 5 minutes for another instance
		)
		if err != nil {
			return MigrationResult{}, err
		}
		opts = append(opts, goose.WithLocker(locker))
	}
	db := s.sqlDB
	if s.migrateCfg != nil {
		connector, err := mysql.NewConnector(s.migrateCfg)
		if err != nil {
			return MigrationResult{}, err
		}
		db = sql.OpenDB(connector)
		defer db.Close()
	}
	p, err := goose.NewProvider(dialect, db, sub, opts...)
	if err != nil {
		return MigrationResult{}, fmt.Errorf("load migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return MigrationResult{}, fmt.Errorf("migrate: %w", err)
	}
	if err := s.buildNameIndex(ctx); err != nil {
		return MigrationResult{}, fmt.Errorf("migrate: build the name search index: %w", err)
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
