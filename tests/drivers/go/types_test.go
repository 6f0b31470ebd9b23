// pgx type round trips: every built-in type the suite covers is sent as a
// parameter and read back, both straight from an expression and from a table
// column, in each query mode. In the modes that describe the statement first
// (cache_statement, describe_exec) pgx sends and requests binary format for
// every type it has a binary codec for (all of these), so a wrong binary
// encoding on either side fails here; the exec and simple_protocol modes are
// all text. The `text` of each case is PostgreSQL 15's output
// for the value cast to text.
package drivers

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

type typeCase struct {
	sqlType string
	in      any    // the parameter
	scan    any    // a pointer of the type to scan into (a fresh one is made per scan)
	want    any    // the expected value, compared with canon()
	text    string // PostgreSQL 15's text output
}

func numeric(s string) pgtype.Numeric {
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		panic(err)
	}
	return n
}

func int4(v int32) pgtype.Int4 { return pgtype.Int4{Int32: v, Valid: true} }

var utc = time.UTC

var typeCases = []typeCase{
	{"boolean", true, new(bool), true, "true"},
	{"boolean", false, new(bool), false, "false"},
	{"smallint", int16(-32768), new(int16), int16(-32768), "-32768"},
	{"integer", int32(2147483647), new(int32), int32(2147483647), "2147483647"},
	{"bigint", int64(math.MinInt64), new(int64), int64(math.MinInt64), "-9223372036854775808"},
	{"real", float32(3.14), new(float32), float32(3.14), "3.14"},
	{"real", float32(math.Inf(-1)), new(float32), float32(math.Inf(-1)), "-Infinity"},
	{"double precision", 1.0000000000000002, new(float64), 1.0000000000000002, "1.0000000000000002"},
	{"double precision", 1e300, new(float64), 1e300, "1e+300"},
	{"double precision", math.NaN(), new(float64), math.NaN(), "NaN"},
	{"numeric", numeric("12345678901234567890.123456789012345678901234567890"), new(pgtype.Numeric),
		numeric("12345678901234567890.123456789012345678901234567890"),
		"12345678901234567890.123456789012345678901234567890"},
	{"numeric", numeric("-0.000000001"), new(pgtype.Numeric), numeric("-0.000000001"), "-0.000000001"},
	{"numeric", numeric("1000000000000000000000000000000"), new(pgtype.Numeric), numeric("1000000000000000000000000000000"),
		"1000000000000000000000000000000"},
	{"numeric", pgtype.Numeric{NaN: true, Valid: true}, new(pgtype.Numeric), pgtype.Numeric{NaN: true, Valid: true}, "NaN"},
	{"numeric(20,5)", numeric("1.5"), new(pgtype.Numeric), numeric("1.50000"), "1.50000"},
	{"text", `héllo, wörld ✓ 'quoted' \ back"slash`, new(string), `héllo, wörld ✓ 'quoted' \ back"slash`,
		`héllo, wörld ✓ 'quoted' \ back"slash`},
	{"text", "", new(string), "", ""},
	{"varchar(10)", "abc", new(string), "abc", "abc"},
	{"char(5)", "ab", new(string), "ab   ", "ab"}, // the cast to text trims the padding
	{"bytea", []byte{0, 1, 2, 0xfe, 0xff, '\\', '\''}, new([]byte), []byte{0, 1, 2, 0xfe, 0xff, '\\', '\''},
		`\x000102feff5c27`},
	{"date", time.Date(2024, 2, 29, 0, 0, 0, 0, utc), new(time.Time), time.Date(2024, 2, 29, 0, 0, 0, 0, utc), "2024-02-29"},
	{"date", time.Date(1900, 1, 1, 0, 0, 0, 0, utc), new(time.Time), time.Date(1900, 1, 1, 0, 0, 0, 0, utc), "1900-01-01"},
	{"date", pgtype.Date{InfinityModifier: pgtype.Infinity, Valid: true}, new(pgtype.Date),
		pgtype.Date{InfinityModifier: pgtype.Infinity, Valid: true}, "infinity"},
	{"time", pgtype.Time{Microseconds: (13*3600+45*60+30)*1e6 + 123456, Valid: true}, new(pgtype.Time),
		pgtype.Time{Microseconds: (13*3600+45*60+30)*1e6 + 123456, Valid: true}, "13:45:30.123456"},
	{"timestamp", time.Date(2024, 2, 29, 13, 45, 30, 500000000, utc), new(time.Time),
		time.Date(2024, 2, 29, 13, 45, 30, 500000000, utc), "2024-02-29 13:45:30.5"},
	{"timestamp", time.Date(1999, 12, 31, 23, 59, 59, 999999000, utc), new(time.Time),
		time.Date(1999, 12, 31, 23, 59, 59, 999999000, utc), "1999-12-31 23:59:59.999999"},
	{"timestamptz", time.Date(2024, 2, 29, 13, 45, 30, 123456000, time.FixedZone("+0530", 5*3600+1800)), new(time.Time),
		time.Date(2024, 2, 29, 8, 15, 30, 123456000, utc), "2024-02-29 08:15:30.123456+00"},
	{"interval", pgtype.Interval{Months: 14, Days: 3, Microseconds: 4*3600e6 + 5*60e6 + 6789000, Valid: true},
		new(pgtype.Interval), pgtype.Interval{Months: 14, Days: 3, Microseconds: 4*3600e6 + 5*60e6 + 6789000, Valid: true},
		"1 year 2 mons 3 days 04:05:06.789"},
	{"interval", pgtype.Interval{Microseconds: -1e6, Valid: true}, new(pgtype.Interval),
		pgtype.Interval{Microseconds: -1e6, Valid: true}, "-00:00:01"},
	{"uuid", pgtype.UUID{Bytes: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, Valid: true},
		new(pgtype.UUID), pgtype.UUID{Bytes: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, Valid: true},
		"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	{"oid", uint32(4294967295), new(uint32), uint32(4294967295), "4294967295"},
	{"json", `{"b": 1, "a": [1, 2]}`, new(string), `{"b": 1, "a": [1, 2]}`, `{"b": 1, "a": [1, 2]}`},
	{"jsonb", `{"b": 1, "a": [1, 2]}`, new(string), `{"a": [1, 2], "b": 1}`, `{"a": [1, 2], "b": 1}`},
	{"jsonb", map[string]any{"k": []any{true, nil, "s"}}, new(map[string]any),
		map[string]any{"k": []any{true, nil, "s"}}, `{"k": [true, null, "s"]}`},
	{"integer[]", []int32{1, 2, 3}, new([]int32), []int32{1, 2, 3}, "{1,2,3}"},
	{"integer[]", []pgtype.Int4{int4(1), {}, int4(3)}, new([]pgtype.Int4), []pgtype.Int4{int4(1), {}, int4(3)}, "{1,NULL,3}"},
	{"integer[]", [][]int32{{1, 2}, {3, 4}}, new([][]int32), [][]int32{{1, 2}, {3, 4}}, "{{1,2},{3,4}}"},
	{"bigint[]", []int64{}, new([]int64), []int64{}, "{}"},
	{"double precision[]", []float64{1.5, -0.25}, new([]float64), []float64{1.5, -0.25}, "{1.5,-0.25}"},
	{"text[]", []string{"a", "b c", "", `"q"`, "NULL", `back\slash`}, new([]string),
		[]string{"a", "b c", "", `"q"`, "NULL", `back\slash`}, `{a,"b c","","\"q\"","NULL","back\\slash"}`},
}

// canon renders a scanned or expected value so that equal values render the
// same: numerics by their decimal text, times as UTC instants.
func canon(v any) string {
	switch x := v.(type) {
	case pgtype.Numeric:
		s, err := x.Value()
		if err != nil {
			return "numeric error: " + err.Error()
		}
		return fmt.Sprintf("numeric %v", s)
	case time.Time:
		return "time " + x.UTC().Format(time.RFC3339Nano)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := []string{}
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%q: %#v", k, x[k]))
		}
		return "map{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("%T %#v", v, v)
}

// scanTarget returns a fresh pointer of the same type as c.scan.
func scanTarget(c typeCase) any {
	return reflect.New(reflect.TypeOf(c.scan).Elem()).Interface()
}

func deref(p any) any { return reflect.ValueOf(p).Elem().Interface() }

// untypedUnsupported says whether pgx refuses the parameter in the modes that
// do not ask the server for parameter types (exec, simple_protocol): a Go map
// could be json, jsonb or hstore, and a nested slice has no default type.
func untypedUnsupported(mode pgx.QueryExecMode, c typeCase) bool {
	if mode != pgx.QueryExecModeExec && mode != pgx.QueryExecModeSimpleProtocol {
		return false
	}
	v := reflect.ValueOf(c.in)
	return v.Kind() == reflect.Map || (v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Slice)
}

func TestTypeRoundTrip(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := connect(t, m.mode)
			for i, c := range typeCases {
				if untypedUnsupported(m.mode, c) {
					continue
				}
				got := scanTarget(c)
				var text string
				err := conn.QueryRow(ctx(t), fmt.Sprintf("SELECT $1::%s, ($1::%s)::text", c.sqlType, c.sqlType), c.in).
					Scan(got, &text)
				if err != nil {
					t.Errorf("case %d %s %v: %v", i, c.sqlType, c.in, err)
					continue
				}
				if canon(deref(got)) != canon(c.want) {
					t.Errorf("case %d %s: got %s, want %s", i, c.sqlType, canon(deref(got)), canon(c.want))
				}
				if text != c.text {
					t.Errorf("case %d %s: text %q, want %q", i, c.sqlType, text, c.text)
				}
			}
		})
	}
}

