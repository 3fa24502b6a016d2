package e2e

// Clients that hang up with their request in flight, on each engine, over
// real loopback HTTP: the client writes its request on a raw connection
// and closes it while the server is held inside the request (the
// database's connections checked out by the test, or its pets table
// locked). The request must be logged as 499 at INFO, never as an error,
// counted as 499 and never as a 5xx; a create's line says whether its pet
// was written, and the database agrees.

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

func TestClientHangUps(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		s := startSite(t, driver)
		key := s.newKey(t)
		partner := testkit.NewAPIClient(s.base, key)
		// Warm up: the key is verified and the statements prepared, so
		// that the held requests below wait in the query under test.
		if r := partner.Get("/v1/pets?limit=20"); r.Status != http.StatusOK {
			t.Fatalf("GET /v1/pets: %s", r)
		}
		testkit.WantCreated(t, partner.CreatePet("before the hang-ups"), "before the hang-ups")
		staff := testkit.SignedIn(t, s.base, staffUser, staffPassword)
		if r := staff.Get("/admin/pets"); r.Status != http.StatusOK {
			t.Fatalf("GET /admin/pets: %s", r)
		}
		reads := s.store.Pools()["petstore"] // SQLite's readers, MySQL's pool

		t.Run("read", func(t *testing.T) {
			release := holdPool(t, reads)
			waited := reads.Stats().WaitCount
			conn := rawRequest(t, s.addr(), "GET /v1/pets?limit=20 HTTP/1.1\r\nHost: petstore.test\r\nX-Request-Id: hangup-read\r\n"+
				"Authorization: Bearer "+key+"\r\n\r\n")
			testkit.WaitFor(t, "the list to wait for a connection", 10*time.Second, time.Millisecond, func() bool { return reads.Stats().WaitCount > waited })
			conn.Close()
			time.Sleep(200 * time.Millisecond) // the server reads the close
			release()                          // the page is read, and answered to nobody
			if line := requestLine(t, s, "hangup-read"); line["status"] != "499" {
				t.Errorf("request log: %v, want status 499", line)
			}
		})

		t.Run("console page", func(t *testing.T) {
			release := holdPool(t, reads)
			defer release()
			waited := reads.Stats().WaitCount
			conn := rawRequest(t, s.addr(), "GET /admin/pets HTTP/1.1\r\nHost: petstore.test\r\nX-Request-Id: hangup-console\r\n"+
				"Cookie: "+staff.Cookie(t)+"\r\n\r\n")
			testkit.WaitFor(t, "the page to wait for a connection", 10*time.Second, time.Millisecond, func() bool { return reads.Stats().WaitCount > waited })
			conn.Close() // the page's query ends with its context
			if line := requestLine(t, s, "hangup-console"); line["status"] != "499" {
				t.Errorf("request log: %v, want status 499", line)
			}
		})

		t.Run("creates in a group-commit batch", func(t *testing.T) {
			held := holdCreates(t, s.store)
			// first leads a batch that waits for the database; on MySQL,
			// which writes two batches at once, queued leads the second;
			// last waits in the queue on both engines; stays keeps its
			// connection. queued carries an Idempotency-Key.
			first := rawRequest(t, s.addr(), createRequest(key, "hangup-first", ""))
			held.waitBlocked(t, 1)
			queued := rawRequest(t, s.addr(), createRequest(key, "hangup-queued", "hangup-queued-key"))
			if driver == models.DriverMySQL {
				held.waitBlocked(t, 2)
			}
			last := rawRequest(t, s.addr(), createRequest(key, "hangup-last", ""))
			stays := make(chan testkit.Reply, 1)
			go func() { stays <- partner.CreatePet("hangup-stays") }()
			time.Sleep(300 * time.Millisecond) // last and stays are queued
			for _, c := range []net.Conn{first, queued, last} {
				c.Close()
			}
			time.Sleep(200 * time.Millisecond) // the server reads the closes
			held.release()
			testkit.WantCreated(t, <-stays, "hangup-stays")

			stored := petNames(t, s.store)
			want := map[string]string{"hangup-first": "true", "hangup-last": "false"}
			for _, name := range []string{"hangup-first", "hangup-queued", "hangup-last"} {
				line := requestLine(t, s, name)
				if line["status"] != "499" || line["committed"] == "" {
					t.Errorf("%s: request log %v, want status 499 and committed", name, line)
					continue
				}
				if w, ok := want[name]; ok && line["committed"] != w {
					t.Errorf("%s: logged committed=%s, want %s", name, line["committed"], w)
				}
				if got := fmt.Sprint(stored[name] == 1); got != line["committed"] {
					t.Errorf("%s: logged committed=%s, but %d stored", name, line["committed"], stored[name])
				}
			}
			// The retry with the key gets the answer of the create that
			// committed after its client left, or creates it now.
			committed := requestLine(t, s, "hangup-queued")["committed"] == "true"
			r := partner.Do(http.MethodPost, "/v1/pets", http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {"hangup-queued-key"}},
				`{"name": "hangup-queued", "categoryId": 1}`)
			testkit.WantCreated(t, r, "hangup-queued")
			if replayed := r.Header.Get("Idempotent-Replayed") == "true"; replayed != committed {
				t.Errorf("retry with the key: replayed %v, but the hung-up create logged committed=%v", replayed, committed)
			}
			if n := petNames(t, s.store)["hangup-queued"]; n != 1 {
				t.Errorf("hangup-queued stored %d times after its retry, want once", n)
			}
		})

		if strings.Contains(s.logs.String(), "level=ERROR") {
			t.Errorf("a hang-up was logged as an error:\n%s", grepLines(s.logs.String(), "level=ERROR"))
		}
		m := testkit.Exposition(s.metrics)
		if bad := regexp.MustCompile(`(?m)^petstore_http_requests_total\{.*status="5\d\d".*$|^petstore_http_server_errors_total.*$`).FindAllString(m, -1); bad != nil {
			t.Errorf("hang-ups counted as server errors: %q", bad)
		}
		for _, want := range []string{
			`petstore_http_requests_total{method="GET",route="/v1/pets",status="499"} 1`,
			`petstore_http_requests_total{method="GET",route="/admin/pets",status="499"} 1`,
			`petstore_http_requests_total{method="POST",route="/v1/pets",status="499"} 3`,
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "petstore_http_requests_total"))
			}
		}
	})
}

