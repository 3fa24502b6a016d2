package e2e

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
	"petstore/internal/testkit"
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
	vars := testkit.ServeVars(databaseURL)
	testkit.Binary(t) // build first, so both start together

	a := testkit.StartBinary(t, "instance A", vars, "serve")
	b := testkit.StartBinary(t, "instance B", vars, "serve")
	a.WaitListening(t, time.Minute)
	b.WaitListening(t, time.Minute)

	t.Run("both migrate, one bootstraps", func(t *testing.T) {
		outA, outB := a.Stdout.String(), b.Stdout.String()
		if n := strings.Count(outA+outB, "First start"); n != 1 {
			t.Errorf("the bootstrap block was printed %d times, want once:\nA:\n%s\nB:\n%s", n, outA, outB)
		}
		migrations, err := filepath.Glob(testkit.RepoPath(t, "models", "migrations", "mysql", "*.sql"))
		if err != nil || len(migrations) == 0 {
			t.Fatalf("no migrations found (%v)", err)
		}
		rows, versions := modelstest.MigrationVersions(t, testkit.OpenStore(t, databaseURL))
		if rows != versions || versions != len(migrations) {
			t.Errorf("goose_db_version has %d rows for %d versions, want each of the %d migrations once", rows, versions, len(migrations))
		}
	})
	var boot testkit.Boot
	if strings.Contains(a.Stdout.String(), "First start") {
		boot = testkit.BootstrapOf(t, a.Stdout.String())
	} else {
		boot = testkit.BootstrapOf(t, b.Stdout.String())
	}

	t.Run("a console session works on both", func(t *testing.T) {
		staff := testkit.SignedIn(t, a.Base, boot.Username, boot.Password)
		if r := staff.Get("/admin/pets"); r.Status != http.StatusOK {
			t.Fatalf("A's console after signing in on A: %s", r)
		}
		// Only the cookie travels: a plain client, no jar, no redirects.
		plain := testkit.NewHTTPClient(15 * time.Second)
		r := testkit.Send(plain, http.MethodGet, b.Base, "/admin/pets", http.Header{"Cookie": {staff.Cookie(t)}}, "")
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `data-testid="sign-out"`) {
			t.Errorf("B's console with A's session cookie: %s, want the pets page, signed in", r)
		}
		if r := testkit.Send(plain, http.MethodGet, b.Base, "/admin/pets", nil, ""); r.Status != http.StatusSeeOther {
			t.Errorf("B's console without a cookie: %s, want 303 to sign in", r)
		}
	})

	t.Run("a key revoked on A is refused by B", func(t *testing.T) {
		cli := testkit.RunBinary(t, map[string]string{"DATABASE_URL": databaseURL}, "apikey", "create", "--name", "partner")
		testkit.WantCode(t, cli, 0)
		key := testkit.WantOneLine(t, "apikey create stdout", cli.Stdout)
		onA, onB := testkit.NewAPIClient(a.Base, key), testkit.NewAPIClient(b.Base, key)
		for _, c := range []*testkit.APIClient{onA, onB} {
			if r := c.Get("/v1/pets"); r.Status != http.StatusOK {
				t.Fatalf("the new key on %s: %s, want 200", c.Base, r)
			}
		}
		list := testkit.RunBinary(t, map[string]string{"DATABASE_URL": databaseURL}, "apikey", "list")
		testkit.WantCode(t, list, 0)
		m := regexp.MustCompile(`(?m)^(\d+)\s+partner\s+(\S+)\s`).FindStringSubmatch(list.Stdout)
		if m == nil || m[2] != key[:models.KeyPrefixLen] {
			t.Fatalf("apikey list does not show the key %s:\n%s", key[:models.KeyPrefixLen], list.Stdout)
		}
		keyID := m[1]

		staff := testkit.SignedIn(t, a.Base, boot.Username, boot.Password)
		confirm := staff.Get("/admin/api-keys/" + keyID + "/revoke")
		if confirm.Status != http.StatusOK {
			t.Fatalf("A's revoke confirmation page: %s", confirm)
		}
		r := staff.Post("/admin/api-keys/"+keyID+"/revoke", url.Values{"csrf_token": {testkit.CSRFToken(t, confirm)}, "confirm": {"yes"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("revoke on A's console: %s, want 303", r)
		}
		revoked := time.Now()
		tries := 0
		testkit.WaitFor(t, "B refuses the revoked key", 5*time.Second, 10*time.Millisecond, func() bool {
			tries++
			return onB.Get("/v1/pets").Status == http.StatusUnauthorized
		})
		delay := time.Since(revoked)
		testkit.FigureDuration(t, "revocation_delay_across_instances", delay)
		t.Logf("B refused the revoked key on try %d", tries)
		testkit.WantAPIError(t, "the revoked key on B", onB.Get("/v1/pets"), http.StatusUnauthorized, models.CodeUnauthorized)
		testkit.WantAPIError(t, "the revoked key on A", onA.Get("/v1/pets"), http.StatusUnauthorized, models.CodeUnauthorized)
	})

	t.Run("creates through both never collide", func(t *testing.T) {
		const perInstance, workers = 100, 4
		var (
			mu      sync.Mutex
			created = map[int64]string{}
			wg      sync.WaitGroup
		)
		for _, inst := range []*testkit.Instance{a, b} {
			c := testkit.NewAPIClient(inst.Base, boot.Key)
			c.HTTP.Transport = &http.Transport{MaxIdleConnsPerHost: workers}
			for w := range workers {
				wg.Go(func() {
					for i := w; i < perInstance; i += workers {
						name := fmt.Sprintf("%s pet %d", inst.Name, i)
						r := c.CreatePet(name)
						var pet api.Pet
						if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &pet) != nil || pet.Name != name {
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
		testkit.Figure(t, "two_instances_creates", float64(len(created)), "creates")
		if len(created) != 2*perInstance {
			t.Errorf("%d distinct pets created, want %d", len(created), 2*perInstance)
		}
		for _, inst := range []*testkit.Instance{a, b} {
			listed := testkit.NewAPIClient(inst.Base, boot.Key).AllPets(t)
			for id, name := range created {
				if listed[id].Name != name {
					t.Errorf("%s does not list pet %d %q", inst.Name, id, name)
				}
			}
		}
	})

	for _, inst := range []*testkit.Instance{a, b} {
		inst.Stop(t)
	}
}
