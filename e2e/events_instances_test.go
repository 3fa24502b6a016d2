package e2e

import (
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"petstore/internal/testkit"
)

// TestEventsAcrossInstances runs two `petstore serve` processes on one
// database, on each engine: a reader waiting on B hears of a create made
// through A well before its wait ends (an instance hears of other
// instances' events by reading the feed's clock while readers wait), and
// SIGTERM to B while readers wait there answers them at once, so that the
// shutdown is not held up by them.
func TestEventsAcrossInstances(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabase(t, func(t *testing.T, databaseURL string) {
		vars := testkit.ServeVars(databaseURL)
		// One after the other: the second finds the schema migrated and the
		// first start done.
		a := testkit.ServeBinary(t, "instance A", vars)
		b := testkit.ServeBinary(t, "instance B", vars)
		boot := testkit.BootstrapOf(t, a.Stdout.String())
		onA, onB := testkit.NewAPIClient(a.Base, boot.Key), testkit.NewAPIClient(b.Base, boot.Key)
		onB.HTTP.Timeout = time.Minute
		cursor := feedHead(t, onB)

		t.Run("a reader on B wakes within 1 s of a create through A", func(t *testing.T) {
			const rounds = 5
			var took []time.Duration
			for i := range rounds {
				target := "/v1/events?after=" + cursor + "&wait=30"
				type answer struct {
					r  testkit.Reply
					at time.Time
				}
				got := make(chan answer, 1)
				go func() {
					r := onB.Get(target)
					got <- answer{r, time.Now()}
				}()
				// Long enough for the reader to be waiting on B, at a
				// different point of B's reading of the clock each round.
				time.Sleep(300*time.Millisecond + time.Duration(i)*47*time.Millisecond)
				select {
				case ans := <-got:
					t.Fatalf("GET %s answered before any create: %s", target, ans.r)
				default:
				}
				name := "across instances " + strconv.Itoa(i)
				sent := time.Now()
				p := testkit.WantCreated(t, onA.CreatePet(name), name)
				var ans answer
				select {
				case ans = <-got:
				case <-time.After(40 * time.Second):
					t.Fatalf("GET %s: no answer 40 s after the create", target)
				}
				events, next, err := testkit.EventsPage(target, ans.r)
				if err != nil {
					t.Fatal(err)
				}
				if len(events) != 1 || events[0].Type != "pet.created" || events[0].Pet.ID != p.ID || events[0].Pet.Name != name {
					t.Fatalf("GET %s: %s, want the creation of pet %d alone", target, ans.r.Body, p.ID)
				}
				wake := ans.at.Sub(sent)
				took = append(took, wake)
				if wake > time.Second {
					t.Errorf("round %d: the reader on B was answered %s after the create through A began, want within 1 s (its wait was 30 s)", i, wake)
				}
				u, _ := url.Parse(next)
				cursor = u.Query().Get("after")
			}
			slices.Sort(took)
			t.Logf("wake-ups of a reader on B after a create through A: %v", took)
			testkit.FigureDuration(t, "events_wake_across_instances_median", took[len(took)/2])
			testkit.FigureDuration(t, "events_wake_across_instances_max", took[len(took)-1])
		})

		t.Run("SIGTERM with 20 readers waiting 30 s answers them and exits", func(t *testing.T) {
			const readers = 20
			target := "/v1/events?after=" + cursor + "&wait=30"
			// A connection each, as 20 partners have.
			c := testkit.NewHTTPClient(time.Minute)
			c.Transport = &http.Transport{MaxIdleConnsPerHost: readers}
			type answer struct {
				r  testkit.Reply
				at time.Time
			}
			answers := make([]answer, readers)
			var sent, done sync.WaitGroup
			for i := range readers {
				sent.Add(1)
				done.Go(func() {
					var once sync.Once
					trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(sent.Done) }}
					req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, b.Base+target, nil)
					if err != nil {
						once.Do(sent.Done)
						answers[i] = answer{testkit.Reply{Err: err}, time.Now()}
						return
					}
					req.Header.Set("Authorization", "Bearer "+boot.Key)
					r := testkit.Do(c, req)
					once.Do(sent.Done)
					answers[i] = answer{r, time.Now()}
				})
			}
			sent.Wait()
			// The requests are sent; give B the moment to reach their waits.
			time.Sleep(500 * time.Millisecond)
			signalled := b.Signal(t, syscall.SIGTERM)
			code := b.Wait(t, 20*time.Second)
			exit := b.ExitedAt.Sub(signalled)
			done.Wait()
			testkit.FigureDuration(t, "events_sigterm_exit_with_20_waiting_readers", exit)
			if code != 0 || exit > 5*time.Second {
				t.Errorf("B exited with %d %s after SIGTERM with %d readers waiting, want 0 within 5 s (their waits end 30 s after they began)", code, exit, readers)
			}
			for i, ans := range answers {
				events, _, err := testkit.EventsPage(target, ans.r)
				switch {
				case err != nil:
					t.Errorf("reader %d: %v", i, err)
				case len(events) != 0:
					t.Errorf("reader %d: %s, want an empty page", i, ans.r.Body)
				case ans.at.Sub(signalled) > 5*time.Second:
					t.Errorf("reader %d was answered %s after SIGTERM, want within 5 s", i, ans.at.Sub(signalled))
				}
			}
		})
		a.Stop(t)
	})
}

// feedHead reads the feed to its end without waiting and returns the
// cursor there.
func feedHead(t *testing.T, c *testkit.APIClient) string {
	t.Helper()
	f := testkit.NewFollower(c, "/v1/events?limit=1000")
	if err := f.CatchUp(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(f.Next())
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("after")
}
