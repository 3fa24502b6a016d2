package main

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"petstore/api"
	"petstore/internal/testkit"
	"petstore/models"
)

// Help and bad counts never touch the database.
func TestSeedUsage(t *testing.T) {
	t.Parallel()
	checkUsage(t, []usageCase{
		{"help", []string{"seed", "--help"}, 0, "Usage: petstore seed --pets N"},
		{"help names the range", []string{"seed", "-h"}, 0, "from 1 to 10000000"},
		{"top-level help lists it", []string{"--help"}, 0, "petstore seed --pets N"},
		{"no --pets", []string{"seed"}, 2, "Usage: petstore seed --pets N"},
		{"empty --pets", []string{"seed", "--pets", ""}, 2, "Usage: petstore seed --pets N"},
		{"zero", []string{"seed", "--pets", "0"}, 2, `--pets "0": The number of pets must be a whole number from 1 to 10000000.`},
		{"negative", []string{"seed", "--pets=-5"}, 2, `--pets "-5": The number of pets must be a whole number from 1 to 10000000.`},
		{"text", []string{"seed", "--pets", "many"}, 2, `--pets "many": The number of pets must be`},
		{"fraction", []string{"seed", "--pets", "2.5"}, 2, `--pets "2.5": The number of pets must be`},
		{"too many", []string{"seed", "--pets", "10000001"}, 2, `--pets "10000001": The number of pets must be`},
		{"extra argument", []string{"seed", "--pets", "5", "more"}, 2, "Usage: petstore seed --pets N"},
		{"unknown flag", []string{"seed", "--rows", "5"}, 2, "-rows"},
	}, func(t *testing.T, c usageCase, r testkit.Result) {
		if c.wantCode != 0 && strings.HasPrefix(c.want, "--pets") {
			// A bad count is one line.
			if line := testkit.WantOneLine(t, "stderr", r.Stderr); !strings.HasPrefix(line, "petstore: ") {
				t.Errorf("stderr %q", line)
			}
		}
	})
}

var (
	seedDone     = regexp.MustCompile(`^added (\d+) example pets \(ids (\d+) to (\d+)\) in \d+\.\d s$`)
	seedProgress = regexp.MustCompile(`^seeded (\d+)/(\d+) pets \(\d+\.\d s\)$`)
)

// TestSeedCommand seeds through the command, twice, and serves the pets
// through the API (their times are read back as the Store writes them).
func TestSeedCommand(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := map[string]string{"DATABASE_URL": databaseURL, "LISTEN_ADDR": "127.0.0.1:0"}
		key := createKey(t, vars, "seed-test")

		seed := func(n int, wantFirst int64) {
			t.Helper()
			r := runCLI(t, vars, "", "seed", "--pets", strconv.Itoa(n))
			testkit.WantCode(t, r, 0)
			m := seedDone.FindStringSubmatch(testkit.WantOneLine(t, "stdout", r.Stdout))
			if m == nil || m[1] != strconv.Itoa(n) || m[2] != strconv.FormatInt(wantFirst, 10) || m[3] != strconv.FormatInt(wantFirst+int64(n)-1, 10) {
				t.Fatalf("seed printed %q, want %d pets from id %d", r.Stdout, n, wantFirst)
			}
			lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
			last := seedProgress.FindStringSubmatch(lines[len(lines)-1])
			if last == nil || last[1] != strconv.Itoa(n) || last[2] != strconv.Itoa(n) {
				t.Errorf("stderr should end with the progress line for %d/%d:\n%s", n, n, r.Stderr)
			}
			for _, l := range lines {
				if seedProgress.FindStringSubmatch(l) == nil {
					t.Errorf("stderr line %q is not a progress line", l)
				}
			}
		}
		seed(25_000, 1)
		seed(2, 25_001)

		store := testkit.OpenStore(t, databaseURL)
		ctx := context.Background()
		events, _, err := store.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetsSeeded, Actor: "cli"})
		if err != nil || len(events) != 2 || events[1].Detail != "added 25000 example pets, ids 1 to 25000" {
			t.Fatalf("audit events %+v, %v", events, err)
		}

		partner := testkit.NewAPIClient(serveInProcess(t, vars).Base, key)
		r := partner.Get("/v1/pets?limit=12&after=0")
		var pets []api.Pet
		if err := json.Unmarshal(r.Body, &pets); r.Status != http.StatusOK || err != nil || len(pets) != 12 {
			t.Fatalf("GET /v1/pets: %s (%v)", r, err)
		}
		for i, p := range pets {
			if p.ID != int64(i+1) || p.Name != seedName(i) || p.CategoryID != int64(1+i%100) || string(p.Status) != seedStatus(i) {
				t.Errorf("pet %d served as %+v", i, p)
			}
		}
		// The second seed's pets, Rex 0 and Luna 1, are available: none sold.
		if r := partner.Get("/v1/pets?limit=100&status=sold&after=25000"); r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "[]" {
			t.Errorf("sold pets after id 25000: %s, want none", r)
		}
		if r := partner.Get("/v1/pets?limit=1&status=available&after=24999"); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"name":"Rex 0"`) {
			t.Errorf("available pets after id 24999: %s, want the second seed's Rex 0", r)
		}
		if r := partner.Get("/v1/pets/25002"); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"name":"Luna 1"`) {
			t.Errorf("GET /v1/pets/25002: %s", r)
		}
	})
}

func seedName(i int) string {
	names := []string{"Rex", "Luna", "Milo", "Bella", "Max", "Coco", "Oscar", "Nala", "Simba", "Kiwi", "Pépé", "Mochi 🐾"}
	return names[i%12] + " " + strconv.Itoa(i)
}

func seedStatus(i int) string {
	switch m := i % 20; {
	case m < 12:
		return "available"
	case m < 17:
		return "pending"
	}
	return "sold"
}
