package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRequestLogs: one JSON line per request with its id, method, route,
// status, duration and caller, and never a key, password or cookie.
func TestRequestLogs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "petstore.db"), "LISTEN_ADDR": "127.0.0.1:0", "LOG_FORMAT": "json"}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve"}, strings.NewReader(""), stdout, stderr, env(vars)) }()
	t.Cleanup(func() { cancel(); <-done })

	var addr string
	for deadline := time.Now().Add(time.Minute); addr == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("no listening line:\n%s", stderr)
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "petstore listening" {
				addr, _ = rec["addr"].(string)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := stdout.String()
	key := bootstrapKey.FindStringSubmatch(out)
	acct := bootstrapAccount.FindStringSubmatch(out)
	if key == nil || acct == nil {
		t.Fatalf("no bootstrap block:\n%s", out)
	}
	base := "http://" + addr

	// An API call with a chosen request id, and a console sign-in.
	req, _ := http.NewRequest("GET", base+"/v1/pets/12345", nil)
	req.Header.Set("Authorization", "Bearer "+key[1])
	req.Header.Set("X-Request-ID", "trace-abc.123")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("X-Request-ID") != "trace-abc.123" {
		t.Errorf("request id not echoed: %q", res.Header.Get("X-Request-ID"))
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	res, err = browser.Get(base + "/admin/login")
	if err != nil {
		t.Fatal(err)
	}
	page := new(strings.Builder)
	bufio.NewReader(res.Body).WriteTo(page)
	res.Body.Close()
	tok := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(page.String())
	if tok == nil {
		t.Fatal("no csrf token")
	}
	form := url.Values{"csrf_token": {tok[1]}, "username": {acct[1]}, "password": {acct[2]}}
	req, _ = http.NewRequest("POST", base+"/admin/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path != "/admin/pets" {
		t.Fatalf("sign-in ended at %s", res.Request.URL)
	}

	// A request's line is written just after its response: wait for both.
	var logs string
	var apiLine, staffLine map[string]any
	for deadline := time.Now().Add(10 * time.Second); (apiLine == nil || staffLine == nil) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		logs = stderr.String()
		apiLine, staffLine = nil, nil
		for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "request" {
				continue
			}
			if rec["request_id"] == "trace-abc.123" {
				apiLine = rec
			}
			if rec["route"] == "/admin/pets" {
				staffLine = rec
			}
		}
	}
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
	}
	if apiLine == nil || apiLine["route"] != "/v1/pets/:petId" || apiLine["status"] != float64(404) || apiLine["key"] != "first key" {
		t.Errorf("API request line = %v", apiLine)
	}
	if staffLine == nil || staffLine["staff"] != "admin" {
		t.Errorf("console request line = %v", staffLine)
	}
	for name, secret := range map[string]string{"API key": key[1], "key secret": key[1][13:], "password": acct[2]} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain the %s", name)
		}
	}
	for _, c := range jar.Cookies(res.Request.URL) {
		if strings.Contains(logs, c.Value) {
			t.Error("the logs contain the session cookie")
		}
	}
}
