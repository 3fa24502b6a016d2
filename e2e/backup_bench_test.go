package e2e

// The backup's measurement: on a fresh SQLite file and a fresh MariaDB
// database, each seeded by `petstore seed`, the built binary backs up and
// restores (into a fresh database of the same engine), timed, with each
// command's peak RSS (its rusage); and the served GET /v1/pets p99 is
// measured idle and while a backup runs. It writes the figures to
// testdata/backupbench.txt. It asserts no figures; it runs only when asked:
//
//	PETSTORE_BACKUP_BENCH=1 PETSTORE_REQUIRE_MARIADB=1 go test -count=1 -v -timeout 60m -run '^TestBackupBench$' ./e2e
//
// BACKUPBENCH_PETS sets the pets seeded (default 1000000).

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models/modelstest"
)

// backupBenchResult is what the benchmark measured on one engine.
type backupBenchResult struct {
	engine, version          string
	bytes                    int64
	backup, restore          time.Duration
	backupRSS, restoreRSS    float64 // MiB
	idleP99, duringP99       time.Duration
	idleRequests, duringReqs int
}

func TestBackupBench(t *testing.T) {
	if os.Getenv("PETSTORE_BACKUP_BENCH") != "1" {
		t.Skip("the backup benchmark runs only with PETSTORE_BACKUP_BENCH=1")
	}
	pets := envInt(t, "BACKUPBENCH_PETS", 1_000_000, 1000)
	testkit.Binary(t) // built once, before anything is timed
	var results []backupBenchResult
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) { results = append(results, benchBackup(t, driver, pets)) })
	}
	var b strings.Builder
	fmt.Fprintf(&b, "backup and restore, %s, commit %s, %s, %d CPUs (%s), %d pets seeded\n",
		time.Now().UTC().Format(time.RFC3339), gitCommit(), runtime.Version(), runtime.NumCPU(), cpuModel(), pets)
	fmt.Fprintf(&b, "%-8s %-8s %11s %10s %9s %11s %9s %13s %13s\n",
		"engine", "version", "bytes", "backup s", "RSS MiB", "restore s", "RSS MiB", "idle p99 ms", "during p99 ms")
	for _, r := range results {
		fmt.Fprintf(&b, "%-8s %-8s %11d %10.1f %9.1f %11.1f %9.1f %13.2f %13.2f\n", r.engine, strings.SplitN(r.version, "-", 2)[0], r.bytes,
			r.backup.Seconds(), r.backupRSS, r.restore.Seconds(), r.restoreRSS, ms(r.idleP99), ms(r.duringP99))
	}
	fmt.Print("\n" + b.String())
	dir := testkit.RepoPath(t, "testdata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "backupbench.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("wrote testdata/backupbench.txt")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchBackup seeds driver's database, measures GET /v1/pets idle, then a
// backup (with the same load running), then a restore of it.
func benchBackup(t *testing.T, driver string, pets int) backupBenchResult {
	databaseURL := modelstest.URL(t, driver)
	vars := map[string]string{"DATABASE_URL": databaseURL}
	testkit.WantCode(t, testkit.RunBinary(t, vars, "migrate"), 0)
	store := testkit.OpenStore(t, databaseURL)
	var r backupBenchResult
	r.engine, r.version = engineVersion(t, driver, store)
	seedPets(t, vars, store, pets)
	store.Close()
	key := testkit.WantOneLine(t, "apikey create", testkit.RunBinary(t, vars, "apikey", "create", "--name", "bench").Stdout)

	srv := startBenchServer(t, databaseURL)
	client := testkit.NewAPIClient(srv.Base, key)
	waitQuiet(t, "idle", 10*time.Second)
	idle := listLatencies(client, 4, func(stop <-chan struct{}) { time.Sleep(5 * time.Second) })
	r.idleP99, r.idleRequests = p99(idle), len(idle)

	file := filepath.Join(t.TempDir(), "bench.backup")
	during := listLatencies(client, 4, func(<-chan struct{}) {
		r.backup, r.backupRSS = runTimed(t, vars, "backup", "--out", file)
	})
	r.duringP99, r.duringReqs = p99(during), len(during)
	srv.Stop(t)
	if info, err := os.Stat(file); err == nil {
		r.bytes = info.Size()
	}
	target := map[string]string{"DATABASE_URL": modelstest.URL(t, driver)}
	r.restore, r.restoreRSS = runTimed(t, target, "restore", "--in", file)
	t.Logf("%s: %d pets, backup %.1f s (RSS %.1f MiB, %d bytes), restore %.1f s (RSS %.1f MiB), GET /v1/pets p99 %.2f ms idle (%d requests), %.2f ms during the backup (%d)",
		r.engine, pets, r.backup.Seconds(), r.backupRSS, r.bytes, r.restore.Seconds(), r.restoreRSS, ms(r.idleP99), r.idleRequests, ms(r.duringP99), r.duringReqs)
	return r
}

// runTimed runs the binary to its end and returns how long it took and its
// peak RSS in MiB.
func runTimed(t *testing.T, vars map[string]string, args ...string) (time.Duration, float64) {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), args...)
	cmd.Env = testkit.ProcEnv(vars)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("petstore %v: %v\n%s", args, err, out)
	}
	rss := float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	return took, rss
}

// listLatencies has clients read the first page of pets while work runs,
// each once every 20 ms (200 requests a second from 4 clients: a steady
// partner load, not a flood that would take the cores from the work it
// measures), and returns every request's latency.
func listLatencies(c *testkit.APIClient, clients int, work func(stop <-chan struct{})) []time.Duration {
	stop := make(chan struct{})
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			var mine []time.Duration
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					mu.Lock()
					all = append(all, mine...)
					mu.Unlock()
					return
				case <-tick.C:
				}
				start := time.Now()
				if r := c.Get("/v1/pets?limit=20"); r.Status == http.StatusOK {
					mine = append(mine, time.Since(start))
				}
			}
		})
	}
	work(stop)
	close(stop)
	wg.Wait()
	return all
}

func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)*99/100]
}
