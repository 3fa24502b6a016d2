package models_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"petstore/models"
	"petstore/models/modelstest"
)

func TestSearchWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"Luna Lovegood", []string{"luna", "lovegood"}},
		{"  LUNA\tluna  ", []string{"luna"}},
		{"Pépé le Pew", []string{"pepe", "le", "pew"}},
		{"Zoë", []string{"zoe"}},
		{"Mochi 🐾 11", []string{"mochi", "🐾", "11"}},
		{"100% Rex_x", []string{"100", "%", "rex", "_", "x"}},
		{"O'Malley", []string{"o", "'", "malley"}},
		{"Jean-Luc", []string{"jean", "-", "luc"}},
		{"Ｒｅｘ", []string{"rex"}},        // full-width letters
		{"Straße", []string{"strasse"}}, // case folding, not lower-casing
		{"İzmir", []string{"izmir"}},
		{"ΣΊΣΥΦΟΣ", []string{"σισυφοσ"}}, // final sigma and the accent
		{"小狗", []string{"小", "狗"}},       // a character is a word
		{"❤\ufe0f", []string{"❤"}},       // the emoji presentation selector goes
		{"👨\u200d👩\u200d👧", []string{"👨", "👩", "👧"}},
		{"R2D2", []string{"r2d2"}},
		{"Ꮸ", []string{"ꮸ"}}, // Cherokee: both cases fold alike
		{"ꮸ", []string{"ꮸ"}},
		{"ſ", []string{"s"}}, // long s
		{"\u0301", nil},      // a lone accent: nothing to search
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := models.SearchWords(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("SearchWords(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// searchNames are pet names for the search tests, created in this order.
var searchNames = []string{
	"Luna", "Luna Lovegood", "Lunatic Fringe", "Bella", "Isabella", "Pépé le Pew", "PEPE", "Zoë", "Mochi 🐾", "🐾",
	"Chloé's Cat", "O'Malley", "100% Rex_x", "50%_off", `Robert'); DROP TABLE pets;--`, "Straße Kater", "小狗", "Ｒｅｘ",
	"Ωmega", "Max", "Maxine", "Max 2", "Jean-Luc", "Schnuckelputzischnuckelputzischnuckelputzi", "ΣΊΣΥΦΟΣ", "İzmir",
	`"Quoted"`, "Back\\slash",
}

// createSearchPets creates searchNames with statuses available, pending,
// sold in turn, and returns them in creation order.
func createSearchPets(tb testing.TB, s *models.Store) []models.Pet {
	tb.Helper()
	var pets []models.Pet
	for i, name := range searchNames {
		p, err := s.CreatePet(context.Background(), models.NewPet{Name: name, CategoryID: 1, Status: models.Statuses[i%3]}, "test")
		if err != nil {
			tb.Fatal(err)
		}
		pets = append(pets, p)
	}
	return pets
}

// searchAll pages through a search newest first, limit pets a page, as
// the console does (following Resume when a page stops on its budget),
// and returns the pets newest first and the number of pages read.
func searchAll(tb testing.TB, s *models.Store, q models.PetQuery) ([]models.Pet, int) {
	tb.Helper()
	var all []models.Pet
	q.After, q.Before = 0, math.MaxInt64
	for pages := 1; ; pages++ {
		if pages > 10_000 {
			tb.Fatalf("search %q does not end", q.NameContains)
		}
		page, err := s.ListPetsPage(context.Background(), q)
		if err != nil {
			tb.Fatalf("search %q: %v", q.NameContains, err)
		}
		if len(page.Pets) > q.Limit || (page.Resume != 0 && !page.More) {
			tb.Fatalf("search %q: page %+v, limit %d", q.NameContains, page, q.Limit)
		}
		for i := len(page.Pets) - 1; i >= 0; i-- {
			all = append(all, page.Pets[i])
		}
		switch {
		case !page.More:
			return all, pages
		case page.Resume != 0:
			q.Before = page.Resume
		default:
			q.Before = page.Pets[0].ID
		}
	}
}

// searchAllForward pages through a search oldest first ("Newer" links).
func searchAllForward(tb testing.TB, s *models.Store, q models.PetQuery) []models.Pet {
	tb.Helper()
	var all []models.Pet
	q.After, q.Before = 0, 0
	for pages := 1; ; pages++ {
		if pages > 10_000 {
			tb.Fatalf("search %q does not end", q.NameContains)
		}
		page, err := s.ListPetsPage(context.Background(), q)
		if err != nil {
			tb.Fatalf("search %q: %v", q.NameContains, err)
		}
		all = append(all, page.Pets...)
		switch {
		case !page.More:
			return all
		case page.Resume != 0:
			q.After = page.Resume
		default:
			q.After = page.Pets[len(page.Pets)-1].ID
		}
	}
}

func names(pets []models.Pet) []string {
	out := make([]string, len(pets))
	for i, p := range pets {
		out[i] = p.Name
	}
	return out
}

// newestFirst returns the given names in the order a search lists them:
// the last created first.
func newestFirst(want ...string) []string {
	out := slices.Clone(want)
	slices.SortFunc(out, func(a, b string) int { return slices.Index(searchNames, b) - slices.Index(searchNames, a) })
	return out
}

func TestSearchPets(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		pets := createSearchPets(t, s)
		tests := []struct {
			q    string
			want []string
		}{
			{"lu", newestFirst("Luna", "Luna Lovegood", "Lunatic Fringe", "Jean-Luc")},
			{"luna", newestFirst("Luna", "Luna Lovegood", "Lunatic Fringe")},
			{"LUNA love", []string{"Luna Lovegood"}},
			{"love luna", []string{"Luna Lovegood"}}, // any order
			{"luna luna lu", newestFirst("Luna", "Luna Lovegood", "Lunatic Fringe")},
			{"una", nil}, // words are matched from their start
			{"bella", []string{"Bella"}},
			{"isa", []string{"Isabella"}},
			{"pepe", newestFirst("Pépé le Pew", "PEPE")},
			{"PÉPÉ", newestFirst("Pépé le Pew", "PEPE")},
			{"pépé le", []string{"Pépé le Pew"}},
			{"zoe", []string{"Zoë"}},
			{"ZOË", []string{"Zoë"}},
			{"🐾", newestFirst("Mochi 🐾", "🐾")},
			{"mochi 🐾", []string{"Mochi 🐾"}},
			{"'", newestFirst("Chloé's Cat", "O'Malley", `Robert'); DROP TABLE pets;--`)},
			{"chloé's", []string{"Chloé's Cat"}},
			{`"quoted"`, []string{`"Quoted"`}},
			{`\`, []string{"Back\\slash"}},
			{"%", newestFirst("100% Rex_x", "50%_off")},
			{"_", newestFirst("100% Rex_x", "50%_off")},
			{"50%", []string{"50%_off"}},
			{"50%_off", []string{"50%_off"}},
			{"%_", newestFirst("100% Rex_x", "50%_off")},
			{"rex", newestFirst("100% Rex_x", "Ｒｅｘ")},
			{"--", newestFirst(`Robert'); DROP TABLE pets;--`, "Jean-Luc")},
			{"drop table", []string{`Robert'); DROP TABLE pets;--`}},
			{"strasse", []string{"Straße Kater"}},
			{"STRASSE kat", []string{"Straße Kater"}},
			{"狗", []string{"小狗"}},
			{"小狗", []string{"小狗"}},
			{"ω", []string{"Ωmega"}},
			{"σισυφος", []string{"ΣΊΣΥΦΟΣ"}},
			{"izmir", []string{"İzmir"}},
			{"m", newestFirst("Mochi 🐾", "O'Malley", "Max", "Maxine", "Max 2")},
			{"ma", newestFirst("O'Malley", "Max", "Maxine", "Max 2")},
			{"max", newestFirst("Max", "Maxine", "Max 2")},
			{"max 2", []string{"Max 2"}},
			{"2", []string{"Max 2"}},
			{"schnuckelputzischnuckelputzischnuckelputzi", []string{"Schnuckelputzischnuckelputzischnuckelputzi"}},
			{"schnuckelputzischnuckelputzischnuckelputzis", nil}, // longer than the name's word, past the key's 32 bytes
			{"schnuckelputzischnuckelputzischnuckelputzX", nil},
			{"zzz", nil},
			{"luna zzz", nil},
			{"\u0301", nil},
			{"' OR 1=1--", nil},
		}
		for _, tt := range tests {
			t.Run(tt.q, func(t *testing.T) {
				got, _ := searchAll(t, s, models.PetQuery{Limit: 3, NameContains: tt.q})
				if !slices.Equal(names(got), tt.want) {
					t.Errorf("search %q = %q, want %q", tt.q, names(got), tt.want)
				}
				// Oldest first ("Newer" links): the same pets the other way.
				fwd := names(searchAllForward(t, s, models.PetQuery{Limit: 2, NameContains: tt.q}))
				slices.Reverse(fwd)
				if !slices.Equal(fwd, tt.want) {
					t.Errorf("search %q oldest first = %q, want %q reversed", tt.q, fwd, tt.want)
				}
				// With a status: the same pets that have it.
				for _, st := range models.Statuses {
					var want []string
					for _, n := range tt.want {
						if pets[slices.Index(searchNames, n)].Status == st {
							want = append(want, n)
						}
					}
					got, _ := searchAll(t, s, models.PetQuery{Limit: 2, NameContains: tt.q, Status: st})
					if !slices.Equal(names(got), want) {
						t.Errorf("search %q status %s = %q, want %q", tt.q, st, names(got), want)
					}
				}
			})
		}
		// The pets come back whole, as created.
		got, _ := searchAll(t, s, models.PetQuery{Limit: 20, NameContains: "mochi"})
		if len(got) != 1 || got[0].ID != pets[8].ID || got[0].CategoryID != 1 || got[0].Status != pets[8].Status || got[0].CreatedAt.IsZero() {
			t.Errorf("search result %+v, want %+v", got, pets[8])
		}
		// ListPets answers a search the same way (oldest first, as it pages).
		list, more, err := s.ListPets(context.Background(), models.PetQuery{Limit: 2, NameContains: "lu"})
		if err != nil || !more || !slices.Equal(names(list), []string{"Luna", "Luna Lovegood"}) {
			t.Errorf("ListPets search = %q, %v, %v", names(list), more, err)
		}
	})
}

// asciiMatches is the search rule for ASCII names: every word of the
// search starts a word of the name, ignoring case.
func asciiMatches(name, q string) bool {
	nameWords := strings.Fields(strings.ToLower(name))
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if !slices.ContainsFunc(nameWords, func(n string) bool { return strings.HasPrefix(n, w) }) {
			return false
		}
	}
	return true
}

