package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/api"
	"petstore/httpcode"
	"petstore/internal/testkit"
	"petstore/models"
)

func TestCreatePetRejectsBadInput(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		tests := []struct {
			name        string
			contentType string
			body        string
			status      int
			code        models.Code
			field       string // the detail expected, if any
		}{
			{"empty body", "application/json", "", 400, models.CodeInvalidRequest, ""},
			{"not JSON", "application/json", "{name: Rex}", 400, models.CodeInvalidRequest, ""},
			{"truncated JSON", "application/json", `{"name":"Rex"`, 400, models.CodeInvalidRequest, ""},
			{"array body", "application/json", `[{"name":"Rex","categoryId":1}]`, 400, models.CodeInvalidRequest, ""},
			{"string body", "application/json", `"Rex"`, 400, models.CodeInvalidRequest, ""},
			{"null body", "application/json", `null`, 400, models.CodeInvalidRequest, ""},
			{"two objects", "application/json", `{"name":"A","categoryId":1}{"name":"B","categoryId":1}`, 400, models.CodeInvalidRequest, ""},
			{"trailing garbage", "application/json", `{"name":"A","categoryId":1} x`, 400, models.CodeInvalidRequest, ""},
			{"invalid UTF-8", "application/json", "{\"name\":\"a\xff\",\"categoryId\":1}", 400, models.CodeInvalidRequest, ""},
			{"missing name", "application/json", `{"categoryId":1}`, 400, models.CodeInvalidRequest, "name"},
			{"null name", "application/json", `{"name":null,"categoryId":1}`, 400, models.CodeInvalidRequest, "name"},
			{"empty name", "application/json", `{"name":"","categoryId":1}`, 400, models.CodeInvalidRequest, "name"},
			{"blank name", "application/json", `{"name":" \t\n ","categoryId":1}`, 400, models.CodeInvalidRequest, "name"},
			{"number name", "application/json", `{"name":42,"categoryId":1}`, 400, models.CodeInvalidRequest, "name"},
			{"object name", "application/json", `{"name":{"x":1},"categoryId":1}`, 400, models.CodeInvalidRequest, "name"},
			{"256 code points", "application/json", `{"name":"` + strings.Repeat("ü", 256) + `","categoryId":1}`, 400, models.CodeInvalidRequest, "name"},
			{"NUL in name", "application/json", `{"name":"a\u0000b","categoryId":1}`, 400, models.CodeInvalidRequest, "name"},
			{"missing categoryId", "application/json", `{"name":"Rex"}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"null categoryId", "application/json", `{"name":"Rex","categoryId":null}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"string categoryId", "application/json", `{"name":"Rex","categoryId":"5"}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"fraction categoryId", "application/json", `{"name":"Rex","categoryId":1.5}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"integral fraction categoryId", "application/json", `{"name":"Rex","categoryId":1.0}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"exponent categoryId", "application/json", `{"name":"Rex","categoryId":1e3}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"zero categoryId", "application/json", `{"name":"Rex","categoryId":0}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"negative categoryId", "application/json", `{"name":"Rex","categoryId":-1}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"overflow categoryId", "application/json", `{"name":"Rex","categoryId":9223372036854775808}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"huge categoryId", "application/json", `{"name":"Rex","categoryId":1` + strings.Repeat("0", 400) + `}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"boolean categoryId", "application/json", `{"name":"Rex","categoryId":true}`, 400, models.CodeInvalidRequest, "categoryId"},
			{"unknown status", "application/json", `{"name":"Rex","categoryId":1,"status":"lost"}`, 400, models.CodeInvalidRequest, "status"},
			{"capitalised status", "application/json", `{"name":"Rex","categoryId":1,"status":"Available"}`, 400, models.CodeInvalidRequest, "status"},
			{"empty status", "application/json", `{"name":"Rex","categoryId":1,"status":""}`, 400, models.CodeInvalidRequest, "status"},
			{"number status", "application/json", `{"name":"Rex","categoryId":1,"status":1}`, 400, models.CodeInvalidRequest, "status"},
			{"text/plain", "text/plain", `{"name":"Rex","categoryId":1}`, 415, httpcode.UnsupportedMediaType, ""},
			{"form", "application/x-www-form-urlencoded", `name=Rex&categoryId=1`, 415, httpcode.UnsupportedMediaType, ""},
			{"no content type", "", `{"name":"Rex","categoryId":1}`, 415, httpcode.UnsupportedMediaType, ""},
			{"over 1 MiB", "application/json", `{"name":"Rex","categoryId":1,"pad":"` + strings.Repeat("x", api.MaxBodyBytes) + `"}`, 413, httpcode.PayloadTooLarge, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := e.authHeader()
				if tt.contentType != "" {
					h["Content-Type"] = tt.contentType
				}
				r := e.do("POST", "/v1/pets", h, tt.body)
				body := wantError(t, r, tt.status, tt.code)
				if tt.field != "" {
					if len(body.Details) != 1 || body.Details[0].Field != tt.field || body.Details[0].Message == "" {
						t.Errorf("details = %+v, want one for %s", body.Details, tt.field)
					}
				} else if body.Details != nil {
					// As documented: a body that cannot be read as a whole
					// names no field.
					t.Errorf("details = %+v, want none", body.Details)
				}
				if loc := r.Header.Get("Location"); loc != "" {
					t.Errorf("Location %q on an error", loc)
				}
			})
		}
		if n := e.countPets(); n != 0 {
			t.Fatalf("bad requests stored %d pets", n)
		}

		// Several bad fields are all named, in the order of the NewPet shape.
		body := wantError(t, e.post(`{"name":"","categoryId":"x","status":"gone"}`), 400, models.CodeInvalidRequest)
		var fields []string
		for _, d := range body.Details {
			fields = append(fields, d.Field)
		}
		if strings.Join(fields, ",") != "name,categoryId,status" {
			t.Errorf("details fields = %v", fields)
		}
	})
}

