package api_test

import (
	"context"
	"net/http"
	"testing"

	"petstore/internal/testkit"
	"petstore/models"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		revoked, revokedKey, err := e.store.CreateAPIKey(ctx, "revoked partner", "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.RevokeAPIKey(ctx, revoked.ID, "test"); err != nil {
			t.Fatal(err)
		}
		// A key of the right shape whose secret is wrong.
		forged := e.key[:models.KeyPrefixLen+1] + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

		refused := []struct {
			name   string
			header []string
		}{
			{"no header", nil},
			{"empty", []string{""}},
			{"scheme only", []string{"Bearer"}},
			{"scheme and space", []string{"Bearer "}},
			{"basic scheme", []string{"Basic " + e.key}},
			{"key without scheme", []string{e.key}},
			{"unknown key", []string{"Bearer pst_aaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
			{"malformed key", []string{"Bearer not-a-key"}},
			{"forged secret", []string{"Bearer " + forged}},
			{"revoked key", []string{"Bearer " + revokedKey}},
			{"two tokens", []string{"Bearer " + e.key + " " + e.key}},
			{"two headers", []string{"Bearer " + e.key, "Bearer " + e.key}},
		}
		for _, tt := range refused {
			t.Run(tt.name, func(t *testing.T) {
				for _, path := range []string{"/v1/pets", "/v1/pets/1"} {
					req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
					for _, h := range tt.header {
						req.Header.Add("Authorization", h)
					}
					res, err := e.srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					r := testkit.ReadReply(t, res)
					checkAgainstOpenAPI(t, req, r)
					wantError(t, r, http.StatusUnauthorized, models.CodeUnauthorized)
				}
			})
		}

		accepted := []string{"Bearer " + e.key, "bearer " + e.key, "BEARER " + e.key, "Bearer   " + e.key}
		for _, h := range accepted {
			if r := e.do("GET", "/v1/pets", map[string]string{"Authorization": h}, ""); r.Status != http.StatusOK {
				t.Errorf("Authorization %q: status %d, want 200", h[:9], r.Status)
			}
		}
	})
}

// Authentication runs first: a request without a credential gets 401,
// whatever else is wrong with it, and changes nothing.
func TestUnauthenticatedComesFirst(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		tests := []struct {
			name, method, path, contentType, body string
		}{
			{"bad limit", "GET", "/v1/pets?limit=abc", "", ""},
			{"bad status", "GET", "/v1/pets?status=lost", "", ""},
			{"bad body", "POST", "/v1/pets", "application/json", "{nope"},
			{"valid body", "POST", "/v1/pets", "application/json", `{"name":"Rex","categoryId":1}`},
			{"wrong media type", "POST", "/v1/pets", "text/plain", "hello"},
			{"bad pet id", "GET", "/v1/pets/abc", "", ""},
			{"unknown pet", "GET", "/v1/pets/424242", "", ""},
			{"unknown route", "GET", "/v1/store/orders", "", ""},
			{"method not allowed", "DELETE", "/v1/pets", "", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := map[string]string{}
				if tt.contentType != "" {
					h["Content-Type"] = tt.contentType
				}
				wantError(t, e.do(tt.method, tt.path, h, tt.body), http.StatusUnauthorized, models.CodeUnauthorized)
			})
		}
		if n := e.countPets(); n != 0 {
			t.Fatalf("%d pets stored by unauthenticated requests", n)
		}
	})
}

func TestRevokedKeyRefusedAtOnce(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		k, key, err := e.store.CreateAPIKey(ctx, "soon revoked", "test")
		if err != nil {
			t.Fatal(err)
		}
		h := map[string]string{"Authorization": "Bearer " + key}
		if r := e.do("GET", "/v1/pets", h, ""); r.Status != http.StatusOK {
			t.Fatalf("before revocation: %d", r.Status)
		}
		if _, err := e.store.RevokeAPIKey(ctx, k.ID, "test"); err != nil {
			t.Fatal(err)
		}
		wantError(t, e.do("GET", "/v1/pets", h, ""), http.StatusUnauthorized, models.CodeUnauthorized)
		// Other keys keep working.
		if r := e.get("/v1/pets"); r.Status != http.StatusOK {
			t.Fatalf("other key after revocation: %d", r.Status)
		}
		keys, err := e.store.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.Name == "soon revoked" && k.LastUsedAt == nil {
				t.Error("last-used time not recorded for a used key")
			}
		}
	})
}
