// LISTEN/NOTIFY through pgx (see main_test.go): WaitForNotification returns
// the notifications another session commits while the listener waits
// without querying, once per distinct payload of a transaction, with the
// sender's process id.
package drivers

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestListenNotify(t *testing.T) {
	listener := connect(t, pgx.QueryExecModeCacheStatement)
	sender := connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, listener, "LISTEN go_channel")

	tx, err := sender.Begin(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, payload := range []string{"one", "two", "one"} {
		if _, err := tx.Exec(ctx(t), "SELECT pg_notify('go_channel', $1)", payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx(t)); err != nil {
		t.Fatal(err)
	}
	mustExec(t, sender, "BEGIN; NOTIFY go_channel, 'rolled back'; ROLLBACK")
	mustExec(t, sender, "NOTIFY go_channel, 'three'")

	want := []string{"one", "two", "three"}
	for _, payload := range want {
		n, err := listener.WaitForNotification(ctx(t))
		if err != nil {
			t.Fatalf("waiting for %q: %v", payload, err)
		}
		if n.Channel != "go_channel" || n.Payload != payload || n.PID != sender.PgConn().PID() {
			t.Fatalf("got (%q, %q, %d), want (go_channel, %q, %d)", n.Channel, n.Payload, n.PID, payload, sender.PgConn().PID())
		}
	}

	var channels []string
	rows, err := listener.Query(ctx(t), "SELECT pg_listening_channels()")
	if err != nil {
		t.Fatal(err)
	}
	channels, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(channels) != 1 || channels[0] != "go_channel" {
		t.Fatalf("pg_listening_channels() = %v", channels)
	}
	mustExec(t, listener, "UNLISTEN *")
}