func TestCreatePet(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		tests := []struct {
			name string
			body string
			want api.Pet // ID is not compared
		}{
			{"status defaults to available", `{"name":"Rex","categoryId":1}`, api.Pet{Name: "Rex", CategoryID: 1, Status: "available"}},
			{"null status is the default", `{"name":"Rex","categoryId":1,"status":null}`, api.Pet{Name: "Rex", CategoryID: 1, Status: "available"}},
			{"pending", `{"name":"Tom","categoryId":2,"status":"pending"}`, api.Pet{Name: "Tom", CategoryID: 2, Status: "pending"}},
			{"sold", `{"name":"Kit","categoryId":3,"status":"sold"}`, api.Pet{Name: "Kit", CategoryID: 3, Status: "sold"}},
			{"name trimmed", `{"name":"  \t Mr  Fluffy \n","categoryId":4}`, api.Pet{Name: "Mr  Fluffy", CategoryID: 4, Status: "available"}},
			{"largest categoryId", `{"name":"Max","categoryId":9223372036854775807}`, api.Pet{Name: "Max", CategoryID: math.MaxInt64, Status: "available"}},
			{"client id ignored", `{"id":999,"name":"Idle","categoryId":5}`, api.Pet{Name: "Idle", CategoryID: 5, Status: "available"}},
			{"unknown fields ignored", `{"name":"Odd","categoryId":6,"tags":["x"],"photoUrls":[]}`, api.Pet{Name: "Odd", CategoryID: 6, Status: "available"}},
			{"HTML is just text", `{"name":"<script>alert(1)</script>","categoryId":7}`, api.Pet{Name: "<script>alert(1)</script>", CategoryID: 7, Status: "available"}},
			{"255 code points", `{"name":"` + strings.Repeat("ü", 255) + `","categoryId":8}`, api.Pet{Name: strings.Repeat("ü", 255), CategoryID: 8, Status: "available"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.post(tt.body)
				got := decodePet(t, r, http.StatusCreated)
				if got.ID < 1 || got.ID == 999 {
					t.Errorf("id = %d, want one assigned by the service", got.ID)
				}
				if loc := r.Header.Get("Location"); loc != "/v1/pets/"+strconv.FormatInt(got.ID, 10) {
					t.Errorf("Location = %q", loc)
				}
				tt.want.ID = got.ID
				if got != tt.want {
					t.Errorf("created %+v, want %+v", got, tt.want)
				}
				if fetched := decodePet(t, e.get("/v1/pets/"+strconv.FormatInt(got.ID, 10)), http.StatusOK); fetched != tt.want {
					t.Errorf("fetched %+v, want %+v", fetched, tt.want)
				}
			})
		}
		// Media types with parameters and +json suffixes are JSON too.
		for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"} {
			h := e.authHeader()
			h["Content-Type"] = ct
			if r := e.do("POST", "/v1/pets", h, `{"name":"Typed","categoryId":1}`); r.Status != http.StatusCreated {
				t.Errorf("Content-Type %q: status %d", ct, r.Status)
			}
		}
	})
}