// TestSearchPaging pages through search results both ways, with and
// without a status, and moves between neighbouring pages as the console's
// links do.
func TestSearchPaging(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		var all []models.Pet // oldest first
		for i := range 160 {
			name := fmt.Sprintf("Kiwi %d", i)
			if i%4 == 3 {
				name = fmt.Sprintf("Other %d", i)
			}
			p, err := s.CreatePet(ctx, models.NewPet{Name: name, CategoryID: 1, Status: models.Statuses[i%3]}, "test")
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p)
		}
		for _, q := range []string{"kiwi", "kiwi 1", "1", "other", "kiwi other"} {
			for _, st := range []models.Status{"", models.StatusSold} {
				var want []string // newest first
				for i := len(all) - 1; i >= 0; i-- {
					if asciiMatches(all[i].Name, q) && (st == "" || all[i].Status == st) {
						want = append(want, all[i].Name)
					}
				}
				for _, limit := range []int{1, 7, 20} {
					got, _ := searchAll(t, s, models.PetQuery{Limit: limit, NameContains: q, Status: st})
					if !slices.Equal(names(got), want) {
						t.Fatalf("%q status %q limit %d: %d pets %q, want %d", q, st, limit, len(got), names(got), len(want))
					}
					fwd := names(searchAllForward(t, s, models.PetQuery{Limit: limit, NameContains: q, Status: st}))
					slices.Reverse(fwd)
					if !slices.Equal(fwd, want) {
						t.Fatalf("%q status %q limit %d oldest first: %d pets, want %d", q, st, limit, len(fwd), len(want))
					}
				}
			}
		}
		// The second page newest first, then its "Newer" page: the first.
		q := models.PetQuery{Limit: 7, NameContains: "kiwi", Before: math.MaxInt64}
		first, err := s.ListPetsPage(ctx, q)
		if err != nil || !first.More || len(first.Pets) != 7 {
			t.Fatalf("first page %+v, %v", first, err)
		}
		q.Before = first.Pets[0].ID
		second, err := s.ListPetsPage(ctx, q)
		if err != nil || !second.More || len(second.Pets) != 7 || second.Pets[6].ID >= first.Pets[0].ID {
			t.Fatalf("second page %+v, %v", second, err)
		}
		back, err := s.ListPetsPage(ctx, models.PetQuery{Limit: 7, NameContains: "kiwi", After: second.Pets[6].ID})
		if err != nil || !slices.Equal(names(back.Pets), names(first.Pets)) {
			t.Fatalf("newer than the second page: %q, %v; want the first page %q", names(back.Pets), err, names(first.Pets))
		}
		// Nothing newer than the newest.
		none, err := s.ListPetsPage(ctx, models.PetQuery{Limit: 1, NameContains: "kiwi", After: first.Pets[6].ID})
		if err != nil || len(none.Pets) != 0 || none.More {
			t.Fatalf("newer than the newest: %+v, %v", none, err)
		}
	})
}

