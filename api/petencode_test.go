package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"petstore/models"
)

// encodingJSON is what writeJSON writes for v.
func encodingJSON(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func toPet(p models.Pet) Pet {
	return Pet{ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: p.Status}
}

// appendPets is the body listPets writes for a page of pets.
func appendPets(pets []models.Pet) []byte {
	b := []byte{'['}
	for i, p := range pets {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPet(b, p.ID, p.Name, p.CategoryID, p.Status)
	}
	return append(b, ']', '\n')
}

var jsonNames = []string{"", "Rex", "Pépé", "Mochi 🐾", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnew\nline\r\b\f",
	"\x00\x01\x1f\x7f", "bad \xff utf8 \xc3", "line\u2028para\u2029", "\u00e9\u0301", "\ufeffbom", "日本語の名前", "end\\"}

// The hand-written bodies are byte for byte encoding/json's.
func TestAppendPetMatchesEncodingJSON(t *testing.T) {
	var (
		pets   []models.Pet
		shaped []Pet // what encoding/json wrote from
	)
	for i, name := range jsonNames {
		p := models.Pet{ID: int64(i) * 1e17, Name: name, CategoryID: -int64(i), Status: models.StatusSold}
		pets, shaped = append(pets, p), append(shaped, toPet(p))
	}
	if got, want := appendPets(pets), encodingJSON(t, shaped); !bytes.Equal(got, want) {
		t.Errorf("list body:\n got %s\nwant %s", got, want)
	}
	if got, want := appendPets(nil), encodingJSON(t, []Pet{}); !bytes.Equal(got, want) {
		t.Errorf("empty list body: got %q, want %q", got, want)
	}
	for i, p := range pets {
		if got, want := append(appendPet(nil, p.ID, p.Name, p.CategoryID, p.Status), '\n'), encodingJSON(t, shaped[i]); !bytes.Equal(got, want) {
			t.Errorf("pet body: got %q, want %q", got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonNames {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := append(appendJSONString(nil, s), '\n')
		if want := encodingJSON(t, s); !bytes.Equal(got, want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
		// A page's names come as the driver's bytes: the same text.
		if fromBytes := append(appendJSONString(nil, []byte(s)), '\n'); !bytes.Equal(fromBytes, got) {
			t.Errorf("appendJSONString([]byte(%q)) = %s, want %s", s, fromBytes, got)
		}
	})
}

// An event is written by hand exactly as encoding/json writes Event.
func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 9, 30, 0, 123456000, time.UTC)
	for _, e := range []models.Event{
		{ID: 1, Type: models.EventPetCreated, OccurredAt: at, Pet: models.Pet{ID: 7, Name: `Rex "<&>" 🐾`, CategoryID: 1, Status: models.StatusAvailable}},
		{ID: 1 << 62, Type: models.EventPetUpdated, OccurredAt: at.Truncate(time.Second), Changed: []string{"name", "categoryId", "status"},
			Pet: models.Pet{ID: 1<<63 - 1, Name: "Pépé\u2028", CategoryID: 1<<63 - 1, Status: models.StatusSold}},
	} {
		want := encodingJSON(t, Event{ID: models.FormatEventID(e.ID), Type: string(e.Type), OccurredAt: e.OccurredAt, Pet: toPet(e.Pet), Changed: e.Changed})
		if got := append(appendEvent(nil, &e), '\n'); !bytes.Equal(got, want) {
			t.Errorf("appendEvent:\n got %s\nwant %s", got, want)
		}
	}
}
