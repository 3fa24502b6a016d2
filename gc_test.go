package main

import (
	"runtime/debug"
	"testing"

	"petstore/config"
)

// Serving over MySQL raises the collector's target, unless GOGC says
// otherwise; over SQLite it stays Go's.
func TestTuneGC(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	for _, tc := range []struct {
		name   string
		driver config.Driver
		gogc   string
		want   int
	}{
		{"mysql", config.MySQL, "", mysqlGCPercent},
		{"mysql with GOGC set", config.MySQL, "100", 100},
		{"sqlite", config.SQLite, "", 100},
	} {
		debug.SetGCPercent(100)
		env := map[string]string{"GOGC": tc.gogc}
		tuneGC(config.Config{Database: config.Database{Driver: tc.driver}}, func(k string) string { return env[k] })
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("%s: GC percent %d, want %d", tc.name, got, tc.want)
		}
	}
}
