// pgx smoke tests: DDL, parameterized CRUD, transactions, prepared statements,
// batches, NULLs and errors with SQLSTATEs, each query mode where it matters.
// See main_test.go for how the suite connects.
package drivers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

func TestDDL(t *testing.T) {
	conn := connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, conn, "DROP TABLE IF EXISTS go_ddl_child, go_ddl")
	mustExec(t, conn, `CREATE TABLE go_ddl (
		id serial PRIMARY KEY,
		name varchar(40) NOT NULL UNIQUE,
		created date DEFAULT '2024-01-01')`)
	mustExec(t, conn, "CREATE TABLE go_ddl_child (id int PRIMARY KEY, parent int REFERENCES go_ddl (id))")
	mustExec(t, conn, "CREATE INDEX go_ddl_created ON go_ddl (created)")
	mustExec(t, conn, "ALTER TABLE go_ddl ADD COLUMN flag boolean NOT NULL DEFAULT false")
	var id int32
	var created pgtype.Date
	var flag bool
	err := conn.QueryRow(ctx(t), "INSERT INTO go_ddl (name) VALUES ($1) RETURNING id, created, flag", "a").
		Scan(&id, &created, &flag)
	if err != nil {
		t.Fatal(err)
	}
	if id != 1 || created.Time.Format("2006-01-02") != "2024-01-01" || flag {
		t.Errorf("defaults: id=%d created=%v flag=%v", id, created.Time, flag)
	}
	var n int
	if err := conn.QueryRow(ctx(t),
		"SELECT count(*) FROM pg_catalog.pg_attribute WHERE attrelid = 'go_ddl'::regclass AND attnum > 0").
		Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("go_ddl has %d columns in pg_attribute, want 4", n)
	}
	mustExec(t, conn, "DROP TABLE go_ddl_child")
	mustExec(t, conn, "DROP TABLE go_ddl")
	_, err = conn.Exec(ctx(t), "SELECT * FROM go_ddl")
	if e := pgError(t, err); e.Code != "42P01" {
		t.Errorf("after DROP: %s %s", e.Code, e.Message)
	}
}

func TestCRUD(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := connect(t, m.mode)
			table := "go_crud_" + m.name
			mustExec(t, conn, "DROP TABLE IF EXISTS "+table)
			mustExec(t, conn, "CREATE TABLE "+table+" (id int PRIMARY KEY, name text NOT NULL, score numeric(10,2), note text)")
			for i := 1; i <= 5; i++ {
				tag := mustExec(t, conn, "INSERT INTO "+table+" (id, name, score) VALUES ($1, $2, $3)",
					i, fmt.Sprintf("name %d's", i), fmt.Sprintf("%d.25", i*10))
				if tag.String() != "INSERT 0 1" {
					t.Errorf("insert tag = %q", tag.String())
				}
			}
			var name string
			var score pgtype.Numeric
			if err := conn.QueryRow(ctx(t), "SELECT name, score FROM "+table+" WHERE id = $1", 3).
				Scan(&name, &score); err != nil {
				t.Fatal(err)
			}
			if name != "name 3's" || numericText(t, score) != "30.25" {
				t.Errorf("select: %q %s", name, numericText(t, score))
			}
			tag := mustExec(t, conn, "UPDATE "+table+" SET score = score + $1, note = $2 WHERE id >= $3",
				1.5, "bumped", 4)
			if tag.RowsAffected() != 2 || !tag.Update() {
				t.Errorf("update tag = %q", tag.String())
			}
			rows, err := conn.Query(ctx(t), "SELECT id, score, note FROM "+table+" WHERE score > $1 ORDER BY id", 35)
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				ID    int32
				Score pgtype.Numeric
				Note  *string
			}
			got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].ID != 4 || numericText(t, got[0].Score) != "41.75" ||
				got[1].Note == nil || *got[1].Note != "bumped" {
				t.Errorf("after update: %+v", got)
			}
			tag = mustExec(t, conn, "DELETE FROM "+table+" WHERE id = $1 OR name = $2", 1, "name 2's")
			if tag.RowsAffected() != 2 || !tag.Delete() {
				t.Errorf("delete tag = %q", tag.String())
			}
			var ids []int32
			var sum pgtype.Numeric
			if err := conn.QueryRow(ctx(t), "SELECT array_agg(id ORDER BY id), sum(score) FROM "+table).
				Scan(&ids, &sum); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids) != "[3 4 5]" || numericText(t, sum) != "123.75" {
				t.Errorf("remaining: %v sum %s", ids, numericText(t, sum))
			}
			// RETURNING through every mode.
			var returned string
			if err := conn.QueryRow(ctx(t), "UPDATE "+table+" SET name = upper(name) WHERE id = $1 RETURNING name", 5).
				Scan(&returned); err != nil {
				t.Fatal(err)
			}
			if returned != "NAME 5'S" {
				t.Errorf("returning: %q", returned)
			}
			mustExec(t, conn, "DROP TABLE "+table)
		})
	}
}

