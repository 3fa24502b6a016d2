package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/api"
	"petstore/models"
	"petstore/models/modelstest"
)

// TestTwoInstances runs two `petstore serve` processes on one fresh MariaDB
// database, started at the same moment: both migrate safely and exactly one
// bootstraps; a console session made on one is valid on the other; a key
// revoked through one console is refused by the other at once; and creates
// through both never collide.
func TestTwoInstances(t *testing.T) {
	t.Parallel()
	databaseURL := modelstest.URL(t, models.DriverMySQL)
	vars := serveVars(databaseURL)
	petstoreBinary(t) // build first, so both start together

	a := startBinary(t, "instance A", vars, "serve")
	b := startBinary(t, "instance B", vars, "serve")
	a.waitListening(t, time.Minute)
	b.waitListening(t, time.Minute)

	t.Run("both migrate, one bootstraps", func(t *testing.T) {
		outA, outB := a.stdout.String(), b.stdout.String()
		if n := strings.Count(outA+outB, "First start"); n != 1 {
			t.Errorf("the bootstrap block was printed %d times, want once:\nA:\n%s\nB:\n%s", n, outA, outB)
		}
		migrations, err := filepath.Glob(filepath.Join("models", "migrations", "mysql", "*.sql"))
		if err != nil || len(migrations) == 0 {
			t.Fatalf("no migrations found (%v)", err)
		}
		db := openStore(t, databaseURL).SQLDB()
		var rows, versions int
		if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*), COUNT(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0").
			Scan(&rows, &versions); err != nil {
			t.Fatal(err)
		}
		if rows != versions || versions != len(migrations) {
			t.Errorf("goose_db_version has %d rows for %d versions, want each of the %d migrations once", rows, versions, len(migrations))
		}
	})
	var boot boot
	if strings.Contains(a.stdout.String(), "First start") {
		boot = bootstrapOf(t, a.stdout.String())
	} else {
		boot = bootstrapOf(t, b.stdout.String())
	}

	t.Run("a console session works on both", func(t *testing.T) {
		staff := signedIn(t, a.base, boot.username, boot.password)
		if r := staff.get("/admin/pets"); r.status != http.StatusOK {
			t.Fatalf("A's console after signing in on A: %s", r)
		}
		// Only the cookie travels: a plain client, no jar, no redirects.
		plain := newHTTPClient(15 * time.Second)
		r := send(plain, http.MethodGet, b.base, "/admin/pets", http.Header{"Cookie": {staff.cookie(t)}}, "")
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `data-testid="sign-out"`) {
			t.Errorf("B's console with A's session cookie: %s, want the pets page, signed in", r)
		}
		if r := send(plain, http.MethodGet, b.base, "/admin/pets", nil, ""); r.status != http.StatusSeeOther {
			t.Errorf("B's console without a cookie: %s, want 303 to sign in", r)
		}
	})

	t.Run("a key revoked on A is refused by B", func(t *testing.T) {
		cli := runBinary(t, map[string]string{"DATABASE_URL": databaseURL}, "apikey", "create", "--name", "partner")
		wantCode(t, cli, 0)
		key := wantOneLine(t, "apikey create stdout", cli.stdout)
		onA, onB := newAPIClient(a.base, key), newAPIClient(b.base, key)
		for _, c := range []*apiClient{onA, onB} {
			if r := c.get("/v1/pets"); r.status != http.StatusOK {
				t.Fatalf("the new key on %s: %s, want 200", c.base, r)
			}
		}
		list := runBinary(t, map[string]string{"DATABASE_URL": databaseURL}, "apikey", "list")
		wantCode(t, list, 0)
		m := regexp.MustCompile(`(?m)^(\d+)\s+partner\s+(\S+)\s`).FindStringSubmatch(list.stdout)
		if m == nil || m[2] != key[:models.KeyPrefixLen] {
			t.Fatalf("apikey list does not show the key %s:\n%s", key[:models.KeyPrefixLen], list.stdout)
		}
		keyID := m[1]

		staff := signedIn(t, a.base, boot.username, boot.password)
		confirm := staff.get("/admin/api-keys/" + keyID + "/revoke")
		if confirm.status != http.StatusOK {
			t.Fatalf("A's revoke confirmation page: %s", confirm)
		}
		r := staff.post("/admin/api-keys/"+keyID+"/revoke", url.Values{"csrf_token": {csrfToken(t, confirm)}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("revoke on A's console: %s, want 303", r)
		}
		revoked := time.Now()
		tries := 0
		waitFor(t, "B refuses the revoked key", 5*time.Second, 10*time.Millisecond, func() bool {
			tries++
			return onB.get("/v1/pets").status == http.StatusUnauthorized
		})
		delay := time.Since(revoked)
		figureDuration(t, "revocation_delay_across_instances", delay)
		t.Logf("B refused the revoked key on try %d", tries)
		wantAPIError(t, "the revoked key on B", onB.get("/v1/pets"), http.StatusUnauthorized, models.CodeUnauthorized)
		wantAPIError(t, "the revoked key on A", onA.get("/v1/pets"), http.StatusUnauthorized, models.CodeUnauthorized)
	})

	t.Run("creates through both never collide", func(t *testing.T) {
		const perInstance, workers = 100, 4
		var (
			mu      sync.Mutex
			created = map[int64]string{}
			wg      sync.WaitGroup
		)
		for _, inst := range []*instance{a, b} {
			c := newAPIClient(inst.base, boot.key)
			c.http.Transport = &http.Transport{MaxIdleConnsPerHost: workers}
			for w := range workers {
				wg.Go(func() {
					for i := w; i < perInstance; i += workers {
						name := fmt.Sprintf("%s pet %d", inst.name, i)
						r := c.createPet(name)
						var pet api.Pet
						if r.status != http.StatusCreated || json.Unmarshal(r.body, &pet) != nil || pet.Name != name {
							t.Errorf("create %q: %s, want 201", name, r)
							continue
						}
						mu.Lock()
						if other, dup := created[pet.ID]; dup {
							t.Errorf("id %d given to %q and %q", pet.ID, other, name)
						}
						created[pet.ID] = name
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		figure(t, "two_instances_creates", float64(len(created)), "creates")
		if len(created) != 2*perInstance {
			t.Errorf("%d distinct pets created, want %d", len(created), 2*perInstance)
		}
		for _, inst := range []*instance{a, b} {
			listed := newAPIClient(inst.base, boot.key).allPets(t)
			for id, name := range created {
				if listed[id].Name != name {
					t.Errorf("%s does not list pet %d %q", inst.name, id, name)
				}
			}
		}
	})

	for _, inst := range []*instance{a, b} {
		inst.stop(t)
	}
}
