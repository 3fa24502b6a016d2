package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// BackupRun is one scheduled backup: the interval it was taken for, by
// which instance, and how it ended.
type BackupRun struct {
	// Slot is the start of the interval the backup was taken for.
	Slot time.Time
	// Interval is the schedule's interval when it was taken.
	Interval   time.Duration
	Instance   string
	StartedAt  time.Time
	FinishedAt *time.Time
	// File is the backup's path on the instance that wrote it.
	File            string
	Size            int64
	SchemaVersion   int64
	PetstoreVersion string
	// Error is why the backup failed; "" when it succeeded or is running.
	Error string
}

// Succeeded says the backup was written whole.
func (r BackupRun) Succeeded() bool { return r.FinishedAt != nil && r.Error == "" }

// backupRow is the backups table's row.
type backupRow struct {
	Slot            int64 `gorm:"primaryKey;autoIncrement:false"`
	Instance        string
	IntervalSeconds int64
	StartedAt       time.Time
	FinishedAt      *time.Time
	File            string
	Size            int64
	SchemaVersion   int64
	PetstoreVersion string
	Error           string
}

func (backupRow) TableName() string { return "backups" }

func (r backupRow) run() BackupRun {
	return BackupRun{Slot: time.Unix(r.Slot, 0).UTC(), Interval: time.Duration(r.IntervalSeconds) * time.Second, Instance: r.Instance, StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt,
		File: r.File, Size: r.Size, SchemaVersion: r.SchemaVersion, PetstoreVersion: r.PetstoreVersion, Error: r.Error}
}

// ClaimBackup records that instance takes the backup of the interval that
// starts at slot and lasts interval, and reports whether it got it: of several instances
// that claim one slot, the first insert wins and the others are told no.
func (s *Store) ClaimBackup(ctx context.Context, slot time.Time, interval time.Duration, instance string) (bool, error) {
	insert := "INSERT INTO backups (slot, interval_seconds, instance, started_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
	if s.driver == DriverMySQL {
		insert = "INSERT IGNORE INTO backups (slot, interval_seconds, instance, started_at) VALUES (?, ?, ?, ?)"
	}
	res := s.db.WithContext(ctx).Exec(insert, slot.Unix(), int64(interval/time.Second), instance, s.now())
	if res.Error != nil {
		return false, s.dbErr("claim a backup", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// FinishBackup records how the backup of slot ended: err nil and its file,
// size and versions, or the error.
func (s *Store) FinishBackup(ctx context.Context, slot time.Time, sum BackupSummary, file string, size int64, err error) error {
	now := s.now()
	row := map[string]any{"finished_at": now, "file": file, "size": size, "schema_version": sum.Header.SchemaVersion,
		"petstore_version": sum.Header.Petstore, "error": ""}
	if err != nil {
		msg := err.Error()
		if len(msg) > 1000 {
			msg = msg[:1000]
		}
		row = map[string]any{"finished_at": now, "error": msg}
	}
	if res := s.db.WithContext(ctx).Model(&backupRow{}).Where("slot = ?", slot.Unix()).Updates(row); res.Error != nil {
		return s.dbErr("record a backup", res.Error)
	}
	return nil
}

// BackupStatus is what the operations page shows of the scheduled
// backups: the newest that succeeded and the newest attempted.
type BackupStatus struct {
	LastSuccess *BackupRun
	Latest      *BackupRun
}

// SchemaVersion is the database's schema version.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	return s.schemaVersion(ctx)
}

// BackupStatus reads the newest successful and the newest attempted
// scheduled backup.
func (s *Store) BackupStatus(ctx context.Context) (BackupStatus, error) {
	var st BackupStatus
	var row backupRow
	err := s.db.WithContext(ctx).Order("slot DESC").Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return st, nil
	case err != nil:
		return st, s.dbErr("read the backups", err)
	}
	latest := row.run()
	st.Latest = &latest
	row = backupRow{}
	err = s.db.WithContext(ctx).Where("finished_at IS NOT NULL AND error = ''").Order("slot DESC").Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
	case err != nil:
		return st, s.dbErr("read the backups", err)
	default:
		ok := row.run()
		st.LastSuccess = &ok
	}
	return st, nil
}