// TestSearchIndexKeptInStep follows a pet through the writes that touch
// it: created, its status changed, renamed.
func TestSearchIndexKeptInStep(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		find := func(q string, st models.Status) []int64 {
			t.Helper()
			pets, _ := searchAll(t, s, models.PetQuery{Limit: 10, NameContains: q, Status: st})
			var ids []int64
			for _, p := range pets {
				ids = append(ids, p.ID)
			}
			return ids
		}
		words := func(id int64) int {
			t.Helper()
			var n int
			if err := s.SQLDB().QueryRow("SELECT COUNT(*) FROM pet_name_words WHERE pet_id = ?", id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		p, err := s.CreatePet(ctx, models.NewPet{Name: "Biscuit Biscuit Crème", CategoryID: 1, Status: models.StatusAvailable}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if got := find("bisc", ""); !slices.Equal(got, []int64{p.ID}) {
			t.Fatalf("a new pet is not found at once: %v", got)
		}
		if n := words(p.ID); n != 2 {
			t.Errorf("%d index rows for two distinct words", n)
		}
		if _, err := s.UpdatePetStatus(ctx, p.ID, models.StatusSold, "test"); err != nil {
			t.Fatal(err)
		}
		if got := find("creme", models.StatusSold); !slices.Equal(got, []int64{p.ID}) {
			t.Errorf("not found as sold after the status change: %v", got)
		}
		if got := find("creme", models.StatusAvailable); len(got) != 0 {
			t.Errorf("still found as available: %v", got)
		}
		if err := s.RenamePet(ctx, p.ID, "Crumble Crème"); err != nil {
			t.Fatal(err)
		}
		if got := find("bisc", ""); len(got) != 0 {
			t.Errorf("found by its old name: %v", got)
		}
		if got := find("crumble crème", ""); !slices.Equal(got, []int64{p.ID}) {
			t.Errorf("not found by its new name: %v", got)
		}
		if n := words(p.ID); n != 2 {
			t.Errorf("%d index rows after the rename, want 2", n)
		}
	})
}

// TestSearchIndexBuiltByMigration: pets that exist when migration 6 runs
// are indexed by Migrate, and an interrupted build is finished by the
// next start.
func TestSearchIndexBuiltByMigration(t *testing.T) {
	t.Parallel()
	for _, driver := range modelstest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storeAt(t, driver, 5)
			insert := func(names ...string) {
				t.Helper()
				for _, n := range names {
					if _, err := s.SQLDB().Exec("INSERT INTO pets (name, category_id, status, created_at, updated_at) VALUES (?, 1, 'available', ?, ?)",
						n, "2026-01-02 03:04:05", "2026-01-02 03:04:05"); err != nil {
						t.Fatal(err)
					}
				}
			}
			insert("Old Pépé", "Old Mochi 🐾", "Old 小狗")
			for i := range 4500 { // more than one batch of the build
				insert(fmt.Sprintf("Filler %d", i))
			}
			res, err := s.Migrate(ctx)
			if err != nil || !slices.Contains(res.Applied, 6) {
				t.Fatalf("Migrate = %+v, %v; want migration 6 applied", res, err)
			}
			check := func(q string, want ...string) {
				t.Helper()
				got, _ := searchAll(t, s, models.PetQuery{Limit: 20, NameContains: q})
				if !slices.Equal(names(got), want) {
					t.Errorf("search %q after the migration = %q, want %q", q, names(got), want)
				}
			}
			check("pepe", "Old Pépé")
			check("🐾", "Old Mochi 🐾")
			check("狗", "Old 小狗")
			check("filler 4499", "Filler 4499")
			var state string
			if err := s.SQLDB().QueryRow("SELECT value FROM settings WHERE name = 'pets.name_index'").Scan(&state); err != nil || state != "ready" {
				t.Errorf("index state %q, %v; want ready", state, err)
			}

			// A build cut short: rows missing, the state still building.
			for _, stmt := range []string{"DELETE FROM pet_name_words WHERE pet_id > 2", "UPDATE settings SET value = 'building' WHERE name = 'pets.name_index'"} {
				if _, err := s.SQLDB().Exec(stmt); err != nil {
					t.Fatal(err)
				}
			}
			check("filler 4499")
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			check("filler 4499", "Filler 4499")
			check("old", "Old 小狗", "Old Mochi 🐾", "Old Pépé")
		})
	}
}