// Names in any script round-trip byte for byte through create, fetch and list.
func TestUnicodeNamesRoundTrip(t *testing.T) {
	t.Parallel()
	names := []string{
		"Zoë Ångström-Øverdal", "Ñandú Çağrı", "小狗 ポチ 강아지", "Кот Барсик", "قطة", "🐶🐱🦜",
		"👨‍👩‍👧 family", "🏳️‍🌈 flag", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Nessie", "می\u200cخواهم", "1️⃣ ❤️", "e\u0301 combining", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 plane 1", strings.Repeat("🐍", 255),
	}
	forEach(t, func(t *testing.T, e *env) {
		ids := map[int64]string{}
		for _, name := range names {
			body, _ := json.Marshal(map[string]any{"name": name, "categoryId": 1})
			r := e.post(string(body))
			p := decodePet(t, r, http.StatusCreated)
			if p.Name != name {
				t.Errorf("created name %q, want %q", p.Name, name)
			}
			// The raw bytes carry the UTF-8 text itself, not escapes.
			if !bytes.Contains(r.Body, []byte(name)) {
				t.Errorf("response %s does not carry %q byte for byte", r.Body, name)
			}
			ids[p.ID] = name
			raw := e.get("/v1/pets/" + strconv.FormatInt(p.ID, 10))
			if !bytes.Contains(raw.Body, []byte(`"name":"`+name+`"`)) {
				t.Errorf("fetched %s, want name %q byte for byte", raw.Body, name)
			}
		}
		for _, p := range decodePets(t, e.get("/v1/pets?limit=100")) {
			if ids[p.ID] != p.Name {
				t.Errorf("listed %d as %q, want %q", p.ID, p.Name, ids[p.ID])
			}
		}
	})
}

func TestListPetsRejectsBadParameters(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		tests := []struct{ query, field string }{
			{"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=abc", "limit"}, {"limit=1.5", "limit"},
			{"limit=-5", "limit"}, {"limit=", "limit"}, {"limit=1&limit=2", "limit"}, {"limit=99999999999999999999", "limit"},
			{"status=lost", "status"}, {"status=SOLD", "status"}, {"status=", "status"},
			{"status=available%27%20OR%201=1--", "status"},
			{"after=abc", "after"}, {"after=-1", "after"}, {"after=1.5", "after"}, {"after=9223372036854775808", "after"},
			{"after=%2B5", "after"}, {"after=+5", "after"},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				body := wantError(t, e.get("/v1/pets?"+tt.query), http.StatusBadRequest, models.CodeInvalidRequest)
				if len(body.Details) != 1 || body.Details[0].Field != tt.field {
					t.Errorf("details = %+v, want one for %s", body.Details, tt.field)
				}
			})
		}
	})
}

