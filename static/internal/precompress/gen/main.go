// Command gen writes the static files' compressed forms; `go generate
// ./static` runs it in static/.
package main

import (
	"fmt"
	"os"

	"petstore/static/internal/precompress"
)

func main() {
	if err := precompress.Generate(os.DirFS("."), precompress.Dir); err != nil {
		fmt.Fprintln(os.Stderr, "precompress:", err)
		os.Exit(1)
	}
}
