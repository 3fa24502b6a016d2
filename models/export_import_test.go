package models

import "time"

// SetImportChunkHook makes every import runner call fn after each
// committed chunk; an error from fn stops the runner there, as a process
// that dies does. It returns what undoes it.
func SetImportChunkHook(fn func(Import) error) (undo func()) {
	importChunkHook.Store(&fn)
	return func() { importChunkHook.Store(nil) }
}

// ImportLease is how long a runner holds an import between chunks.
func ImportLease() time.Duration { return importLease }
