package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"petstore/config"
	"petstore/models"
)

// backup writes a backup of DATABASE_URL to a file or stdout.
func (c cli) backup(ctx context.Context, args []string) int {
	var out string
	fs, code, ok := c.flags("backup --out PATH|-",
		"Writes a backup of DATABASE_URL (every table but the sessions, consistent as of one instant, while the service runs) to PATH, "+
			"or to stdout with -: petstore's own compressed format, which `petstore restore` loads into SQLite or MySQL, whichever wrote it. "+
			"A file is written under a temporary name and renamed when whole. It holds password and API key hashes and webhook "+
			"signing secrets: keep it where only operators can read it. See docs/operations.md.", args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&out, "out", "", "the file to write, or - for stdout (required)")
		})
	if !ok {
		return code
	}
	if out == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return c.fail(err)
	}
	// Not migrated: a backup holds the database as it is, with its own
	// schema version, even when this petstore is newer (before an upgrade).
	store, err := openUnmigrated(ctx, cfg, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	if out == "-" {
		sum, err := store.Backup(ctx, c.stdout, buildVersion())
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(c.stderr, "wrote a backup to stdout: %s\n", describeBackup(sum))
		return 0
	}
	sum, size, err := writeBackupFile(ctx, store, out)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "wrote %s (%d bytes): %s\n", out, size, describeBackup(sum))
	return 0
}

// describeBackup says in one line what a backup holds.
func describeBackup(sum models.BackupSummary) string {
	h := sum.Header
	return fmt.Sprintf("%d tables, %d rows, schema version %d, from %s at %s (petstore %s)", len(sum.Tables), sum.Rows(),
		h.SchemaVersion, h.Engine, h.CreatedAt.Format(time.RFC3339), h.Petstore)
}

// writeBackupFile writes a backup to path through a temporary file in the
// same directory, synced before it is renamed to path: a crash or a failed
// backup never leaves a partial file under a backup's name.
func writeBackupFile(ctx context.Context, store *models.Store, path string) (models.BackupSummary, int64, error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return models.BackupSummary{}, 0, fmt.Errorf("backup: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return models.BackupSummary{}, 0, fmt.Errorf("backup: %w", err)
	}
	sum, err := store.Backup(ctx, tmp, buildVersion())
	if err != nil {
		return models.BackupSummary{}, 0, err
	}
	if err := tmp.Sync(); err != nil {
		return models.BackupSummary{}, 0, fmt.Errorf("backup: sync %s: %w", tmp.Name(), err)
	}
	info, err := tmp.Stat()
	if err != nil {
		return models.BackupSummary{}, 0, fmt.Errorf("backup: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return models.BackupSummary{}, 0, fmt.Errorf("backup: close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return models.BackupSummary{}, 0, fmt.Errorf("backup: %w", err)
	}
	done = true
	// The rename is durable once the directory is synced.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return sum, info.Size(), nil
}

// restore loads a backup into DATABASE_URL, or only verifies it.
func (c cli) restore(ctx context.Context, args []string) int {
	var in string
	var replace, check bool
	fs, code, ok := c.flags("restore --in PATH [--replace] | restore --check --in PATH",
		"Loads a backup written by `petstore backup` into DATABASE_URL, on SQLite or MySQL whichever engine wrote it. "+
			"The database is migrated first (a new database to the backup's schema version, then on, when the backup is older); "+
			"a database that holds data is refused unless --replace. The whole file is "+
			"verified (format, schema version, row counts, checksum) before anything is written, and the rows are written "+
			"in one transaction: a damaged file or a failure leaves the database as it was. Everyone is signed out. "+
			"Stop the service before a restore and start it after. With --check, only verifies the file (no database needed).", args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&in, "in", "", "the backup file to read (required)")
			fs.BoolVar(&replace, "replace", false, "delete what the database holds and replace it with the backup")
			fs.BoolVar(&check, "check", false, "verify the file without writing anything")
		})
	if !ok {
		return code
	}
	if in == "" || fs.NArg() > 0 || (check && replace) {
		fs.Usage()
		return 2
	}
	open := func() (io.ReadCloser, error) {
		f, err := os.Open(in)
		if err != nil {
			return nil, fmt.Errorf("cannot read the backup: %w", err)
		}
		return f, nil
	}
	// The whole file is verified before the database is opened: a damaged
	// or foreign file leaves no trace there, not even a new SQLite file or
	// the schema of an empty database.
	start := time.Now()
	verified, err := models.VerifyBackup(open)
	if err != nil {
		return c.fail(backupError(in, err))
	}
	if check {
		fmt.Fprintf(c.stdout, "%s is a whole backup: %s\n", in, describeBackup(verified.Summary))
		return 0
	}
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return c.fail(err)
	}
	store, err := openUnmigrated(ctx, cfg, c.quietLogger())
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	sum, migrated, err := store.MigrateAndRestore(ctx, verified, open, models.RestoreOptions{Replace: replace})
	if err != nil {
		return c.fail(backupError(in, err))
	}
	fmt.Fprintf(c.stdout, "restored %s in %.1f s: %s\n", in, time.Since(start).Seconds(), describeBackup(sum))
	if len(migrated.Applied) > 0 {
		fmt.Fprintf(c.stdout, "then migrated it to schema version %d\n", migrated.Version)
	}
	return 0
}

