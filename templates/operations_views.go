package templates

// OperationsView is the operations page: the state of the scheduled
// backups.
type OperationsView struct {
	// SchemaVersion is the database's schema version now.
	SchemaVersion int64
	// Scheduled says any scheduled backup was ever recorded.
	Scheduled bool
	// Last is the newest successful scheduled backup; nil when none.
	Last *BackupView
	// Warning says what needs an operator's attention; "" when nothing.
	Warning string
	// Interval is the schedule's interval as the newest backup recorded it.
	Interval string
}

// BackupView is one backup as the operations page shows it.
type BackupView struct {
	When, Age, Size, File, Instance, Version string
	SchemaVersion                            int64
}
