package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// sessionRows counts the rows of the sessions table.
func (e *env) sessionRows() int {
	e.t.Helper()
	var n int
	if err := e.store.SQLDB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM sessions").Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// A flood of cookie-less visits to the sign-in page (and to pages that
// send there) stores nothing on the server: before sign-in the session
// lives in a signed cookie only.
func TestCookielessVisitsStoreNothing(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, e *env) {
		before := e.sessionRows()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(path string, want int) {
			t.Helper()
			res, err := client.Get(e.srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != want {
				t.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
			}
		}
		for range 1000 {
			get("/admin/login", http.StatusOK)
		}
		if after := e.sessionRows(); after != before {
			t.Errorf("sessions rows: %d before 1,000 cookie-less GETs of /admin/login, %d after; want no change", before, after)
		}
		for _, path := range []string{"/admin/login?next=%2Fadmin%2Fpets", "/admin/login?signed_out=1", "/admin/pets", "/admin"} {
			for range 50 {
				want := http.StatusSeeOther // to the sign-in page
				if strings.HasPrefix(path, "/admin/login") {
					want = http.StatusOK
				}
				get(path, want)
			}
		}
		if after := e.sessionRows(); after != before {
			t.Errorf("sessions rows: %d before, %d after cookie-less visits of other console pages; want no change", before, after)
		}
	})
}
