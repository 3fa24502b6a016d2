package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// printVersion prints the version and the Go release it was built with.
func (c cli) printVersion() int {
	fmt.Fprintf(c.stdout, "petstore %s (%s)\n", buildVersion(), runtime.Version())
	return 0
}

// buildVersion is the version set at build time, else the module version
// go install recorded, else "dev".
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}