// rawRequest dials addr and writes req on the connection, which it returns
// open; the test closes it to hang up.
func rawRequest(tb testing.TB, addr, req string) net.Conn {
	tb.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte(req)); err != nil {
		tb.Fatal(err)
	}
	return conn
}

// createRequest is the text of a POST /v1/pets of a pet called name, which
// is also its request id, with an Idempotency-Key when key is not "".
func createRequest(apiKey, name, key string) string {
	body := fmt.Sprintf(`{"name": %q, "categoryId": 1}`, name)
	h := "POST /v1/pets HTTP/1.1\r\nHost: petstore.test\r\nX-Request-Id: " + name + "\r\nAuthorization: Bearer " + apiKey +
		"\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n"
	if key != "" {
		h += "Idempotency-Key: " + key + "\r\n"
	}
	return h + "\r\n" + body
}

// holdPool checks out every connection db may open, so that the next query
// on it waits; release gives them back (and runs at the end of the test).
func holdPool(tb testing.TB, db *sql.DB) (release func()) {
	tb.Helper()
	n := db.Stats().MaxOpenConnections
	if n == 0 {
		tb.Fatal("the pool has no limit to exhaust")
	}
	var conns []*sql.Conn
	release = func() {
		for _, c := range conns {
			c.Close()
		}
		conns = nil
	}
	tb.Cleanup(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			tb.Fatalf("hold a connection: %v", err)
		}
		conns = append(conns, c)
	}
	return release
}

// heldCreates keeps the store's creates from being written: SQLite's one
// writer connection checked out, or MySQL's pets table locked.
type heldCreates struct {
	store   *models.Store
	writer  *sql.DB // SQLite's writer pool, held
	waited  int64   // the writer's wait count when held
	release func()
}

