package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"petstore/api"
	"petstore/api/client"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

func TestMain(m *testing.M) { modelstest.Main(m) }

// partner is the generated client talking to a real server (server.New, as
// serve builds it) over loopback HTTP, with an issued API key.
type partner struct {
	c    *client.ClientWithResponses
	base *url.URL // the server's root, to resolve Link targets against
	key  string
}

// newPartner serves the product over store and returns a client holding a
// fresh key. The clock stands before the sunset of getPet, so the test
// does not turn into a 410 in December 2030.
func newPartner(t *testing.T, store *models.Store) *partner {
	t.Helper()
	now := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	h, err := server.New(t.Context(), server.Deps{Store: store, Now: func() time.Time { return now }, AuthFailureLimit: rate.Inf})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	_, key, err := store.CreateAPIKey(context.Background(), "client test", "test")
	if err != nil {
		t.Fatal(err)
	}
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &partner{c: newClient(t, srv, key), base: base, key: key}
}

// newClient is the generated client on srv's /v1 (the document's server),
// sending key as its bearer credential.
func newClient(t *testing.T, srv *httptest.Server, key string) *client.ClientWithResponses {
	t.Helper()
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	}
	c, err := client.NewClientWithResponses(srv.URL+"/v1", client.WithHTTPClient(srv.Client()), client.WithRequestEditorFn(bearer))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClient drives the API through the generated client the way a partner
// would: create, page through everything by the Link header, read one pet
// conditionally and from the deprecated endpoint, and read error answers.
func TestClient(t *testing.T) {
	modelstest.ForEach(t, func(t *testing.T, store *models.Store) {
		p := newPartner(t, store)
		created := p.createPets(t, 7)
		t.Run("list follows Link", func(t *testing.T) { p.checkListAll(t, created) })
		t.Run("conditional list", func(t *testing.T) { p.checkConditionalList(t) })
		t.Run("deprecated getPet", func(t *testing.T) { p.checkGetPet(t, created[3]) })
		t.Run("errors", func(t *testing.T) { p.checkErrors(t) })
		t.Run("change feed", func(t *testing.T) { p.checkEvents(t, created) })
	})
}

// checkEvents follows the change feed from its start through the Link of
// each page, as a partner keeping a copy does, and finds every create.
func (p *partner) checkEvents(t *testing.T, created []client.Pet) {
	limit := int32(3)
	params := &client.ListEventsParams{Limit: &limit}
	var got []client.Pet
	for range 10 {
		res, err := p.c.ListEventsWithResponse(t.Context(), params)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil || res.Headers200 == nil {
			t.Fatalf("events %+v: %d %s", params, res.StatusCode(), res.Body)
		}
		for _, e := range *res.JSON200 {
			if e.Type != "pet.created" || e.Changed != nil {
				t.Errorf("event %+v, want pet.created without changed", e)
			}
			got = append(got, e.Pet)
		}
		if len(*res.JSON200) == 0 {
			break
		}
		after := p.eventsCursor(t, res.Headers200.Link)
		params = &client.ListEventsParams{After: &after, Limit: &limit}
	}
	if fmt.Sprint(got) != fmt.Sprint(created) {
		t.Errorf("the feed has\n%v\nwant\n%v", got, created)
	}
}

// eventsCursor reads the cursor of the Link of a page of events.
func (p *partner) eventsCursor(t *testing.T, link string) string {
	t.Helper()
	target, _ := strings.CutSuffix(link, `>; rel="next"`)
	target, _ = strings.CutPrefix(target, "<")
	u, err := p.base.Parse(target)
	if err != nil || u.Path != "/v1/events" || u.Query().Get("after") == "" {
		t.Fatalf("Link = %q, want <.../v1/events?after=...>; rel=\"next\"", link)
	}
	return u.Query().Get("after")
}

