package modelstest

import (
	"fmt"
	"testing"
	"time"
)

// Replication is a private MariaDB primary with one replica, for tests of
// reads sent to replicas.
type Replication struct {
	primary, replica *mariadb
}

// ReplicaPair starts a primary and a replica following it (GTID
// replication), creates one fresh database on the primary, waits until the
// replica has it, and returns both DATABASE_URLs. Both servers stop when
// the test ends. It follows the harness's rule for a missing MariaDB.
func ReplicaPair(tb testing.TB) (primaryURL, replicaURL string, r *Replication) {
	tb.Helper()
	need(tb) // skip or fail like every MariaDB test when there is none
	if server.cmd == nil {
		tb.Skip("replication needs private servers, not PETSTORE_TEST_MYSQL_URL")
	}
	primary, err := startPrivate("--log-bin=mariadb-bin", "--server-id=1", "--binlog-format=ROW")
	if err != nil {
		tb.Fatalf("start the primary: %v", err)
	}
	tb.Cleanup(primary.stop)
	replica, err := startPrivate("--skip-log-bin", "--server-id=2")
	if err != nil {
		tb.Fatalf("start the replica: %v", err)
	}
	tb.Cleanup(replica.stop)
	r = &Replication{primary: primary, replica: replica}
	change := fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s, MASTER_USER='root', MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos",
		primary.base.Port())
	for _, q := range []string{change, "START SLAVE"} {
		if _, err := replica.admin.Exec(q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	name := primary.createDB(tb)
	r.Sync(tb)
	p, q := *primary.base, *replica.base
	p.Path, q.Path = "/"+name, "/"+name
	return p.String(), q.String(), r
}

// Sync waits until the replica has applied everything the primary wrote.
func (r *Replication) Sync(tb testing.TB) {
	tb.Helper()
	var pos string
	if err := r.primary.admin.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		tb.Fatal(err)
	}
	var res int
	if err := r.replica.admin.QueryRow("SELECT MASTER_GTID_WAIT(?, 20)", pos).Scan(&res); err != nil || res != 0 {
		tb.Fatalf("replica did not reach %s within 20 s (result %d): %v", pos, res, err)
	}
}

// Pause stops the replica applying changes (STOP SLAVE), so that what the
// primary writes next is visible only there.
func (r *Replication) Pause(tb testing.TB) {
	tb.Helper()
	if _, err := r.replica.admin.Exec("STOP SLAVE"); err != nil {
		tb.Fatal(err)
	}
}

// Resume starts the replica again and waits until it has caught up.
func (r *Replication) Resume(tb testing.TB) {
	tb.Helper()
	if _, err := r.replica.admin.Exec("START SLAVE"); err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var state string
		r.replica.admin.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'SLAVE_RUNNING'").Scan(&state)
		if state == "ON" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.Sync(tb)
}