func holdCreates(tb testing.TB, store *models.Store) *heldCreates {
	tb.Helper()
	h := &heldCreates{store: store}
	if store.Driver() == models.DriverMySQL {
		h.release = modelstest.LockTable(tb, store, modelstest.Pets)
		return h
	}
	// The writer pool itself is held, and its wait count read: no Store
	// method hands out its connections.
	h.writer = store.SQLDB()
	h.release = holdPool(tb, h.writer)
	h.waited = h.writer.Stats().WaitCount
	return h
}

// waitBlocked waits until n batches wait for the held database.
func (h *heldCreates) waitBlocked(tb testing.TB, n int64) {
	tb.Helper()
	testkit.WaitFor(tb, fmt.Sprintf("%d batches to wait for the database", n), 10*time.Second, time.Millisecond, func() bool {
		if h.writer != nil {
			return h.writer.Stats().WaitCount-h.waited >= n
		}
		return int64(modelstest.LockWaiters(tb, h.store)) >= n
	})
}

// requestLine waits for the request log's line of the request id and
// returns its attributes.
func requestLine(tb testing.TB, s *site, id string) map[string]string {
	tb.Helper()
	var line string
	testkit.WaitFor(tb, "the request log's line of "+id, 15*time.Second, 5*time.Millisecond, func() bool {
		for _, l := range strings.Split(s.logs.String(), "\n") {
			if strings.Contains(l, " msg=request ") && strings.Contains(l, " request_id="+id+" ") {
				line = l
				return true
			}
		}
		return false
	})
	attrs := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			attrs[k] = v
		}
	}
	return attrs
}

// petNames counts the stored pets by name.
func petNames(tb testing.TB, store *models.Store) map[string]int {
	tb.Helper()
	names := map[string]int{}
	for _, p := range testkit.StoredPets(tb, store) {
		names[p.Name]++
	}
	return names
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A deadline of the service's own is told apart from a hang-up and from an
// outage: a batch of creates held past its bound answers 503 unavailable
// (retry), is logged at ERROR with reason=timeout, and is counted as a 5xx
// under that reason.
func TestServerDeadline(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		s := startSite(t, driver)
		key := s.newKey(t)
		partner := testkit.NewAPIClient(s.base, key)
		testkit.WantCreated(t, partner.CreatePet("before the deadline"), "before the deadline")
		s.store.SetCreateTimeout(300 * time.Millisecond)

		held := holdCreates(t, s.store)
		r := partner.Do(http.MethodPost, "/v1/pets", http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"past-deadline"}},
			`{"name": "past the deadline", "categoryId": 1}`)
		held.release()
		if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), `"unavailable"`) {
			t.Errorf("a create past the batch's deadline: %s, want 503 unavailable", r)
		}
		line := requestLine(t, s, "past-deadline")
		if line["status"] != "503" {
			t.Errorf("request log %v, want status 503", line)
		}
		if !regexp.MustCompile(`level=ERROR msg="request failed" method=POST path=/v1/pets status=503 reason=timeout `).MatchString(s.logs.String()) {
			t.Errorf("no ERROR line with reason=timeout:\n%s", grepLines(s.logs.String(), "level=ERROR"))
		}
		m := testkit.Exposition(s.metrics)
		for _, want := range []string{
			`petstore_http_server_errors_total{reason="timeout"} 1`,
			`petstore_http_requests_total{method="POST",route="/v1/pets",status="503"} 1`,
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "petstore_http"))
			}
		}
		if strings.Contains(m, `reason="unavailable"`) || strings.Contains(m, `status="499"`) {
			t.Errorf("a deadline counted as an outage or a hang-up:\n%s", grepLines(m, "petstore_http"))
		}
		// The abandoned batch reaches the database once the lock is gone:
		// give it the time to run whatever the server would run of it.
		time.Sleep(time.Second)
		if n := petNames(t, s.store)["past the deadline"]; n != 0 {
			t.Errorf("the timed-out create stored %d times, want 0", n)
		}
	})
}
