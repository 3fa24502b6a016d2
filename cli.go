package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"petstore/config"
	"petstore/models"
)

// cli is what a command may touch; tests give their own.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// flags parses a command's flags; it returns ok=false with the exit code
// when the command should stop (after --help or a usage error).
func (c cli) flags(name, synopsis string, args []string, define func(*flag.FlagSet)) (*flag.FlagSet, int, bool) {
	fs := flag.NewFlagSet("petstore "+name, flag.ContinueOnError)
	// Asked-for help goes to stdout (so it can be paged); usage errors to stderr.
	fs.SetOutput(c.stderr)
	for _, a := range args {
		if isHelp(a) {
			fs.SetOutput(c.stdout)
		}
	}
	if define != nil {
		define(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: petstore %s\n\n%s\n", name, synopsis)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0, false
		}
		return nil, 2, false
	}
	return fs, 0, true
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// fail prints one line and returns exit code 1. Configuration errors name
// their variable.
func (c cli) fail(err error) int {
	fmt.Fprintf(c.stderr, "petstore: %v\n", err)
	return 1
}

// logger is the log of serve and migrate: from INFO up, on stderr, in the
// configured LOG_FORMAT.
func (c cli) logger(cfg config.Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if cfg.LogFormat == config.LogJSON {
		return slog.New(slog.NewJSONHandler(c.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(c.stderr, opts))
}

// quietLogger logs only warnings, so commands print just their result.
func (c cli) quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// openDatabase connects to cfg's database and brings its schema up to date:
// the one migration run of a command.
func openDatabase(ctx context.Context, cfg config.Config, log *slog.Logger) (*models.Store, models.MigrationResult, error) {
	db := cfg.Database
	store, err := openUnmigrated(ctx, cfg, log)
	if err != nil {
		return nil, models.MigrationResult{}, err
	}
	res, err := store.Migrate(ctx)
	if err != nil {
		store.Close()
		return nil, models.MigrationResult{}, fmt.Errorf("DATABASE_URL: cannot migrate %s: %w", db.Redacted, err)
	}
	if len(res.Applied) > 0 {
		log.Info("database migrated", "database", db.Redacted, "applied", res.Applied, "version", res.Version)
	}
	return store, res, nil
}

// openUnmigrated connects to cfg's database without migrating it, for
// restore, which migrates it to a backup's own version.
func openUnmigrated(ctx context.Context, cfg config.Config, log *slog.Logger) (*models.Store, error) {
	db := cfg.Database
	store, err := models.Open(ctx, models.Options{
		Driver: string(db.Driver), DSN: db.DSN, ReplicaDSNs: db.ReplicaDSNs, MaxOpenConns: db.MaxOpenConns, MaxIdleConns: db.MaxIdleConns,
		ConnMaxLifetime: db.ConnMaxLifetime, ConnectTimeout: db.ConnectTimeout, Logger: log, SecretKeys: cfg.SecretKeys,
		Zone: cfg.TimeZone,
	})
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: cannot use %s: %w", db.Redacted, err)
	}
	return store, nil
}

// open loads the configuration and opens the store, for the operator
// commands: they log only warnings and print just their result.
func (c cli) open(ctx context.Context) (*models.Store, error) {
	return c.openLogging(ctx, c.quietLogger())
}

// openLogging is open with the database's warnings going to log.
func (c cli) openLogging(ctx context.Context, log *slog.Logger) (*models.Store, error) {
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return nil, err
	}
	store, _, err := openDatabase(ctx, cfg, log)
	return store, err
}

// userMessage turns a models error into its user-facing message.
func userMessage(err error) error {
	var e *models.Error
	if errors.As(err, &e) && e.Code != models.CodeInternal {
		return errors.New(e.Message)
	}
	return err
}