// A query parameter an operation does not take is refused and named, as
// Stripe does, on every operation: a misspelt filter answered with every
// status, and a parameter sent to the others would be silently ignored.
func TestUnknownQueryParameters(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		created := decodePet(t, e.post(`{"name":"Rex","categoryId":1,"status":"sold"}`), http.StatusCreated)
		pet := "/v1/pets/" + strconv.FormatInt(created.ID, 10)
		jsonType := map[string]string{"Content-Type": "application/json"}
		tests := []struct {
			name, method, path string
			headers            map[string]string
			body               string
			fields             string
		}{
			{"list, misspelt status", "GET", "/v1/pets?stauts=sold", nil, "", "stauts"},
			{"list, capitalised name", "GET", "/v1/pets?Status=sold", nil, "", "Status"},
			{"list, with valid ones", "GET", "/v1/pets?limit=5&status=sold&offset=10", nil, "", "offset"},
			{"list, several, in name order", "GET", "/v1/pets?sort=name&q=Rex&limit=5", nil, "", "q,sort"},
			{"list, beside a bad one", "GET", "/v1/pets?limit=0&page=2", nil, "", "limit,page"},
			{"list, empty name", "GET", "/v1/pets?=sold", nil, "", ""},
			{"getPet", "GET", pet + "?status=available", nil, "", "status"},
			{"getPet, a bare name", "GET", pet + "?fields", nil, "", "fields"},
			{"createPet", "POST", "/v1/pets?status=pending", jsonType, `{"name":"Tom","categoryId":1}`, "status"},
			{"the change feed", "GET", "/v1/events?limit=5&type=pet.created", nil, "", "type"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := e.authHeader()
				for k, v := range tt.headers {
					h[k] = v
				}
				body := wantError(t, e.do(tt.method, tt.path, h, tt.body), http.StatusBadRequest, models.CodeInvalidRequest)
				var fields []string
				for _, d := range body.Details {
					fields = append(fields, d.Field)
					if d.Message == "" {
						t.Errorf("detail %+v has no message", d)
					}
				}
				if strings.Join(fields, ",") != tt.fields || len(body.Details) == 0 {
					t.Errorf("details = %+v, want one for each of %q", body.Details, tt.fields)
				}
				if len(body.Details) == 1 && !strings.Contains(body.Message, strconv.Quote(tt.fields)) {
					t.Errorf("message %q does not name the parameter", body.Message)
				}
			})
		}
		if n := e.countPets(); n != 1 {
			t.Errorf("%d pets stored, want only the first", n)
		}
		// The parameters each operation does take still work.
		if pets := decodePets(t, e.get("/v1/pets?limit=5&status=sold&after=0")); len(pets) != 1 {
			t.Errorf("list with its own parameters: %+v", pets)
		}
	})
}

// A query string Go cannot read whole (a pair separated by ';', a bad
// %-escape) is refused: dropping the pair answered ?limit=1;status=sold
// with an unfiltered list.
func TestListPetsRefusesUnreadableQuery(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		for _, query := range []string{"limit=500;", "limit=1;status=sold", "status=sold;limit=1", ";", "a=%zz&limit=1", "status=%"} {
			t.Run(query, func(t *testing.T) {
				body := wantError(t, e.get("/v1/pets?"+query), http.StatusBadRequest, models.CodeInvalidRequest)
				if !strings.HasPrefix(body.Message, "The query string cannot be read: ") {
					t.Errorf("message %q does not say what is wrong", body.Message)
				}
				if body.Details != nil {
					t.Errorf("details = %+v, want none: no one parameter is at fault", body.Details)
				}
			})
		}
		// Escaped, ';' is part of a value, and that value is checked.
		body := wantError(t, e.get("/v1/pets?status=sold%3B"), http.StatusBadRequest, models.CodeInvalidRequest)
		if len(body.Details) != 1 || body.Details[0].Field != "status" {
			t.Errorf("details = %+v, want one for status", body.Details)
		}
	})
}

// Names with invisible or text-direction characters are refused, with the
// character and its position; see also TestUnicodeNamesRoundTrip.
func TestCreatePetRefusesHiddenCharacters(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		for name, want := range map[string]string{
			"Rex\u202Etxt.exe": "Name must not contain invisible or text-direction characters (U+202E at position 4).",
			"\ufeffRex":        "Name must not contain invisible or text-direction characters (U+FEFF at position 1).",
			"R\u200bex":        "Name must not contain invisible or text-direction characters (U+200B at position 2).",
			"Re\u200dx":        "Name must not contain invisible or text-direction characters (U+200D at position 3).",
			"\u2066Rex\u2069":  "Name must not contain invisible or text-direction characters (U+2066 at position 1).",
		} {
			t.Run(name, func(t *testing.T) {
				body := wantError(t, e.post(`{"name":"`+name+`","categoryId":1}`), http.StatusBadRequest, models.CodeInvalidRequest)
				if body.Message != want || len(body.Details) != 1 || body.Details[0].Field != "name" || body.Details[0].Message != want {
					t.Errorf("error %+v, want %q for name", body, want)
				}
			})
		}
		if n := e.countPets(); n != 0 {
			t.Fatalf("%d pets stored", n)
		}
	})
}

