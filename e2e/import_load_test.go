package e2e

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// TestImportLoad imports a CSV file through the built binary on both
// engines, as a member does (upload, preview, import, progress), then the
// same file again, and writes the import's time (upload to the last pet)
// and the server's peak RSS to the figures file. It asserts what the
// import must do: every row added once, one audit event, and the repeat
// adding nothing. 2,000 rows in the tests; 100,000 (the most a file may
// hold) under make loadbench (PETSTORE_LOADBENCH=1).
func TestImportLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load measurement")
	}
	rows := 2_000
	if os.Getenv("PETSTORE_LOADBENCH") == "1" {
		rows = models.MaxImportRows
	}
	testkit.Binary(t) // built once, before anything is timed
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) { importLoad(t, driver, rows) })
	}
}

// importFileOf is a file of the export's shape with rows pets whose names
// carry accents, emoji, right-to-left text and formula-looking cells.
func importFileOf(rows int) []byte {
	var b bytes.Buffer
	b.WriteString("id,name,category_id,status,created_at,updated_at\r\n")
	names := []string{"Rex", "Pépé", "Mochi 🐾", "مرحبا", "'=1+1", "Luna"}
	statuses := []string{"available", "pending", "sold"}
	for i := range rows {
		fmt.Fprintf(&b, "%d,%s %d,%d,%s,2026-01-02T03:04:05Z,2026-01-02T03:04:05Z\r\n", i+1, names[i%len(names)], i, 1+i%100, statuses[i%3])
	}
	return b.Bytes()
}

func importLoad(t *testing.T, driver string, rows int) {
	databaseURL := modelstest.URL(t, driver)
	testkit.WantCode(t, testkit.RunBinary(t, map[string]string{"DATABASE_URL": databaseURL}, "migrate"), 0)
	store := testkit.OpenStore(t, databaseURL)
	if _, err := store.CreateUserWithRole(context.Background(), "ed", memberPassword, models.RoleEditor, "bench"); err != nil {
		t.Fatal(err)
	}
	store.Close()
	srv := startBenchServer(t, databaseURL)
	c := testkit.SignedIn(t, srv.Base, "ed", memberPassword)
	c.HTTP.Timeout = 2 * time.Minute
	page := c.Get("/admin/pets/import")
	if page.Status != http.StatusOK {
		t.Fatalf("GET /admin/pets/import: %s", page)
	}
	c.CSRF = testkit.FormCSRF(testkit.HTMLDoc(t, page))
	file := importFileOf(rows)
	upload := func() testkit.Reply {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		w.WriteField("csrf_token", c.CSRF)
		fw, _ := w.CreateFormFile("file", "stock.csv")
		fw.Write(file)
		w.Close()
		h := http.Header{"Content-Type": {w.FormDataContentType()}, "Sec-Fetch-Site": {"same-origin"}}
		return c.Do(http.MethodPost, "/admin/pets/import", h, body.String())
	}

	rssBefore, cpuBefore := srv.peakRSS(t), serverCPU(t, srv.Pid)
	start := time.Now()
	r := upload()
	if r.Status != http.StatusSeeOther {
		t.Fatalf("upload: %s", r)
	}
	loc := r.Header.Get("Location")
	preview := c.Get(loc)
	if !strings.Contains(string(preview.Body), fmt.Sprintf("%s rows to add, none with errors.", groupThousands(rows))) {
		t.Fatalf("preview of %d rows: %s", rows, preview)
	}
	previewed := time.Since(start)
	if r := c.Post(loc, url.Values{"action": {"import"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("import: %s", r)
	}
	testkit.WaitFor(t, "the import ends", 5*time.Minute, time.Second, func() bool {
		p := c.Get(loc)
		return strings.Contains(string(p.Body), `data-testid="import-summary"`)
	})
	took := time.Since(start)
	rss, cpu := srv.peakRSS(t), serverCPU(t, srv.Pid)-cpuBefore

	// Polled each second, as the progress page does.

	// The same file again: nothing added, and it says when it was.
	again := upload()
	if again.Status != http.StatusOK || !strings.Contains(string(again.Body), "Nothing was added.") {
		t.Fatalf("repeat: %s", again)
	}
	srv.Stop(t)
	store = testkit.OpenStore(t, databaseURL)
	if n := modelstest.CountRows(t, store, modelstest.Pets); n != rows {
		t.Fatalf("%d pets, want %d", n, rows)
	}
	if n := modelstest.AuditCounts(t, store)[models.ActionPetsImported]; n != 1 {
		t.Fatalf("%d import audit events, want 1", n)
	}
	t.Logf("%s: %d rows imported in %.1f s (preview after %.1f s; server CPU %.1f s), server peak RSS %.1f MiB (%.1f before)",
		driver, rows, took.Seconds(), previewed.Seconds(), cpu, rss, rssBefore)
	testkit.Figure(t, fmt.Sprintf("import_%d_rows_seconds", rows), took.Seconds(), "s")
	testkit.Figure(t, fmt.Sprintf("import_%d_rows_server_cpu_seconds", rows), cpu, "s")
	testkit.Figure(t, fmt.Sprintf("import_%d_rows_server_peak_rss", rows), rss, "MiB")
}

// serverCPU is the CPU time a process has used (user and system), from
// /proc/PID/stat: what an import costs the server, which a loaded machine
// does not inflate as it does the wall time.
func serverCPU(t *testing.T, pid int) float64 {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("CPU time of petstore serve: %v", err)
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the line, in clock ticks (100 a second).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}

// groupThousands writes n with commas between thousands, as the console
// does.
func groupThousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