// createPets creates n pets through the client, each with an
// Idempotency-Key, and returns them as the server answered.
func (p *partner) createPets(t *testing.T, n int) []client.Pet {
	t.Helper()
	sold := client.Sold
	var pets []client.Pet
	for i := range n {
		body := client.NewPet{Name: fmt.Sprintf("Client pet %d", i), CategoryId: int64(i + 1)}
		if i%2 == 1 {
			body.Status = &sold
		}
		res := p.create(t, body, fmt.Sprintf("client-test-%d", i))
		if res.StatusCode() != http.StatusCreated || res.JSON201 == nil {
			t.Fatalf("create: %d %s", res.StatusCode(), res.Body)
		}
		got := *res.JSON201
		want := client.Pet{Id: got.Id, Name: body.Name, CategoryId: body.CategoryId, Status: client.Available}
		if body.Status != nil {
			want.Status = *body.Status
		}
		if got != want || got.Id < 1 {
			t.Fatalf("created %+v, want %+v", got, want)
		}
		if loc := res.HTTPResponse.Header.Get("Location"); loc != "/v1/pets/"+strconv.FormatInt(got.Id, 10) {
			t.Errorf("Location = %q", loc)
		}
		pets = append(pets, got)
	}
	// A retry with the same key creates nothing: the first answer again.
	again := p.create(t, client.NewPet{Name: "Client pet 0", CategoryId: 1}, "client-test-0")
	if again.StatusCode() != http.StatusCreated || again.JSON201 == nil || *again.JSON201 != pets[0] ||
		again.Headers201 == nil || again.Headers201.IdempotentReplayed == nil || *again.Headers201.IdempotentReplayed != "true" {
		t.Fatalf("retry of the first create: %d %s, headers %v; want the first pet, replayed", again.StatusCode(), again.Body, again.HTTPResponse.Header)
	}
	return pets
}

