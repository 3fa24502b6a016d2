package api_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"petstore/httpcode"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// A browser's CORS preflight is told the API is for servers, the same way
// under every /v1 path, known or not, with a key or without: not 401,
// which would send the developer after their key. Other OPTIONS requests
// are answered as before: 401 first, then 405.
func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		preflight := map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET",
			"Access-Control-Request-Headers": "authorization"}
		var first []byte
		for _, path := range []string{"/v1/pets", "/v1/pets/1", "/v1/openapi.json", "/v1/events", "/v1/no-such-path", "/v1"} {
			for _, auth := range []bool{false, true} {
				h := map[string]string{}
				for k, v := range preflight {
					h[k] = v
				}
				if auth {
					h["Authorization"] = "Bearer " + e.key
				}
				r := e.do("OPTIONS", path, h, "")
				wantError(t, r, http.StatusForbidden, httpcode.CORSNotSupported)
				for _, name := range []string{"Allow", "Access-Control-Allow-Origin", "WWW-Authenticate"} {
					if v := r.Header.Get(name); v != "" {
						t.Errorf("OPTIONS %s: %s: %q", path, name, v)
					}
				}
				if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("X-Request-Id") == "" {
					t.Errorf("OPTIONS %s: headers %v", path, r.Header)
				}
				if first == nil {
					first = r.Body
				} else if !bytes.Equal(r.Body, first) {
					t.Errorf("OPTIONS %s: %s, unlike %s", path, r.Body, first)
				}
			}
		}
		// Not a preflight: an OPTIONS without Origin, or one without the
		// method a browser asks for.
		wantError(t, e.do("OPTIONS", "/v1/pets", nil, ""), http.StatusUnauthorized, models.CodeUnauthorized)
		wantError(t, e.do("OPTIONS", "/v1/pets", map[string]string{"Origin": "https://app.example"}, ""), http.StatusUnauthorized, models.CodeUnauthorized)
		if r := e.do("OPTIONS", "/v1/pets", e.authHeader(), ""); r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") == "" {
			t.Errorf("OPTIONS with a key: %d, Allow %q; want 405 with Allow", r.Status, r.Header.Get("Allow"))
		}
	})
}

// A browser app sends a preflight before each call: preflights are no
// failed authentications, so they never use up the address's budget of
// them.
func TestCORSPreflightIsNoFailedAuthentication(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newEngine(t, server.Deps{Store: modelstest.Open(t, models.DriverSQLite), AuthFailureLimit: 0.001}))
	t.Cleanup(srv.Close)
	for range 50 {
		req, err := http.NewRequest("OPTIONS", srv.URL+"/v1/pets", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if r := testkit.ReadReply(t, res); r.Status != http.StatusForbidden {
			t.Fatalf("preflight: %d %s", r.Status, r.Body)
		}
	}
	res, err := srv.Client().Get(srv.URL + "/v1/pets")
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, testkit.ReadReply(t, res), http.StatusUnauthorized, models.CodeUnauthorized)
}
