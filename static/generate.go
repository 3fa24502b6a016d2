package static

// The compressed forms of the files, committed and embedded: `make check`
// fails when they are stale.
//go:generate go run ./internal/precompress/gen