var nextLink = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// TestListPetsPaging follows the Link headers through a few hundred pets,
// with and without a status filter: each pet is seen exactly once, in id order.
func TestListPetsPaging(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		if got := e.get("/v1/pets"); string(bytes.TrimSpace(got.Body)) != "[]" || got.Header.Get("Link") != "" {
			t.Fatalf("empty store: body %s, Link %q; want [] and no Link", got.Body, got.Header.Get("Link"))
		}
		ctx := context.Background()
		want := map[string][]int64{}
		for i := range 230 {
			st := models.Statuses[i%3]
			if i%10 == 0 {
				st = models.StatusSold
			}
			p, err := e.store.CreatePet(ctx, models.NewPet{Name: fmt.Sprintf("pet %d", i), CategoryID: int64(i%4 + 1), Status: st}, "test")
			if err != nil {
				t.Fatal(err)
			}
			want[""] = append(want[""], p.ID)
			want[string(st)] = append(want[string(st)], p.ID)
		}
		for _, status := range []string{"", "available", "pending", "sold"} {
			for _, limit := range []int{0, 1, 7, 20, 100} {
				t.Run(fmt.Sprintf("status=%s,limit=%d", status, limit), func(t *testing.T) {
					q := url.Values{}
					if status != "" {
						q.Set("status", status)
					}
					if limit > 0 {
						q.Set("limit", strconv.Itoa(limit))
					}
					wantLimit := limit
					if limit == 0 {
						wantLimit = 20
					}
					path := "/v1/pets?" + q.Encode()
					var seen []int64
					for pages := 0; path != ""; pages++ {
						if pages > 300 {
							t.Fatal("paging does not end")
						}
						r := e.get(path)
						pets := decodePets(t, r)
						if len(pets) > wantLimit {
							t.Fatalf("%s gave %d pets", path, len(pets))
						}
						for _, p := range pets {
							if status != "" && string(p.Status) != status {
								t.Fatalf("%s gave a %s pet", path, p.Status)
							}
							seen = append(seen, p.ID)
						}
						path = ""
						if link := r.Header.Get("Link"); link != "" {
							m := nextLink.FindStringSubmatch(link)
							if m == nil {
								t.Fatalf("Link %q is not <URL>; rel=\"next\"", link)
							}
							u, err := url.Parse(m[1])
							if err != nil {
								t.Fatal(err)
							}
							nq := u.Query()
							if nq.Get("limit") != strconv.Itoa(wantLimit) || nq.Get("status") != status {
								t.Fatalf("next link %q does not carry limit %d and status %q", link, wantLimit, status)
							}
							if len(pets) != wantLimit {
								t.Fatalf("a page of %d before the last, limit %d", len(pets), wantLimit)
							}
							path = u.RequestURI()
						}
					}
					if fmt.Sprint(seen) != fmt.Sprint(want[status]) {
						t.Fatalf("saw %d pets %v..., want %d in id order", len(seen), head(seen), len(want[status]))
					}
				})
			}
		}
		// after= past the end gives an empty page and no Link.
		last := want[""][len(want[""])-1]
		r := e.get("/v1/pets?after=" + strconv.FormatInt(last, 10))
		if len(decodePets(t, r)) != 0 || r.Header.Get("Link") != "" {
			t.Fatalf("past the end: %s, Link %q", r.Body, r.Header.Get("Link"))
		}
	})
}

func head(ids []int64) []int64 {
	if len(ids) > 5 {
		return ids[:5]
	}
	return ids
}

