package e2e

// The CSV export's measurement (a million pets exported with the server's
// peak RSS under 64 MiB): the real binary on a fresh
// SQLite file and a fresh MariaDB database, each seeded by `petstore seed`,
// then each export downloaded whole by a signed-in client that streams it
// (checking every row, holding none). It writes rows, bytes, seconds and
// the server's peak RSS (VmHWM, /proc/PID/status) to
// testdata/exportbench.txt. It asserts no figures; it runs only when asked:
//
//	PETSTORE_EXPORTBENCH=1 PETSTORE_REQUIRE_MARIADB=1 go test -count=1 -v -timeout 60m -run '^TestExportBench$' .
//
// EXPORTBENCH_ROWS sets the pets seeded (default 1000000).

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// exportCase is one export the benchmark downloads.
type exportCase struct {
	name, path string
	want       func(rows int) (int, bool) // the rows it must have, when known
}

// exportResult is what one export measured.
type exportResult struct {
	engine, version, name string
	rows                  int
	bytes                 int64
	firstByte, total      time.Duration
	rssBefore, rssAfter   float64 // the server's VmHWM, MiB
}

func TestExportBench(t *testing.T) {
	if os.Getenv("PETSTORE_EXPORTBENCH") != "1" {
		t.Skip("the export benchmark runs only with PETSTORE_EXPORTBENCH=1")
	}
	rows := envInt(t, "EXPORTBENCH_ROWS", 1_000_000, 1000)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Fatalf("the export benchmark reads peak RSS from /proc (Linux): %v", err)
	}
	testkit.Binary(t) // built once, before anything is timed
	var results []exportResult
	seeds := map[string]time.Duration{}
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			res, seeded := benchExports(t, driver, rows)
			results = append(results, res...)
			seeds[driver] = seeded
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CSV export (GET /admin/pets/export.csv, chunks of %d), %s, commit %s, %s, %d CPUs (%s), %d pets seeded\n",
		models.ExportChunk, time.Now().UTC().Format(time.RFC3339), gitCommit(), runtime.Version(), runtime.NumCPU(), cpuModel(), rows)
	fmt.Fprintf(&b, "%-8s %-8s %-10s %9s %11s %9s %10s %9s %13s %12s\n",
		"engine", "version", "export", "rows", "bytes", "seconds", "rows/s", "first ms", "peak RSS MiB", "before MiB")
	for _, r := range results {
		fmt.Fprintf(&b, "%-8s %-8s %-10s %9d %11d %9.2f %10.0f %9.1f %13.1f %12.1f\n", r.engine, strings.SplitN(r.version, "-", 2)[0], r.name,
			r.rows, r.bytes, r.total.Seconds(), float64(r.rows)/r.total.Seconds(), float64(r.firstByte.Microseconds())/1000, r.rssAfter, r.rssBefore)
	}
	for _, driver := range modelstest.Drivers {
		fmt.Fprintf(&b, "seed %s: %.1f s\n", driver, seeds[driver].Seconds())
	}
	fmt.Print("\n" + b.String())
	dir := testkit.RepoPath(t, "testdata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "exportbench.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("wrote testdata/exportbench.txt")
}

// benchExports seeds a fresh database on driver, starts the server on it
// and downloads each export, the whole table first.
func benchExports(t *testing.T, driver string, rows int) ([]exportResult, time.Duration) {
	databaseURL := modelstest.URL(t, driver)
	vars := map[string]string{"DATABASE_URL": databaseURL}
	testkit.WantCode(t, testkit.RunBinary(t, vars, "migrate"), 0)
	store := testkit.OpenStore(t, databaseURL)
	engine, version := engineVersion(t, driver, store)
	start := time.Now()
	seedPets(t, vars, store, rows)
	seeded := time.Since(start)
	if _, err := store.CreateUserWithRole(context.Background(), "reader", memberPassword, models.RoleViewer, "bench"); err != nil {
		t.Fatal(err)
	}
	store.Close() // the server is the only client while it is measured
	t.Logf("%s %s: %d pets seeded in %.1f s", engine, version, rows, seeded.Seconds())

	srv := startBenchServer(t, databaseURL)
	c := testkit.SignedIn(t, srv.Base, "reader", memberPassword)
	client := &http.Client{Jar: c.HTTP.Jar, Timeout: 30 * time.Minute}
	cases := []exportCase{
		{"all", "/admin/pets/export.csv", func(n int) (int, bool) { return n, true }},
		{"sold", "/admin/pets/export.csv?status=sold", func(n int) (int, bool) { return 0, false }},
		{"q=pépé", "/admin/pets/export.csv?q=p%C3%A9p%C3%A9", func(n int) (int, bool) { return 0, false }},
	}
	var out []exportResult
	for _, ec := range cases {
		waitQuiet(t, ec.name, 10*time.Second)
		r := exportResult{engine: engine, version: version, name: ec.name, rssBefore: srv.peakRSS(t)}
		r.rows, r.bytes, r.firstByte, r.total = downloadExport(t, client, srv.Base+ec.path)
		r.rssAfter = srv.peakRSS(t)
		if want, known := ec.want(rows); known && r.rows != want {
			t.Errorf("%s: %d rows, want %d", ec.name, r.rows, want)
		}
		if r.rows == 0 {
			t.Errorf("%s: no rows", ec.name)
		}
		t.Logf("%s %-7s %8d rows %11d bytes in %6.2f s (first byte %.1f ms), server peak RSS %.1f MiB (%.1f before)",
			engine, ec.name, r.rows, r.bytes, r.total.Seconds(), float64(r.firstByte.Microseconds())/1000, r.rssAfter, r.rssBefore)
		out = append(out, r)
	}
	srv.Stop(t)
	return out, seeded
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// downloadExport downloads an export, reading it as CSV row by row: six
// cells a row, ids falling. It returns the rows, the bytes, the time to
// the first byte and the time to the last.
func downloadExport(t *testing.T, client *http.Client, url string) (int, int64, time.Duration, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	firstByte := time.Since(start)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, res.Header.Get("Content-Type"))
	}
	body := &countingReader{r: res.Body}
	r := csv.NewReader(body)
	r.FieldsPerRecord, r.ReuseRecord = 6, true
	if _, err := r.Read(); err != nil {
		t.Fatalf("the header row: %v", err)
	}
	rows, last := 0, int64(1<<63-1)
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d rows: %v", rows, err)
		}
		id, err := strconv.ParseInt(rec[0], 10, 64)
		if err != nil || id >= last {
			t.Fatalf("row %d: id %q after %d", rows+1, rec[0], last)
		}
		last = id
		rows++
	}
	return rows, body.n, firstByte, time.Since(start)
}
