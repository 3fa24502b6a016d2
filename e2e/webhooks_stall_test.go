package e2e

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"petstore/config"
	"petstore/internal/testkit"
	"petstore/models"
	"petstore/models/modelstest"
)

// TestWebhooksStalledInstance: an instance whose write of a delivery's
// outcome stalls past its lease (a row lock the test holds, as a long
// lock wait or a stalled commit would) may see that delivery sent again
// once the lease has run out, but no other: with two instances the other
// takes the endpoint over and the stalled one, once its write is done,
// must see that its lease is gone and stop, not go on with the deliveries
// it had read before the stall; alone, it must not start a second
// delivery to the endpoint beside the stalled one. MariaDB only: SQLite
// has one writer at a time, so a lock that stalls one instance stalls
// every one.
func TestWebhooksStalledInstance(t *testing.T) {
	t.Parallel()
	t.Run("two instances: the other takes over, the stalled one stops", func(t *testing.T) {
		t.Parallel()
		testStalledDelivery(t, 2)
	})
	t.Run("one instance: no second delivery beside the stalled one", func(t *testing.T) {
		t.Parallel()
		// Once the stalled worker's lease has run out, the endpoint is due
		// again and its own instance's claim of it succeeds: the
		// dispatcher must not start a second worker beside the stalled one.
		testStalledDelivery(t, 1)
	})
}

// testStalledDelivery stalls the write of the first delivery's outcome,
// with instances instances running, past the lease (see
// TestWebhooksStalledInstance).
func testStalledDelivery(t *testing.T, instances int) {
	// The Store's 10 s read timeout would end the stall before the lease
	// (11 s) runs out; an operator may set it longer, as here.
	databaseURL := modelstest.URL(t, models.DriverMySQL) + "?readTimeout=60s"
	vars := webhookVars(databaseURL)
	running := []*testkit.Instance{testkit.ServeBinary(t, "instance A", vars)}
	if instances == 2 {
		running = append(running, testkit.ServeBinary(t, "instance B", vars))
	}
	boot := testkit.BootstrapOf(t, running[0].Stdout.String())
	partner := testkit.NewAPIClient(running[0].Base, boot.Key)
	store := testkit.OpenStore(t, databaseURL)
	db := openSQL(t, databaseURL)

	// The first request is held until the test has locked its delivery's
	// row; with two instances the second, the same event sent again by
	// the one that took over, until the test knows which one sent it.
	recv := testkit.NewWebhookReceiver(t, func(n int) bool { return n <= instances })
	target := recv.URL + "/petstore"
	from := feedHead(t, partner)
	secret := createWebhook(t, vars, target)
	endpoint := endpointAt(t, store, target)
	// Created at once, so that the first delivery's instance reads them
	// all in one batch before the stall.
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			name := "stalled " + strconv.Itoa(i)
			if r := partner.CreatePet(name); r.Status != http.StatusCreated {
				t.Errorf("create %q: %s, want 201", name, r)
			}
		})
	}
	wg.Wait()

	var first testkit.WebhookRequest
	select {
	case first = <-recv.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery reached the receiver within 10 s of the creates")
	}
	stalled, err := recv.Sender(first, running...)
	if err != nil {
		t.Fatal(err)
	}
	w, err := store.GetWebhook(context.Background(), endpoint.ID)
	if err != nil || w.LeaseUntil == nil {
		t.Fatalf("the endpoint's lease while %s delivers: %+v, %v", stalled.Name, w.LeaseUntil, err)
	}
	leaseEnd := *w.LeaseUntil
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var row int64
	if err := tx.QueryRow("SELECT id FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ? FOR UPDATE",
		endpoint.ID, first.EventID).Scan(&row); err != nil {
		t.Fatal(err)
	}
	recv.Release() // answered: the instance now stalls writing that down

	if instances == 2 {
		var second testkit.WebhookRequest
		select {
		case second = <-recv.Held():
		case <-time.After(webhookLease + 10*time.Second):
			t.Fatalf("nothing was sent again within %s of the stall (the lease is %s)", webhookLease+10*time.Second, webhookLease)
		}
		taker, err := recv.Sender(second, running...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s stalled recording event %s; %s sent it again %s after the lease ran out", stalled.Name, first.EventID, taker.Name,
			second.At.Sub(leaseEnd).Round(time.Millisecond))
		if second.EventID != first.EventID || second.At.Before(leaseEnd.Add(-5*time.Millisecond)) {
			t.Errorf("request 2 sent event %s at %s, want event %s again once the lease ran out at %s", second.EventID,
				second.At.Format(time.StampMilli), first.EventID, leaseEnd.Format(time.StampMilli))
		}
		if taker == stalled {
			t.Errorf("%s, stalled in a delivery to the endpoint, started another delivery to it when its own lease ran out: two at once", stalled.Name)
		}
		recv.Release()
	} else {
		// Long enough for the instance's ticks to find the lease run out.
		time.Sleep(time.Until(leaseEnd) + 3*webhookPoll)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	events := readFeedFrom(t, partner, from)
	if len(events) != 5 || events[0].ID != first.EventID {
		t.Fatalf("the feed after the endpoint's creation holds %v, want the five creates, first %s", eventIDs(events), first.EventID)
	}
	waitAnswered(t, recv, events, 20*time.Second, "the endpoint after the stall")
	time.Sleep(3 * webhookPoll)
	count := checkDeliveries(t, recv, secret, events)
	dups := wantOnce(t, "after a stall", count, events, first.EventID)
	if instances == 2 && count[first.EventID] != 2 {
		t.Errorf("event %s, whose outcome was stalled past the lease, came %d times, want twice", first.EventID, count[first.EventID])
	}
	testkit.Figure(t, "webhooks_duplicates_after_stall", float64(dups), "deliveries")
	waitRecorded(t, store, endpoint.ID, len(events))
	for _, inst := range running {
		inst.Stop(t)
	}
}

// openSQL opens the MariaDB database of databaseURL for the test's own
// statements.
func openSQL(t *testing.T, databaseURL string) *sql.DB {
	t.Helper()
	cfg, err := config.ParseDatabaseURL(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