// TestTypeColumns stores every case in a table column of its type and reads
// it back, as a value and as text.
func TestTypeColumns(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := connect(t, m.mode)
			table := "go_types_" + m.name
			cols := []string{}
			params := []string{}
			args := []any{}
			for i, c := range typeCases {
				cols = append(cols, fmt.Sprintf("c%d %s", i, c.sqlType))
				params = append(params, fmt.Sprintf("$%d", i+1))
				if untypedUnsupported(m.mode, c) {
					args = append(args, nil) // and the column is not checked below
				} else {
					args = append(args, c.in)
				}
			}
			mustExec(t, conn, "DROP TABLE IF EXISTS "+table)
			mustExec(t, conn, "CREATE TABLE "+table+" ("+strings.Join(cols, ", ")+")")
			mustExec(t, conn, "INSERT INTO "+table+" VALUES ("+strings.Join(params, ", ")+")", args...)
			for i, c := range typeCases {
				if untypedUnsupported(m.mode, c) {
					continue
				}
				got := scanTarget(c)
				var text string
				err := conn.QueryRow(ctx(t), fmt.Sprintf("SELECT c%d, c%d::text FROM %s", i, i, table)).Scan(got, &text)
				if err != nil {
					t.Errorf("column c%d %s: %v", i, c.sqlType, err)
					continue
				}
				if canon(deref(got)) != canon(c.want) {
					t.Errorf("column c%d %s: got %s, want %s", i, c.sqlType, canon(deref(got)), canon(c.want))
				}
				if text != c.text {
					t.Errorf("column c%d %s: text %q, want %q", i, c.sqlType, text, c.text)
				}
			}
			// The whole row at once, as pgx's generic values (what a
			// `rows.Values()` consumer such as a query tool sees).
			rows, err := conn.Query(ctx(t), "SELECT * FROM "+table)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				values, err := rows.Values()
				if err != nil {
					t.Fatal(err)
				}
				if len(values) != len(typeCases) {
					t.Errorf("Values(): %d values", len(values))
				}
				for i, fd := range rows.FieldDescriptions() {
					if fd.Name != fmt.Sprintf("c%d", i) {
						t.Errorf("field %d is named %q", i, fd.Name)
					}
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			mustExec(t, conn, "DROP TABLE "+table)
		})
	}
}

// TestTypeOIDs checks the type OIDs the server describes, which pgx uses to
// pick codecs.
func TestTypeOIDs(t *testing.T) {
	conn := connect(t, pgx.QueryExecModeCacheStatement)
	rows, err := conn.Query(ctx(t), `SELECT true, 1::int2, 1::int4, 1::int8, 1::float4, 1::float8, 1::numeric,
		'a'::text, 'a'::varchar, 'a'::char, '\x00'::bytea, current_date, localtime, localtimestamp, now(),
		'1 day'::interval, gen_random_uuid(), 1::oid, '{}'::json, '{}'::jsonb, '{1}'::int4[], '{a}'::text[]`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var oids []uint32
	for _, fd := range rows.FieldDescriptions() {
		oids = append(oids, fd.DataTypeOID)
	}
	want := "[16 21 23 20 700 701 1700 25 1043 1042 17 1082 1083 1114 1184 1186 2950 26 114 3802 1007 1009]"
	if fmt.Sprint(oids) != want {
		t.Errorf("column type OIDs %v, want %s", oids, want)
	}
}