// TestSearchSameOnBothEngines runs the same searches over the same pets
// on SQLite and MariaDB: the same pets must come back.
func TestSearchSameOnBothEngines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stores := map[string]*models.Store{}
	for _, driver := range modelstest.Drivers {
		s := modelstest.Open(t, driver)
		createSearchPets(t, s)
		if _, err := s.SeedPets(ctx, 3000, "test", nil); err != nil {
			t.Fatal(err)
		}
		stores[driver] = s
	}
	queries := []string{"lu", "Luna", "luna 1", "pepe", "PÉPÉ", "pé", "🐾", "mochi 🐾 1", "%", "_", "'", "--", "zoë", "ZOE",
		"strasse", "狗", "ω", "m", "ma", "1", "12", "2999", "rex", "kiwi 2", "zzz", "r", "chloe", "σ", "i"}
	for _, q := range queries {
		for _, st := range []models.Status{"", models.StatusPending} {
			results := map[string][]string{}
			for driver, s := range stores {
				pets, _ := searchAll(t, s, models.PetQuery{Limit: 50, NameContains: q, Status: st})
				for _, p := range pets {
					results[driver] = append(results[driver], fmt.Sprintf("%d %s %s", p.ID, p.Name, p.Status))
				}
			}
			if !slices.Equal(results[models.DriverSQLite], results[models.DriverMySQL]) {
				t.Errorf("search %q status %q: SQLite found %d pets, MariaDB %d, or not the same",
					q, st, len(results[models.DriverSQLite]), len(results[models.DriverMySQL]))
			}
			if q != "zzz" && len(results[models.DriverSQLite]) == 0 && st == "" {
				t.Errorf("search %q found nothing: the comparison proves little", q)
			}
		}
	}
}