// backupError names the file in an error about its contents.
func backupError(path string, err error) error {
	if errors.Is(err, models.ErrBadBackup) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return err
}

// backupSchedule takes serve's scheduled backups: one per interval into
// dir, keeping the newest keep files. Every instance runs one; of those on
// one database, the one whose claim of an interval is recorded first
// takes that interval's backup (models.ClaimBackup).
type backupSchedule struct {
	store    *models.Store
	dir      string
	interval time.Duration
	keep     int
	// instance names this process in the claims: host and pid.
	instance string
	log      *slog.Logger
	now      func() time.Time
	// done is the last slot this instance claimed or saw claimed.
	done time.Time
	// lastSuccess is the newest successful backup of any instance, in Unix
	// nanoseconds, as last read; 0 when none is known.
	lastSuccess atomic.Int64
}

func newBackupSchedule(store *models.Store, b config.Backups, log *slog.Logger) *backupSchedule {
	host, _ := os.Hostname()
	return &backupSchedule{store: store, dir: b.Dir, interval: b.Interval, keep: b.Keep, log: log, now: time.Now,
		instance: fmt.Sprintf("%s/%d", host, os.Getpid())}
}

// prepare creates the directory and checks that it can be written, so that
// a wrong BACKUP_DIR stops the start instead of failing at the first
// backup.
func (b *backupSchedule) prepare() error {
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return &config.Error{Var: "BACKUP_DIR", Msg: err.Error()}
	}
	f, err := os.CreateTemp(b.dir, ".petstore-check-*")
	if err != nil {
		return &config.Error{Var: "BACKUP_DIR", Msg: fmt.Sprintf("%s cannot be written: %v", b.dir, err)}
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// start runs the schedule in the background until ctx ends or the
// returned function is called; that function returns once the schedule
// has stopped (a backup under way is abandoned, its temporary file
// removed), so that the store can be closed after it.
func (b *backupSchedule) start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		b.run(ctx)
	}()
	return func() {
		cancel()
		<-stopped
	}
}

// run takes the backups until ctx ends: at each interval's start, and
// soon after a start when the current interval has none yet. It wakes at
// least once a minute to refresh what the metrics show.
func (b *backupSchedule) run(ctx context.Context) {
	for {
		b.tick(ctx)
		now := b.now()
		wait := min(b.slot(now).Add(b.interval).Sub(now), time.Minute)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// slot is the start of the interval t falls in: the same on every
// instance, whenever each started.
func (b *backupSchedule) slot(t time.Time) time.Time {
	return t.UTC().Truncate(b.interval)
}

// tick takes the current interval's backup if no instance has claimed it,
// and reports whether this instance took it.
func (b *backupSchedule) tick(ctx context.Context) bool {
	defer b.refresh(ctx)
	slot := b.slot(b.now())
	if !slot.After(b.done) {
		return false
	}
	claimed, err := b.store.ClaimBackup(ctx, slot, b.interval, b.instance)
	if err != nil {
		b.log.Error("scheduled backup: cannot claim the interval's backup", "slot", slot, "err", err)
		return false
	}
	b.done = slot
	if !claimed {
		return false
	}
	file := filepath.Join(b.dir, "petstore-"+slot.Format("20060102T150405Z")+".backup")
	start := time.Now()
	sum, size, err := writeBackupFile(ctx, b.store, file)
	if err != nil && ctx.Err() != nil {
		err = errors.New("the instance stopped during the backup")
	}
	if ferr := b.store.FinishBackup(context.WithoutCancel(ctx), slot, sum, file, size, err); ferr != nil {
		b.log.Error("scheduled backup: cannot record its outcome", "file", file, "err", ferr)
	}
	if err != nil {
		b.log.Error("scheduled backup failed", "file", file, "err", err)
		return true
	}
	b.log.Info("scheduled backup written", "file", file, "bytes", size, "rows", sum.Rows(), "seconds", time.Since(start).Seconds())
	b.prune()
	return true
}

// refresh reads the newest successful backup for the metrics.
func (b *backupSchedule) refresh(ctx context.Context) {
	st, err := b.store.BackupStatus(ctx)
	if err != nil || st.LastSuccess == nil || st.LastSuccess.FinishedAt == nil {
		return
	}
	b.lastSuccess.Store(st.LastSuccess.FinishedAt.UnixNano())
}

// LastSuccess is the end of the newest successful scheduled backup of any
// instance, or the zero time.
func (b *backupSchedule) LastSuccess() time.Time {
	if n := b.lastSuccess.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// prune deletes the scheduled backups in dir beyond the newest keep. Their
// names sort by time; other files are left alone.
func (b *backupSchedule) prune() {
	files, err := filepath.Glob(filepath.Join(b.dir, "petstore-*.backup"))
	if err != nil || len(files) <= b.keep {
		return
	}
	slices.Sort(files)
	for _, f := range files[:len(files)-b.keep] {
		if err := os.Remove(f); err != nil {
			b.log.Error("scheduled backup: cannot delete an old backup", "file", f, "err", err)
		}
	}
}