// TestConcurrentCreatesOverHTTP: 50 partners adding at once all succeed,
// get distinct ids, and are all found by paging.
func TestConcurrentCreatesOverHTTP(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		const n = 50
		var wg sync.WaitGroup
		ids := make([]int64, n)
		errs := make([]string, n)
		for i := range n {
			wg.Go(func() {
				req, _ := http.NewRequest("POST", e.srv.URL+"/v1/pets", strings.NewReader(fmt.Sprintf(`{"name":"concurrent %d","categoryId":%d}`, i, i+1)))
				req.Header.Set("Authorization", "Bearer "+e.key)
				req.Header.Set("Content-Type", "application/json")
				res, err := e.srv.Client().Do(req)
				if err != nil {
					errs[i] = err.Error()
					return
				}
				r := testkit.ReadReply(t, res)
				var p api.Pet
				if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &p) != nil {
					errs[i] = fmt.Sprintf("status %d: %s", r.Status, r.Body)
					return
				}
				ids[i] = p.ID
			})
		}
		wg.Wait()
		distinct := map[int64]bool{}
		for i := range n {
			if errs[i] != "" {
				t.Fatalf("create %d: %s", i, errs[i])
			}
			distinct[ids[i]] = true
		}
		if len(distinct) != n {
			t.Fatalf("%d distinct ids for %d creates", len(distinct), n)
		}
		found := map[int64]bool{}
		path := "/v1/pets?limit=7"
		for path != "" {
			r := e.get(path)
			for _, p := range decodePets(t, r) {
				found[p.ID] = true
			}
			path = ""
			if m := nextLink.FindStringSubmatch(r.Header.Get("Link")); m != nil {
				path = m[1]
			}
		}
		for id := range distinct {
			if !found[id] {
				t.Errorf("pet %d not found by paging", id)
			}
		}
	})
}

func TestGetPet(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		created := decodePet(t, e.post(`{"name":"Fetch me","categoryId":3,"status":"pending"}`), http.StatusCreated)
		id := strconv.FormatInt(created.ID, 10)
		tests := []struct {
			name   string
			path   string
			auth   bool
			status int
			code   models.Code
		}{
			{"found", "/v1/pets/" + id, true, 200, ""},
			{"unknown", "/v1/pets/987654321", true, 404, models.CodeNotFound},
			{"largest id, unknown", "/v1/pets/9223372036854775807", true, 404, models.CodeNotFound},
			{"not a number", "/v1/pets/abc", true, 400, models.CodeInvalidRequest},
			{"zero", "/v1/pets/0", true, 400, models.CodeInvalidRequest},
			{"negative", "/v1/pets/-1", true, 400, models.CodeInvalidRequest},
			{"fraction", "/v1/pets/1.5", true, 400, models.CodeInvalidRequest},
			{"overflow", "/v1/pets/9223372036854775808", true, 400, models.CodeInvalidRequest},
			{"SQL text", "/v1/pets/1%20OR%201=1", true, 400, models.CodeInvalidRequest},
			{"no credential", "/v1/pets/" + id, false, 401, models.CodeUnauthorized},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := map[string]string{}
				if tt.auth {
					h = e.authHeader()
				}
				r := e.do("GET", tt.path, h, "")
				wantDeprecationHeaders(t, r)
				if tt.status == 200 {
					if got := decodePet(t, r, 200); got != created {
						t.Errorf("got %+v, want %+v", got, created)
					}
					return
				}
				wantError(t, r, tt.status, tt.code)
			})
		}
	})
}

func wantDeprecationHeaders(t *testing.T, r response) {
	t.Helper()
	want := map[string]string{
		"Deprecation": "@" + strconv.FormatInt(api.DeprecatedAt.Unix(), 10),
		"Sunset":      "Thu, 05 Dec 2030 00:00:00 GMT",
		"Link":        `</v1/pets>; rel="successor-version"`,
	}
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// From the sunset date on, getPet answers 410 Gone (after authentication).
func TestGetPetAfterSunset(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		created := decodePet(t, e.post(`{"name":"Old","categoryId":1}`), http.StatusCreated)
		path := "/v1/pets/" + strconv.FormatInt(created.ID, 10)

		justBefore := api.SunsetAt.Add(-time.Second)
		e.clock.Store(&justBefore)
		if r := e.get(path); r.Status != http.StatusOK {
			t.Fatalf("a second before sunset: %d", r.Status)
		}
		for _, at := range []time.Time{api.SunsetAt, api.SunsetAt.AddDate(1, 0, 0)} {
			e.clock.Store(&at)
			r := e.get(path)
			wantDeprecationHeaders(t, r)
			wantError(t, r, http.StatusGone, httpcode.Gone)
			wantError(t, e.get("/v1/pets/abc"), http.StatusGone, httpcode.Gone)
			wantError(t, e.do("GET", path, nil, ""), http.StatusUnauthorized, models.CodeUnauthorized)
		}
		// The list endpoint, the successor, is not affected.
		if r := e.get("/v1/pets"); r.Status != http.StatusOK {
			t.Fatalf("list after sunset: %d", r.Status)
		}
	})
}