func numericText(t *testing.T, n pgtype.Numeric) string {
	t.Helper()
	v, err := n.Value()
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return "NULL"
	}
	return v.(string)
}

func TestTransactions(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := connect(t, m.mode)
			table := "go_tx_" + m.name
			mustExec(t, conn, "DROP TABLE IF EXISTS "+table)
			mustExec(t, conn, "CREATE TABLE "+table+" (id int PRIMARY KEY, v text)")
			count := func() int {
				var n int
				if err := conn.QueryRow(ctx(t), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}

			// Rollback leaves nothing behind.
			tx, err := conn.Begin(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx(t), "INSERT INTO "+table+" VALUES ($1, $2)", 1, "rolled back"); err != nil {
				t.Fatal(err)
			}
			if st := conn.PgConn().TxStatus(); st != 'T' {
				t.Errorf("TxStatus in a transaction = %c, want T", st)
			}
			if err := tx.Rollback(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if n := count(); n != 0 {
				t.Errorf("after rollback: %d rows", n)
			}

			// Commit keeps them; a savepoint (pgx's nested transaction) rolls back alone.
			tx, err = conn.Begin(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx(t), "INSERT INTO "+table+" VALUES ($1, $2)", 1, "kept"); err != nil {
				t.Fatal(err)
			}
			sp, err := tx.Begin(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sp.Exec(ctx(t), "INSERT INTO "+table+" VALUES ($1, $2)", 2, "savepoint"); err != nil {
				t.Fatal(err)
			}
			if err := sp.Rollback(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if n := count(); n != 1 {
				t.Errorf("after commit: %d rows, want 1", n)
			}
			if st := conn.PgConn().TxStatus(); st != 'I' {
				t.Errorf("TxStatus after commit = %c, want I", st)
			}

			// An error aborts the transaction: 25P02 until ROLLBACK, and COMMIT rolls back.
			tx, err = conn.Begin(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx(t), "INSERT INTO "+table+" VALUES ($1, $2)", 3, "lost"); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(ctx(t), "INSERT INTO "+table+" VALUES ($1, $2)", 1, "duplicate")
			if e := pgError(t, err); e.Code != "23505" {
				t.Errorf("duplicate: %s %s", e.Code, e.Message)
			}
			if st := conn.PgConn().TxStatus(); st != 'E' {
				t.Errorf("TxStatus after an error = %c, want E", st)
			}
			_, err = tx.Exec(ctx(t), "SELECT 1")
			if e := pgError(t, err); e.Code != "25P02" ||
				e.Message != "current transaction is aborted, commands ignored until end of transaction block" {
				t.Errorf("in failed transaction: %s %s", e.Code, e.Message)
			}
			err = tx.Commit(ctx(t))
			if !errors.Is(err, pgx.ErrTxCommitRollback) {
				t.Errorf("commit of a failed transaction: %v, want ErrTxCommitRollback", err)
			}
			if n := count(); n != 1 {
				t.Errorf("after failed transaction: %d rows, want 1", n)
			}

			// Isolation level and read-only options become BEGIN options.
			tx, err = conn.BeginTx(ctx(t), pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
			if err != nil {
				t.Fatal(err)
			}
			var iso string
			if err := tx.QueryRow(ctx(t), "SHOW transaction_isolation").Scan(&iso); err != nil {
				t.Fatal(err)
			}
			if iso != "repeatable read" {
				t.Errorf("transaction_isolation = %q", iso)
			}
			_, err = tx.Exec(ctx(t), "INSERT INTO "+table+" VALUES ($1, $2)", 9, "read only")
			if e := pgError(t, err); e.Code != "25006" || e.Message != "cannot execute INSERT in a read-only transaction" {
				t.Errorf("read-only insert: %s %s", e.Code, e.Message)
			}
			if err := tx.Rollback(ctx(t)); err != nil {
				t.Fatal(err)
			}
			mustExec(t, conn, "DROP TABLE "+table)
		})
	}
}

// TestPreparedStatements reuses explicitly prepared statements and pgx's
// statement cache many times.
func TestPreparedStatements(t *testing.T) {
	conn := connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, conn, "DROP TABLE IF EXISTS go_prep")
	mustExec(t, conn, "CREATE TABLE go_prep (id bigint PRIMARY KEY, label text, amount double precision)")

	ins, err := conn.Prepare(ctx(t), "go_prep_ins", "INSERT INTO go_prep (id, label, amount) VALUES ($1, $2, $3)")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ins.ParamOIDs) != "[20 25 701]" || len(ins.Fields) != 0 {
		t.Errorf("insert statement: params %v fields %d", ins.ParamOIDs, len(ins.Fields))
	}
	sel, err := conn.Prepare(ctx(t), "go_prep_sel", "SELECT label, amount FROM go_prep WHERE id = $1")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sel.ParamOIDs) != "[20]" || len(sel.Fields) != 2 ||
		sel.Fields[0].Name != "label" || sel.Fields[0].DataTypeOID != 25 ||
		sel.Fields[1].Name != "amount" || sel.Fields[1].DataTypeOID != 701 {
		t.Errorf("select statement: params %v fields %+v", sel.ParamOIDs, sel.Fields)
	}
	for i := int64(1); i <= 20; i++ {
		if _, err := conn.Exec(ctx(t), "go_prep_ins", i, fmt.Sprintf("row %d", i), float64(i)/4); err != nil {
			t.Fatalf("execution %d of the prepared insert: %v", i, err)
		}
	}
	for i := int64(1); i <= 20; i++ {
		var label string
		var amount float64
		if err := conn.QueryRow(ctx(t), "go_prep_sel", i).Scan(&label, &amount); err != nil {
			t.Fatalf("execution %d of the prepared select: %v", i, err)
		}
		if label != fmt.Sprintf("row %d", i) || amount != float64(i)/4 {
			t.Errorf("row %d: %q %v", i, label, amount)
		}
	}
	// The server lists the named statements.
	t.Run("pg_prepared_statements", func(t *testing.T) {
		var names []string
		if err := conn.QueryRow(ctx(t),
			"SELECT array_agg(name ORDER BY name) FROM pg_prepared_statements WHERE name LIKE 'go_prep_%'").
			Scan(&names); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(names) != "[go_prep_ins go_prep_sel]" {
			t.Errorf("pg_prepared_statements: %v", names)
		}
	})
	if err := conn.Deallocate(ctx(t), "go_prep_ins"); err != nil {
		t.Fatal(err)
	}

	// The default statement cache prepares a query once (as stmtcache_<hash>)
	// and reuses it.
	const cached = "SELECT sum(amount) FROM go_prep WHERE id <= $1"
	for i := int64(1); i <= 10; i++ {
		var sum float64
		if err := conn.QueryRow(ctx(t), cached, i).Scan(&sum); err != nil {
			t.Fatal(err)
		}
		if want := float64(i*(i+1)) / 8; sum != want {
			t.Errorf("sum up to %d = %v, want %v", i, sum, want)
		}
	}
	t.Run("statement_cache_on_server", func(t *testing.T) {
		var n int
		if err := conn.QueryRow(ctx(t),
			"SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'stmtcache_%' AND statement = $1", cached).
			Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("statement cache: %d server-side statements for the query, want 1", n)
		}
	})
	mustExec(t, conn, "DROP TABLE go_prep")
}

