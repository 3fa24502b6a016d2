package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
)

// List reads go to the replica, and the reads that must see a write just
// made stay on the primary: shown by pausing replication.
func TestReadReplicas(t *testing.T) {
	t.Parallel()
	primaryURL, replicaURL, repl := modelstest.ReplicaPair(t)
	primary, err := config.ParseDatabaseURL(primaryURL)
	if err != nil {
		t.Fatal(err)
	}
	replica, err := config.ParseDatabaseURL(replicaURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := models.Open(ctx, models.Options{Driver: models.DriverMySQL, DSN: primary.DSN, ReplicaDSNs: []string{replica.DSN},
		ConnectTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A replica behind a migration (paused here; on a deploy it is merely
	// late) fails only the reads sent to it: the primary serves creates,
	// and the replica's reads work once it has caught up.
	repl.Pause(t)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Rex", "Tom"} {
		if _, err := s.CreatePet(ctx, models.NewPet{Name: name, CategoryID: 1, Status: models.StatusSold}, "test"); err != nil {
			t.Fatalf("create while the replica lacks the schema: %v", err)
		}
	}
	if _, _, err := s.ListPets(ctx, models.PetQuery{Limit: 10}); err != nil {
		t.Fatalf("primary list while the replica lacks the schema: %v", err)
	}
	if _, _, err := s.ListPets(ctx, models.PetQuery{Limit: 10, AllowStale: true}); err == nil {
		t.Fatal("a replica without the pets table answered a list")
	}
	apiPage := func() (int, error) {
		n := 0
		_, err := s.EachPetAPI(ctx, models.PetQuery{Limit: 100, AllowStale: true}, func(models.PetRow) { n++ })
		return n, err
	}
	if _, err := apiPage(); err == nil {
		t.Fatal("a replica without the pets table answered the API's page")
	}
	repl.Resume(t)
	// The replica's statements, refused before, are prepared again.
	if n, err := apiPage(); err != nil || n != 2 {
		t.Fatalf("API page from the caught-up replica: %d pets, %v; want 2", n, err)
	}
	count := func(q models.PetQuery) int {
		t.Helper()
		q.Limit, q.AllowStale = 100, true
		pets, _, err := s.ListPets(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return len(pets)
	}
	if n := count(models.PetQuery{}); n != 2 {
		t.Fatalf("listed %d pets after sync, want 2", n)
	}

	repl.Pause(t)
	late, err := s.CreatePet(ctx, models.NewPet{Name: "Late", CategoryID: 1, Status: models.StatusSold}, "test")
	if err != nil {
		t.Fatal(err)
	}
	// The primary has it at once: fetching the new pet works.
	if p, err := s.GetPet(ctx, late.ID); err != nil || p.Name != "Late" {
		t.Fatalf("GetPet right after create = %+v, %v", p, err)
	}
	// The API's lists come from the paused replica: they do not have it yet, with
	// and without the status filter (which names the table differently).
	if n := count(models.PetQuery{}); n != 2 {
		t.Errorf("list while replication paused: %d pets, want the replica's 2", n)
	}
	if n := count(models.PetQuery{Status: models.StatusSold}); n != 2 {
		t.Errorf("status list while replication paused: %d pets, want the replica's 2", n)
	}
	if n, err := apiPage(); err != nil || n != 2 {
		t.Errorf("API page while replication paused: %d pets, %v; want the replica's 2", n, err)
	}
	// Reads that do not allow staleness (the console's) see it at once.
	if pets, _, err := s.ListPets(ctx, models.PetQuery{Limit: 100}); err != nil || len(pets) != 3 {
		t.Errorf("primary list while replication paused: %d pets, %v; want 3", len(pets), err)
	}
	if pets, _, err := s.ListPets(ctx, models.PetQuery{Limit: 100, Status: models.StatusSold}); err != nil || len(pets) != 3 {
		t.Errorf("primary status list while replication paused: %d pets, %v; want 3", len(pets), err)
	}
	events, _, err := s.ListAuditEvents(ctx, models.AuditQuery{Action: models.ActionPetCreated})
	if err != nil || len(events) != 3 {
		t.Errorf("audit list while replication paused: %d events, %v; want 3 from the primary", len(events), err)
	}
	// Keys are read from the primary: a key made now works at once.
	_, key, err := s.CreateAPIKey(ctx, "fresh", "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, key); err != nil {
		t.Errorf("a key made while replication is paused: %v", err)
	}

	repl.Resume(t)
	if n, err := apiPage(); err != nil || n != 3 {
		t.Errorf("API page after resuming: %d pets, %v; want 3", n, err)
	}
	if n := count(models.PetQuery{}); n != 3 {
		t.Errorf("list after resuming: %d pets, want 3", n)
	}
}

func TestReplicasNeedMySQL(t *testing.T) {
	t.Parallel()
	db := modelstest.Database(t, models.DriverSQLite)
	_, err := models.Open(context.Background(), models.Options{Driver: models.DriverSQLite, DSN: db.DSN, ReplicaDSNs: []string{"u:p@tcp(127.0.0.1:1)/x"}})
	if err == nil {
		t.Fatal("SQLite with replicas opened")
	}
	var e *models.Error
	if errors.As(err, &e) {
		t.Fatalf("want a plain configuration error, got %v", err)
	}
}
