package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"petstore/internal/testkit"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRequestLogs: one JSON line per request with its id, method, route,
// status, duration and caller, and never a key, password or cookie.
func TestRequestLogs(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "petstore.db"), "LISTEN_ADDR": "127.0.0.1:0", "LOG_FORMAT": "json"}
	p := serveInProcess(t, vars)
	b := testkit.BootstrapOf(t, p.Stdout.String())

	// An API call with a chosen request id, and a console sign-in.
	r := testkit.NewAPIClient(p.Base, b.Key).Do(http.MethodGet, "/v1/pets/12345", http.Header{"X-Request-Id": {"trace-abc.123"}}, "")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Header.Get("X-Request-ID") != "trace-abc.123" {
		t.Errorf("request id not echoed: %q", r.Header.Get("X-Request-ID"))
	}
	staff := testkit.NewConsole(p.Base)
	r = staff.SignIn(t, b.Username, b.Password)
	next, err := url.Parse(r.Header.Get("Location"))
	if r.Status != http.StatusSeeOther || err != nil || next.Path != "/admin/pets" {
		t.Fatalf("sign-in: %s, Location %q; want 303 to /admin/pets", r, r.Header.Get("Location"))
	}
	if r := staff.Get(next.RequestURI()); r.Status != http.StatusOK {
		t.Fatalf("GET %s after signing in: %s", next, r)
	}

	// A request's line is written just after its response: wait for both.
	p.WaitLog(t, regexp.MustCompile(`"msg":"request","request_id":"trace-abc\.123"`), 10*time.Second)
	p.WaitLog(t, regexp.MustCompile(`"msg":"request",.*"route":"/admin/pets"`), 10*time.Second)
	logs := p.Stderr.String()
	var apiLine, staffLine map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line is not JSON: %q", line)
			continue
		}
		if rec["msg"] != "request" {
			continue
		}
		for _, f := range []string{"time", "level", "request_id", "method", "route", "status", "duration_ms", "client"} {
			if _, ok := rec[f]; !ok {
				t.Errorf("request line lacks %s: %s", f, line)
			}
		}
		if rec["request_id"] == "trace-abc.123" {
			apiLine = rec
		}
		if rec["route"] == "/admin/pets" {
			staffLine = rec
		}
	}
	if apiLine == nil || apiLine["route"] != "/v1/pets/:petId" || apiLine["status"] != float64(404) || apiLine["key"] != "first key" {
		t.Errorf("API request line = %v", apiLine)
	}
	if staffLine == nil || staffLine["staff"] != "admin" {
		t.Errorf("console request line = %v", staffLine)
	}
	for name, secret := range map[string]string{"API key": b.Key, "key secret": b.Key[13:], "password": b.Password} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain the %s", name)
		}
	}
	cookies := staff.HTTP.Jar.Cookies(&url.URL{Scheme: "http", Host: p.Addr, Path: next.Path})
	if len(cookies) == 0 {
		t.Fatal("no session cookie after signing in")
	}
	for _, c := range cookies {
		if strings.Contains(logs, c.Value) {
			t.Error("the logs contain the session cookie")
		}
	}
}