// TestBatch sends several queries in one round trip (a pipeline of
// Parse/Bind/Execute with a single Sync).
func TestBatch(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := connect(t, m.mode)
			table := "go_batch_" + m.name
			mustExec(t, conn, "DROP TABLE IF EXISTS "+table)
			mustExec(t, conn, "CREATE TABLE "+table+" (id int PRIMARY KEY, v text)")
			batch := &pgx.Batch{}
			for i := 1; i <= 3; i++ {
				batch.Queue("INSERT INTO "+table+" VALUES ($1, $2)", i, strings.Repeat("x", i))
			}
			batch.Queue("SELECT string_agg(v, ',' ORDER BY id) FROM " + table)
			results := conn.SendBatch(ctx(t), batch)
			for i := 1; i <= 3; i++ {
				if _, err := results.Exec(); err != nil {
					t.Fatalf("batched insert %d: %v", i, err)
				}
			}
			var agg string
			if err := results.QueryRow().Scan(&agg); err != nil {
				t.Fatal(err)
			}
			if agg != "x,xx,xxx" {
				t.Errorf("batched select: %q", agg)
			}
			if err := results.Close(); err != nil {
				t.Fatal(err)
			}
			mustExec(t, conn, "DROP TABLE "+table)
		})
	}
}

func TestNulls(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := connect(t, m.mode)
			table := "go_nulls_" + m.name
			mustExec(t, conn, "DROP TABLE IF EXISTS "+table)
			mustExec(t, conn, "CREATE TABLE "+table+" (id int PRIMARY KEY, i int, t text, ts timestamptz, b bytea, a int[])")
			mustExec(t, conn, "INSERT INTO "+table+" VALUES ($1, $2, $3, $4, $5, $6)", 1, nil, nil, nil, nil, nil)
			var i *int32
			var s pgtype.Text
			var ts pgtype.Timestamptz
			var b []byte
			var a []int32
			var isNull bool
			err := conn.QueryRow(ctx(t), "SELECT i, t, ts, b, a, i IS NULL AND t IS NULL FROM "+table+" WHERE id = $1", 1).
				Scan(&i, &s, &ts, &b, &a, &isNull)
			if err != nil {
				t.Fatal(err)
			}
			if i != nil || s.Valid || ts.Valid || b != nil || a != nil || !isNull {
				t.Errorf("NULLs came back as %v %v %v %v %v %v", i, s, ts, b, a, isNull)
			}
			// A typed NULL parameter, and NULL in expressions.
			var n *int64
			var coalesced string
			if err := conn.QueryRow(ctx(t), "SELECT $1::bigint + 1, coalesce($2::text, 'dflt')", nil, nil).
				Scan(&n, &coalesced); err != nil {
				t.Fatal(err)
			}
			if n != nil || coalesced != "dflt" {
				t.Errorf("NULL parameters: %v %q", n, coalesced)
			}
			// Scanning NULL into a non-nullable Go type is the driver's error.
			var plain int32
			err = conn.QueryRow(ctx(t), "SELECT i FROM "+table).Scan(&plain)
			if err == nil || !strings.Contains(err.Error(), "NULL") {
				t.Errorf("scanning NULL into int32: %v", err)
			}
			mustExec(t, conn, "DROP TABLE "+table)
		})
	}
}

