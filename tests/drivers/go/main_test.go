// Driver smoke suite for Go's pgx (github.com/jackc/pgx/v5), run with `go test`.
//
// It checks that Tusk answers what PostgreSQL 15 answers to a real Go driver:
// connecting, DDL, parameterized CRUD, transactions, prepared statements (pgx's
// statement cache, explicit Prepare, and the Exec and simple-protocol query
// modes), NULLs, errors with SQLSTATEs and a round trip of the built-in types
// in text and binary formats. The expected values are PostgreSQL 15's: the suite
// passes against a real PostgreSQL 15 too.
//
// The server comes from the usual libpq variables, with these defaults:
// PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
// PGSSLMODE=disable. crates/tusk/tests/drivers_java_go.rs runs it against a
// freshly spawned Tusk:
//
//	PGPORT=54342 go test ./...
//
// This file holds the connection helpers; the tests are in the other files.
package drivers

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// modes are the query execution modes every mode-sensitive test runs under:
// the default (named prepared statements cached per connection, binary
// formats), QueryExecModeDescribeExec (the unnamed statement, described then
// executed on every query: binary formats), QueryExecModeExec (the unnamed
// statement with parameter types guessed from the Go values: text formats) and
// QueryExecModeSimpleProtocol (pgx interpolates the parameters client-side and
// sends text-only simple queries).
var modes = []struct {
	name string
	mode pgx.QueryExecMode
}{
	{"cache_statement", pgx.QueryExecModeCacheStatement},
	{"describe_exec", pgx.QueryExecModeDescribeExec},
	{"exec", pgx.QueryExecModeExec},
	{"simple_protocol", pgx.QueryExecModeSimpleProtocol},
}

// envOr returns the environment variable key, or def when it is unset.
func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// connConfig builds a pgx configuration from the PG* environment variables.
func connConfig(t *testing.T, mode pgx.QueryExecMode) *pgx.ConnConfig {
	t.Helper()
	for key, def := range map[string]string{
		"PGHOST":     "127.0.0.1",
		"PGPORT":     "5432",
		"PGUSER":     "postgres",
		"PGDATABASE": "postgres",
		"PGSSLMODE":  "disable",
	} {
		if _, ok := os.LookupEnv(key); !ok {
			os.Setenv(key, def)
		}
	}
	config, err := pgx.ParseConfig("")
	if err != nil {
		t.Fatalf("parse connection config: %v", err)
	}
	config.ConnectTimeout = 10 * time.Second
	config.DefaultQueryExecMode = mode
	// Text output of timestamptz depends on the session's time zone.
	config.RuntimeParams["timezone"] = "UTC"
	return config
}

// connect opens a connection in the given mode; it is closed when t ends.
func connect(t *testing.T, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, connConfig(t, mode))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// ctx is a per-test deadline, so that a hung server fails the test instead
// of hanging the whole run.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// mustExec runs statements that must succeed.
func mustExec(t *testing.T, conn *pgx.Conn, sql string, args ...any) pgconn.CommandTag {
	t.Helper()
	tag, err := conn.Exec(ctx(t), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag
}

// pgError asserts that err is a server error and returns it.
func pgError(t *testing.T, err error) *pgconn.PgError {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		t.Fatalf("expected a server error, got %v", err)
	}
	return pgErr
}

// tuskGap skips the rest of a test when the server is Tusk, for a known
// incompatibility (named in reason and in the report of the issue that found
// it); against PostgreSQL the test runs, which keeps its expectations honest.
func tuskGap(t *testing.T, conn *pgx.Conn, reason string) {
	t.Helper()
	if strings.Contains(conn.PgConn().ParameterStatus("server_version"), "Tusk") {
		t.Skip("Tusk gap: " + reason)
	}
}

func TestConnect(t *testing.T) {
	conn := connect(t, pgx.QueryExecModeCacheStatement)
	if err := conn.Ping(ctx(t)); err != nil {
		t.Fatalf("ping: %v", err)
	}
	pg := conn.PgConn()
	if got := pg.ParameterStatus("server_encoding"); got != "UTF8" {
		t.Errorf("server_encoding = %q, want UTF8", got)
	}
	if got := pg.ParameterStatus("client_encoding"); got != "UTF8" {
		t.Errorf("client_encoding = %q, want UTF8", got)
	}
	if got := pg.ParameterStatus("standard_conforming_strings"); got != "on" {
		t.Errorf("standard_conforming_strings = %q, want on", got)
	}
	if got := pg.ParameterStatus("TimeZone"); got != "UTC" {
		t.Errorf("TimeZone = %q, want UTC (sent as a startup parameter)", got)
	}
	if got := pg.ParameterStatus("server_version"); len(got) < 2 || got[:2] != "15" {
		t.Errorf("server_version = %q, want 15.x", got)
	}
	if pg.PID() == 0 {
		t.Errorf("BackendKeyData: process id is 0")
	}
	var user, db string
	if err := conn.QueryRow(ctx(t), "SELECT current_user, current_database()").Scan(&user, &db); err != nil {
		t.Fatal(err)
	}
	if user != os.Getenv("PGUSER") || db != os.Getenv("PGDATABASE") {
		t.Errorf("current_user, current_database() = %q, %q", user, db)
	}
}