// TestSearchOnManyPets searches 43,000 pets: every kind of plan meets a
// table large enough for the planners to prefer scans if they could.
// Every statement of a search must read the index (or pets by key), never
// scan a table; a search whose words are each common but never together
// stops on its budget and goes on from where it stopped.
func TestSearchOnManyPets(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		rare, err := s.CreatePet(ctx, models.NewPet{Name: "Luna Rex", CategoryID: 1, Status: models.StatusSold}, "test")
		if err != nil {
			t.Fatal(err)
		}
		seeded, err := s.SeedPets(ctx, 12_000, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		// Then, written directly with their index rows (faster than one
		// CreatePet each): 5100 Lunas and 5100 Rexes, never together, and
		// Q0 to Q20999: "q" starts more words, with more entries, than can
		// be read whole.
		var more []string
		for i := range 5100 {
			more = append(more, fmt.Sprintf("Luna %d", i), fmt.Sprintf("Rex %d", i))
		}
		for i := range 21_000 {
			more = append(more, fmt.Sprintf("Q%d", i))
		}
		id := seeded.LastID
		for from := 0; from < len(more); from += 400 {
			var pets, words []string
			var petArgs, wordArgs []any
			for _, name := range more[from:min(from+400, len(more))] {
				id++
				pets = append(pets, "(?, ?, 1, ?, '2026-01-02 03:04:05', '2026-01-02 03:04:05')")
				petArgs = append(petArgs, id, name, string(models.Statuses[id%3]))
				for _, w := range models.SearchWords(name) {
					words = append(words, "(?, ?)")
					wordArgs = append(wordArgs, []byte(w), id)
				}
			}
			for _, stmt := range []struct {
				sql  string
				args []any
			}{
				{"INSERT INTO pets (id, name, category_id, status, created_at, updated_at) VALUES " + strings.Join(pets, ","), petArgs},
				{"INSERT INTO pet_name_words (word, pet_id) VALUES " + strings.Join(words, ","), wordArgs},
			} {
				if _, err := s.SQLDB().Exec(stmt.sql, stmt.args...); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The statistics a database has in production: InnoDB keeps its
		// own (refreshed here after the bulk load, as SeedPets does); a
		// SQLite file has none, since nothing runs ANALYZE on it (see
		// SeedPets).
		if s.Driver() == models.DriverMySQL {
			if _, err := s.SQLDB().Exec("ANALYZE TABLE pets, pet_name_words"); err != nil {
				t.Fatal(err)
			}
		}
		// One query per kind of plan: a word of one indexed word, of a few,
		// of many (a range read whole), of very many (pets newest first),
		// common words with another word, nothing, in both directions.
		queries := []models.PetQuery{
			{NameContains: "luna"}, {NameContains: "m"}, {NameContains: "12"}, {NameContains: "1"}, {NameContains: "q"},
			{NameContains: "q1"}, {NameContains: "luna rex"}, {NameContains: "luna 1"}, {NameContains: "mochi 🐾 11999"},
			{NameContains: "zzz"}, {NameContains: "luna", Status: models.StatusSold}, {NameContains: "q", Status: models.StatusPending},
			{NameContains: "1", Status: models.StatusPending}, {NameContains: "12", After: 5000}, {NameContains: "m", After: 5000},
			{NameContains: "q", After: 30_000}, {NameContains: "luna rex", After: 1},
		}
		for _, q := range queries {
			t.Run(fmt.Sprintf("%s/%s/after=%d", q.NameContains, q.Status, q.After), func(t *testing.T) {
				q.Limit = 20
				if q.After == 0 {
					q.Before = math.MaxInt64
				}
				var stmts [][2]any
				tctx := models.TraceSearch(ctx, func(query string, args []any) { stmts = append(stmts, [2]any{query, args}) })
				if _, err := s.ListPetsPage(tctx, q); err != nil {
					t.Fatal(err)
				}
				// Candidates come off the index, except for "q": it starts
				// too many words, common enough to read pets newest first.
				fromIndex := false
				for _, st := range stmts {
					query, args := st[0].(string), st[1].([]any)
					plan := explain(t, s, query, args)
					if bad := fullScan(s.Driver(), plan); bad != "" {
						t.Errorf("a full scan (%s) in\n%s\nplan:\n%s", bad, query, strings.Join(plan, "\n"))
					}
					planning := strings.HasPrefix(query, "SELECT word ") || strings.HasPrefix(query, "SELECT COUNT(*) ")
					fromIndex = fromIndex || (!planning && readsWordIndex(s.Driver(), plan))
				}
				if want := q.NameContains != "q" && q.NameContains != "zzz"; fromIndex != want {
					t.Errorf("candidates read off pet_name_words's key: %v, want %v (%d statements)", fromIndex, want, len(stmts))
				}
			})
		}

		// "luna rex": 6100 Lunas and Rexes, never together but in the
		// oldest pet. Each page examines at most the budget, says where it
		// stopped, and the last one finds it.
		got, pages := searchAll(t, s, models.PetQuery{Limit: 20, NameContains: "luna rex"})
		if len(got) != 1 || got[0].ID != rare.ID || pages != 2 {
			t.Errorf("luna rex: %q in %d pages, want the oldest pet on the second page", names(got), pages)
		}
		first, err := s.ListPetsPage(ctx, models.PetQuery{Limit: 20, NameContains: "luna rex", Before: math.MaxInt64})
		if err != nil || len(first.Pets) != 0 || !first.More || first.Resume == 0 {
			t.Errorf("luna rex, first page: %+v, %v; want empty, stopped, resumable", first, err)
		}
		// Dense and range plans find what the rule says, newest first.
		for _, q := range []string{"q", "q2", "1", "12", "luna 1"} {
			page := models.PetQuery{Limit: 100, NameContains: q, Status: models.StatusSold, Before: math.MaxInt64}
			var got []models.Pet
			for range 3 {
				res, err := s.ListPetsPage(ctx, page)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, res.Pets...)
				if !res.More || res.Resume != 0 || len(res.Pets) == 0 {
					break
				}
				page.Before = res.Pets[0].ID
			}
			if len(got) == 0 {
				t.Errorf("search %q found nothing", q)
			}
			for i, p := range got {
				if !asciiMatches(p.Name, q) || p.Status != models.StatusSold || (i%100 > 0 && p.ID <= got[i-1].ID) {
					t.Fatalf("search %q found %+v at %d", q, p, i)
				}
			}
		}
	})
}