func TestErrors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := connect(t, m.mode)
			table := "go_err_" + m.name
			mustExec(t, conn, "DROP TABLE IF EXISTS "+table)
			mustExec(t, conn, "CREATE TABLE "+table+" (id int PRIMARY KEY, name text NOT NULL)")
			mustExec(t, conn, "INSERT INTO "+table+" VALUES ($1, $2)", 1, "one")

			_, err := conn.Exec(ctx(t), "INSERT INTO "+table+" VALUES ($1, $2)", 1, "again")
			e := pgError(t, err)
			if e.Code != "23505" || e.Severity != "ERROR" ||
				e.Message != `duplicate key value violates unique constraint "`+table+`_pkey"` ||
				e.Detail != "Key (id)=(1) already exists." ||
				e.SchemaName != "public" || e.TableName != table || e.ConstraintName != table+"_pkey" {
				t.Errorf("unique violation: %#v", e)
			}

			_, err = conn.Exec(ctx(t), "INSERT INTO "+table+" VALUES ($1, $2)", 2, nil)
			e = pgError(t, err)
			if e.Code != "23502" ||
				e.Message != `null value in column "name" of relation "`+table+`" violates not-null constraint` ||
				e.ColumnName != "name" || e.TableName != table {
				t.Errorf("not-null violation: %#v", e)
			}

			var q int
			err = conn.QueryRow(ctx(t), "SELECT 1 / $1::int", 0).Scan(&q)
			e = pgError(t, err)
			if e.Code != "22012" || e.Message != "division by zero" {
				t.Errorf("division by zero: %s %s", e.Code, e.Message)
			}

			_, err = conn.Exec(ctx(t), "SELECT * FROM go_no_such_table WHERE 1 = $1", 1)
			e = pgError(t, err)
			if e.Code != "42P01" || e.Message != `relation "go_no_such_table" does not exist` || e.Position != 15 {
				t.Errorf("undefined table: %s %s at %d", e.Code, e.Message, e.Position)
			}

			_, err = conn.Exec(ctx(t), "SELECT nope FROM "+table)
			e = pgError(t, err)
			if e.Code != "42703" || e.Message != `column "nope" does not exist` || e.Position != 8 {
				t.Errorf("undefined column: %s %s at %d", e.Code, e.Message, e.Position)
			}

			_, err = conn.Exec(ctx(t), "SELEC 1")
			e = pgError(t, err)
			if e.Code != "42601" || e.Message != `syntax error at or near "SELEC"` || e.Position != 1 {
				t.Errorf("syntax error: %s %s at %d", e.Code, e.Message, e.Position)
			}

			err = conn.QueryRow(ctx(t), "SELECT $1::int", "12x").Scan(&q)
			e = pgError(t, err)
			if e.Code != "22P02" || e.Message != `invalid input syntax for type integer: "12x"` {
				t.Errorf("invalid input: %s %s", e.Code, e.Message)
			}

			// The connection is still usable after all of that.
			var name string
			if err := conn.QueryRow(ctx(t), "SELECT name FROM "+table+" WHERE id = $1", 1).Scan(&name); err != nil || name != "one" {
				t.Errorf("after errors: %q %v", name, err)
			}
			mustExec(t, conn, "DROP TABLE "+table)
		})
	}
}