// create sends POST /v1/pets through the client, with key as its
// Idempotency-Key (the operation's typed header parameter) unless key is
// empty. It is the test's one create call, so how the key travels is
// written once.
func (p *partner) create(t *testing.T, body client.NewPet, key string) *client.CreatePetResponse {
	t.Helper()
	params := &client.CreatePetParams{}
	if key != "" {
		params.IdempotencyKey = &key
	}
	res, err := p.c.CreatePetWithResponse(t.Context(), params, body)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkListAll pages through every pet, three at a time, taking each next
// page's parameters from the Link header alone.
func (p *partner) checkListAll(t *testing.T, want []client.Pet) {
	limit := int32(3)
	params := &client.ListPetsParams{Limit: &limit}
	var got []client.Pet
	pages := 0
	for params != nil {
		res, err := p.c.ListPetsWithResponse(t.Context(), params)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil || res.Headers200 == nil {
			t.Fatalf("list %+v: %d %s", params, res.StatusCode(), res.Body)
		}
		pages++
		got = append(got, *res.JSON200...)
		if pages > len(want) {
			t.Fatalf("still paging after %d pages: %v", pages, got)
		}
		params = p.nextPage(t, res.Headers200.Link)
	}
	if pages != 3 {
		t.Errorf("%d pages of 3 for %d pets, want 3", pages, len(want))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("listed\n%v\nwant\n%v", got, want)
	}
}

// nextPage turns a Link header into the parameters of the page it names
// (nil when there is no next page): a partner keeps no cursor of its own.
func (p *partner) nextPage(t *testing.T, link *string) *client.ListPetsParams {
	t.Helper()
	if link == nil {
		return nil
	}
	target, ok := strings.CutSuffix(*link, `>; rel="next"`)
	target, ok2 := strings.CutPrefix(target, "<")
	if !ok || !ok2 {
		t.Fatalf("Link = %q, want <URL>; rel=\"next\"", *link)
	}
	u, err := p.base.Parse(target)
	if err != nil {
		t.Fatalf("Link target %q: %v", target, err)
	}
	if u.Host != p.base.Host || u.Path != "/v1/pets" {
		t.Fatalf("Link target %q is not this server's /v1/pets", target)
	}
	q := u.Query()
	after, err := strconv.ParseInt(q.Get("after"), 10, 64)
	if err != nil {
		t.Fatalf("Link target %q: after: %v", target, err)
	}
	limit, err := strconv.ParseInt(q.Get("limit"), 10, 32)
	if err != nil {
		t.Fatalf("Link target %q: limit: %v", target, err)
	}
	l32 := int32(limit)
	return &client.ListPetsParams{After: &after, Limit: &l32}
}

// checkConditionalList sends a page's ETag back: 304 while nothing changed.
func (p *partner) checkConditionalList(t *testing.T) {
	limit := int32(2)
	res, err := p.c.ListPetsWithResponse(t.Context(), &client.ListPetsParams{Limit: &limit})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != http.StatusOK || res.Headers200 == nil || res.Headers200.ETag == "" {
		t.Fatalf("list: %d, headers %+v", res.StatusCode(), res.Headers200)
	}
	etag := res.Headers200.ETag
	res, err = p.c.ListPetsWithResponse(t.Context(), &client.ListPetsParams{Limit: &limit, IfNoneMatch: &etag})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != http.StatusNotModified || len(res.Body) != 0 || res.Headers304 == nil || res.Headers304.ETag != etag {
		t.Errorf("list with If-None-Match %s: %d %q, headers %+v", etag, res.StatusCode(), res.Body, res.Headers304)
	}
}

// checkGetPet fetches pet from the deprecated endpoint: the deprecation,
// the sunset and the successor reach the caller as parsed headers, on 200,
// on 304 and on an error alike, as do the request id and the caching rule.
func (p *partner) checkGetPet(t *testing.T, pet client.Pet) {
	res, err := p.c.GetPetWithResponse(t.Context(), pet.Id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != http.StatusOK || res.JSON200 == nil || res.Headers200 == nil {
		t.Fatalf("get %d: %d %s", pet.Id, res.StatusCode(), res.Body)
	}
	if *res.JSON200 != pet {
		t.Errorf("got %+v, want %+v", *res.JSON200, pet)
	}
	h := res.Headers200
	want := deprecation{"@" + strconv.FormatInt(api.DeprecatedAt.Unix(), 10), "Thu, 05 Dec 2030 00:00:00 GMT", `</v1/pets>; rel="successor-version"`}
	if got := (deprecation{h.Deprecation, h.Sunset, h.Link}); got != want || h.ETag == "" || h.XRequestId == "" || h.CacheControl != "private, no-cache" {
		t.Errorf("200 headers %+v; want %+v, an ETag, a request id and private, no-cache", h, want)
	}
	res, err = p.c.GetPetWithResponse(t.Context(), pet.Id, &client.GetPetParams{IfNoneMatch: &h.ETag})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != http.StatusNotModified || res.Headers304 == nil {
		t.Fatalf("get %d with If-None-Match: %d %s", pet.Id, res.StatusCode(), res.Body)
	}
	if h := res.Headers304; (deprecation{h.Deprecation, h.Sunset, h.Link}) != want || h.ETag == "" {
		t.Errorf("304 headers %+v; want %+v and the ETag", h, want)
	}
	res, err = p.c.GetPetWithResponse(t.Context(), 1<<62, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != http.StatusNotFound || res.Headers404 == nil || res.JSON404 == nil || res.JSON404.Code != "not_found" {
		t.Fatalf("get a missing pet: %d %s", res.StatusCode(), res.Body)
	}
	if h := res.Headers404; (deprecation{h.Deprecation, h.Sunset, h.Link}) != want || h.XRequestId == "" || h.CacheControl != "no-store" {
		t.Errorf("404 headers %+v; want %+v, a request id and no-store", h, want)
	}
}

// deprecation is what every answer of getPet says of its deprecation.
type deprecation struct{ deprecation, sunset, link string }

// checkErrors reads error answers through the client's Error type: a bad
// create (400 with the bad fields), a list with a parameter it does not
// take (400 naming it) and a wrong key (401 with its challenge).
func (p *partner) checkErrors(t *testing.T) {
	created := p.create(t, client.NewPet{Name: "  ", CategoryId: 0}, "")
	e := created.JSON400
	if created.StatusCode() != http.StatusBadRequest || e == nil {
		t.Fatalf("bad create: %d %s", created.StatusCode(), created.Body)
	}
	if e.Code != "invalid_request" || e.Status != http.StatusBadRequest || e.Message == "" || e.Details == nil {
		t.Fatalf("bad create: error %+v", e)
	}
	fields := map[string]bool{}
	for _, d := range *e.Details {
		fields[d.Field] = d.Message != ""
	}
	if !fields["name"] || !fields["categoryId"] || len(fields) != 2 {
		t.Errorf("bad create: details %+v, want a message for name and for categoryId", *e.Details)
	}

	// The generated client sends only the document's parameters; one
	// added by hand, misspelt, is refused rather than ignored.
	typo := func(_ context.Context, req *http.Request) error {
		q := req.URL.Query()
		q.Set("stauts", "sold")
		req.URL.RawQuery = q.Encode()
		return nil
	}
	listed, err := p.c.ListPetsWithResponse(t.Context(), nil, typo)
	if err != nil {
		t.Fatal(err)
	}
	if e := listed.JSON400; listed.StatusCode() != http.StatusBadRequest || e == nil || e.Code != "invalid_request" ||
		e.Details == nil || len(*e.Details) != 1 || (*e.Details)[0].Field != "stauts" {
		t.Errorf("list with ?stauts=sold: %d %s, want 400 naming stauts", listed.StatusCode(), listed.Body)
	}

	stranger, err := client.NewClientWithResponses(p.base.String()+"/v1", client.WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+p.key+"x")
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	refused, err := stranger.ListPetsWithResponse(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if refused.StatusCode() != http.StatusUnauthorized || refused.JSON401 == nil || refused.JSON401.Code != "unauthorized" ||
		refused.Headers401 == nil || !strings.HasPrefix(refused.Headers401.WWWAuthenticate, "Bearer ") {
		t.Errorf("wrong key: %d %s, headers %+v", refused.StatusCode(), refused.Body, refused.Headers401)
	}
}