// explain returns the plan of a statement, one line per step.
func explain(tb testing.TB, s *models.Store, query string, args []any) []string {
	tb.Helper()
	prefix := "EXPLAIN "
	if s.Driver() == models.DriverSQLite {
		prefix = "EXPLAIN QUERY PLAN "
	}
	rows, err := s.SQLDB().Query(prefix+query, args...)
	if err != nil {
		tb.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var plan []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		var parts []string
		for i, v := range vals {
			parts = append(parts, cols[i]+"="+v.String)
		}
		plan = append(plan, strings.Join(parts, " "))
	}
	return plan
}

// The tables a search reads, by the names and aliases its statements give
// them.
var (
	sqliteScan   = regexp.MustCompile(`detail=SCAN (pets|pet_name_words|d|p|f\d)\b`)
	sqliteIndex  = regexp.MustCompile(`detail=SEARCH (pet_name_words|d|f\d) USING (COVERING INDEX|PRIMARY KEY)`)
	mysqlTable   = regexp.MustCompile(`table=(pets|pet_name_words|d|p|f\d) `)
	mysqlFull    = regexp.MustCompile(`type=(ALL|index) `)
	mysqlWordKey = regexp.MustCompile(`table=(pet_name_words|d|f\d) type=(range|ref|eq_ref) .*key=PRIMARY `)
)