// TestCopyFrom bulk-loads rows with pgx's CopyFrom, which speaks COPY ...
// FROM STDIN in PostgreSQL's binary COPY format.
func TestCopyFrom(t *testing.T) {
	conn := connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, conn, "DROP TABLE IF EXISTS go_copy")
	mustExec(t, conn, "CREATE TABLE go_copy (id int PRIMARY KEY, name text, amount numeric, at date)")
	rows := [][]any{}
	for i := 1; i <= 100; i++ {
		var name any = fmt.Sprintf("n%d", i)
		if i%10 == 0 {
			name = nil
		}
		rows = append(rows, []any{int32(i), name, fmt.Sprintf("%d.5", i), "2024-03-01"})
	}
	n, err := conn.CopyFrom(ctx(t), pgx.Identifier{"go_copy"}, []string{"id", "name", "amount", "at"}, pgx.CopyFromRows(rows))
	if err != nil {
		t.Fatal(err)
	}
	if n != 100 {
		t.Errorf("CopyFrom copied %d rows", n)
	}
	var count, nulls int
	var sum pgtype.Numeric
	if err := conn.QueryRow(ctx(t), "SELECT count(*), count(*) - count(name), sum(amount) FROM go_copy").
		Scan(&count, &nulls, &sum); err != nil {
		t.Fatal(err)
	}
	if count != 100 || nulls != 10 || numericText(t, sum) != "5100.0" {
		t.Errorf("after copy: %d rows, %d NULL names, sum %s", count, nulls, numericText(t, sum))
	}
	mustExec(t, conn, "DROP TABLE go_copy")
}

// TestCachedPlanAfterAlter changes a table under a cached `SELECT *`: PostgreSQL
// fails the next execution with 0A000 "cached plan must not change result
// type", pgx drops the statement from its cache, and the retry sees the new
// column.
func TestCachedPlanAfterAlter(t *testing.T) {
	conn := connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, conn, "DROP TABLE IF EXISTS go_alter")
	mustExec(t, conn, "CREATE TABLE go_alter (id int PRIMARY KEY, a text)")
	mustExec(t, conn, "INSERT INTO go_alter VALUES (1, 'x')")
	values := func() ([]any, error) {
		rows, _ := conn.Query(ctx(t), "SELECT * FROM go_alter WHERE id = $1", 1)
		all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
		if err != nil {
			return nil, err
		}
		return all[0], nil
	}
	if v, err := values(); err != nil || fmt.Sprint(v) != "[1 x]" {
		t.Fatalf("before ALTER: %v %v", v, err)
	}
	mustExec(t, conn, "ALTER TABLE go_alter ADD COLUMN b int DEFAULT 7")
	_, err := values()
	if e := pgError(t, err); e.Code != "0A000" || e.Message != "cached plan must not change result type" {
		t.Errorf("first query after ALTER: %s %s", e.Code, e.Message)
	}
	if v, err := values(); err != nil || fmt.Sprint(v) != "[1 x 7]" {
		t.Errorf("retry after ALTER: %v %v", v, err)
	}
	mustExec(t, conn, "DROP TABLE go_alter")
}

// TestCancel cancels a running query with a CancelRequest on a second
// connection (pgconn's CancelRequest, what pgx's CancelRequestContextWatcherHandler
// sends when a context ends): the server stops the query with 57014 and the
// connection stays usable.
func TestCancel(t *testing.T) {
	conn := connect(t, pgx.QueryExecModeCacheStatement)
	go func() {
		time.Sleep(300 * time.Millisecond)
		if err := conn.PgConn().CancelRequest(context.Background()); err != nil {
			t.Errorf("CancelRequest: %v", err)
		}
	}()
	start := time.Now()
	_, err := conn.Exec(ctx(t), "SELECT pg_sleep(20)")
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("cancel took %v", elapsed)
	}
	if e := pgError(t, err); e.Code != "57014" || e.Message != "canceling statement due to user request" {
		t.Errorf("cancelled query: %s %s", e.Code, e.Message)
	}
	var one int
	if err := conn.QueryRow(ctx(t), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("after cancel: %v %v", one, err)
	}
}