func fullScan(driver string, plan []string) string {
	for _, line := range plan {
		if driver == models.DriverSQLite {
			if m := sqliteScan.FindString(line); m != "" {
				return m
			}
		} else if mysqlTable.MatchString(line) && mysqlFull.MatchString(line) {
			return line
		}
	}
	return ""
}

func readsWordIndex(driver string, plan []string) bool {
	for _, line := range plan {
		if (driver == models.DriverSQLite && sqliteIndex.MatchString(line)) || (driver == models.DriverMySQL && mysqlWordKey.MatchString(line)) {
			return true
		}
	}
	return false
}

// FuzzSearchWords checks the search rule on any text: words are non-empty
// folded text without spaces or control characters, folding twice changes
// nothing, a name matches itself and any of its words' starts, and index
// keys are valid UTF-8 of at most 32 bytes, one per distinct key.
func FuzzSearchWords(f *testing.F) {
	for _, n := range searchNames {
		f.Add(n, "lu")
	}
	f.Add("a\u0301b", "á")
	f.Add("ﬁx ǅ", "FI")
	f.Fuzz(func(t *testing.T, name, search string) {
		if utf8.RuneCountInString(name) > models.MaxNameLength || utf8.RuneCountInString(search) > models.MaxSearchLength {
			t.Skip("longer than names and searches can be")
		}
		words := models.SearchWords(name)
		for _, w := range words {
			if w == "" || !utf8.ValidString(w) || strings.IndexFunc(w, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
				t.Fatalf("SearchWords(%q) has word %q", name, w)
			}
		}
		if again := models.SearchWords(strings.Join(words, " ")); !slices.Equal(again, words) {
			t.Fatalf("SearchWords(%q) = %q, but its words give %q", name, words, again)
		}
		if len(words) > 0 && !models.MatchesWords(name, name) {
			t.Fatalf("%q does not match itself", name)
		}
		for _, w := range words[:min(len(words), 10)] {
			r, _ := utf8.DecodeRuneInString(w)
			if !models.MatchesWords(name, string(r)) {
				t.Fatalf("%q does not match the start %q of its word %q", name, string(r), w)
			}
		}
		keys := models.NameKeys(name)
		for i, k := range keys {
			if len(k) > 32 || !utf8.ValidString(k) || slices.Contains(keys[:i], k) {
				t.Fatalf("NameKeys(%q) = %q", name, keys)
			}
		}
		// A search word starting a name word starts its key too (cut to
		// the key's length), so the index finds every match.
		if models.MatchesWords(name, search) {
			for _, sw := range models.SearchWords(search) {
				cut := sw
				for len(cut) > 32 {
					_, size := utf8.DecodeLastRuneInString(cut)
					cut = cut[:len(cut)-size]
				}
				if !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, cut) }) {
					t.Fatalf("%q matches %q but no key of %q serves %q", name, search, keys, cut)
				}
			}
		}
	})
}
