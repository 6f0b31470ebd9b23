// JDBC type round trips: each built-in type is sent as a parameter through the
// usual setter and read back with the usual getter, from an expression and
// from a table column, together with PostgreSQL 15's text output of the value.
// In the extended mode each statement runs 7 times: the first four
// executions use the unnamed statement and text results, the later ones a
// named statement and binary results for the types pgjdbc decodes in binary
// (integers, floats, numeric, dates and times, bytea, uuid, arrays), so both
// formats are checked. The simple mode (preferQueryMode=simple) is all text.
package tusk.drivers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGResultSetMetaData;
import org.postgresql.util.PGInterval;
import org.postgresql.util.PGobject;

class JdbcTypesTest {

    @FunctionalInterface
    interface Setter {
        void set(Connection conn, PreparedStatement ps, int index) throws SQLException;
    }

    @FunctionalInterface
    interface Getter {
        Object get(ResultSet rs, int index) throws SQLException;
    }

    /** One value: how to bind it, how to read it, what comes back. */
    record Case(String sqlType, Setter set, Getter get, Object want, String text) {}

    static Setter obj(Object v) {
        return (c, ps, i) -> ps.setObject(i, v);
    }

    static Getter as(Class<?> cls) {
        return (rs, i) -> rs.getObject(i, cls);
    }

    static PGobject pgobject(String type, String value) {
        try {
            PGobject o = new PGobject();
            o.setType(type);
            o.setValue(value);
            return o;
        } catch (SQLException e) {
            throw new RuntimeException(e);
        }
    }

    static Setter array(String elementType, Object[] elements) {
        return (c, ps, i) -> ps.setArray(i, c.createArrayOf(elementType, elements));
    }

    static final Getter ARRAY = (rs, i) -> {
        java.sql.Array a = rs.getArray(i);
        return a == null ? null : a.getArray();
    };

    static final String BIG = "12345678901234567890.123456789012345678901234567890";

    static final List<Case> CASES = List.of(
            new Case("boolean", (c, ps, i) -> ps.setBoolean(i, true), (rs, i) -> rs.getBoolean(i), true, "true"),
            new Case("boolean", (c, ps, i) -> ps.setBoolean(i, false), (rs, i) -> rs.getBoolean(i), false, "false"),
            new Case("smallint", (c, ps, i) -> ps.setShort(i, Short.MIN_VALUE), (rs, i) -> rs.getShort(i), Short.MIN_VALUE, "-32768"),
            new Case("integer", (c, ps, i) -> ps.setInt(i, Integer.MAX_VALUE), (rs, i) -> rs.getInt(i), Integer.MAX_VALUE, "2147483647"),
            new Case("bigint", (c, ps, i) -> ps.setLong(i, Long.MIN_VALUE), (rs, i) -> rs.getLong(i), Long.MIN_VALUE, "-9223372036854775808"),
            new Case("real", (c, ps, i) -> ps.setFloat(i, 3.14f), (rs, i) -> rs.getFloat(i), 3.14f, "3.14"),
            new Case("real", (c, ps, i) -> ps.setFloat(i, Float.NEGATIVE_INFINITY), (rs, i) -> rs.getFloat(i), Float.NEGATIVE_INFINITY, "-Infinity"),
            new Case("double precision", (c, ps, i) -> ps.setDouble(i, 1.0000000000000002), (rs, i) -> rs.getDouble(i), 1.0000000000000002, "1.0000000000000002"),
            new Case("double precision", (c, ps, i) -> ps.setDouble(i, 1e300), (rs, i) -> rs.getDouble(i), 1e300, "1e+300"),
            new Case("double precision", (c, ps, i) -> ps.setDouble(i, Double.NaN), (rs, i) -> rs.getDouble(i), Double.NaN, "NaN"),
            new Case("numeric", (c, ps, i) -> ps.setBigDecimal(i, new BigDecimal(BIG)), (rs, i) -> rs.getBigDecimal(i), new BigDecimal(BIG), BIG),
            new Case("numeric", (c, ps, i) -> ps.setBigDecimal(i, new BigDecimal("-0.000000001")), (rs, i) -> rs.getBigDecimal(i),
                    new BigDecimal("-0.000000001"), "-0.000000001"),
            new Case("numeric", (c, ps, i) -> ps.setBigDecimal(i, new BigDecimal("1E+30")), (rs, i) -> rs.getBigDecimal(i),
                    new BigDecimal("1000000000000000000000000000000"), "1000000000000000000000000000000"),
            new Case("numeric(20,5)", (c, ps, i) -> ps.setBigDecimal(i, new BigDecimal("1.5")), (rs, i) -> rs.getBigDecimal(i),
                    new BigDecimal("1.50000"), "1.50000"),
            new Case("numeric", (c, ps, i) -> ps.setDouble(i, Double.NaN), (rs, i) -> rs.getDouble(i), Double.NaN, "NaN"),
            new Case("text", (c, ps, i) -> ps.setString(i, "héllo, wörld ✓ 'quoted' \\ back\"slash"), (rs, i) -> rs.getString(i),
                    "héllo, wörld ✓ 'quoted' \\ back\"slash", "héllo, wörld ✓ 'quoted' \\ back\"slash"),
            new Case("text", (c, ps, i) -> ps.setString(i, ""), (rs, i) -> rs.getString(i), "", ""),
            new Case("varchar(10)", (c, ps, i) -> ps.setString(i, "abc"), (rs, i) -> rs.getString(i), "abc", "abc"),
            // The cast to text trims char(n)'s padding.
            new Case("char(5)", (c, ps, i) -> ps.setString(i, "ab"), (rs, i) -> rs.getString(i), "ab   ", "ab"),
            new Case("bytea", (c, ps, i) -> ps.setBytes(i, new byte[] {0, 1, 2, (byte) 0xfe, (byte) 0xff, '\\', '\''}),
                    (rs, i) -> rs.getBytes(i), new byte[] {0, 1, 2, (byte) 0xfe, (byte) 0xff, '\\', '\''}, "\\x000102feff5c27"),
            new Case("date", obj(LocalDate.of(2024, 2, 29)), as(LocalDate.class), LocalDate.of(2024, 2, 29), "2024-02-29"),
            new Case("date", obj(LocalDate.of(1900, 1, 1)), as(LocalDate.class), LocalDate.of(1900, 1, 1), "1900-01-01"),
            new Case("date", (c, ps, i) -> ps.setDate(i, java.sql.Date.valueOf("1999-12-31")), (rs, i) -> rs.getDate(i).toString(),
                    "1999-12-31", "1999-12-31"),
            new Case("time", obj(LocalTime.of(13, 45, 30, 123456000)), as(LocalTime.class), LocalTime.of(13, 45, 30, 123456000),
                    "13:45:30.123456"),
            new Case("timestamp", obj(LocalDateTime.of(2024, 2, 29, 13, 45, 30, 500000000)), as(LocalDateTime.class),
                    LocalDateTime.of(2024, 2, 29, 13, 45, 30, 500000000), "2024-02-29 13:45:30.5"),
            new Case("timestamp", (c, ps, i) -> ps.setTimestamp(i, java.sql.Timestamp.valueOf("1999-12-31 23:59:59.999999")),
                    (rs, i) -> rs.getTimestamp(i).toString(), "1999-12-31 23:59:59.999999", "1999-12-31 23:59:59.999999"),
            new Case("timestamptz", obj(OffsetDateTime.of(2024, 2, 29, 13, 45, 30, 123456000, ZoneOffset.ofHoursMinutes(5, 30))),
                    as(OffsetDateTime.class), OffsetDateTime.of(2024, 2, 29, 8, 15, 30, 123456000, ZoneOffset.UTC),
                    "2024-02-29 08:15:30.123456+00"),
            new Case("interval", obj(new PGInterval(1, 2, 3, 4, 5, 6.789)), (rs, i) -> rs.getObject(i),
                    new PGInterval(1, 2, 3, 4, 5, 6.789), "1 year 2 mons 3 days 04:05:06.789"),
            new Case("interval", obj(new PGInterval(0, 0, 0, 0, 0, -1)), (rs, i) -> rs.getObject(i), new PGInterval(0, 0, 0, 0, 0, -1),
                    "-00:00:01"),
            new Case("uuid", obj(UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")), as(UUID.class),
                    UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            new Case("oid", (c, ps, i) -> ps.setLong(i, 4294967295L), (rs, i) -> rs.getLong(i), 4294967295L, "4294967295"),
            new Case("json", obj(pgobject("json", "{\"b\": 1, \"a\": [1, 2]}")), (rs, i) -> rs.getString(i),
                    "{\"b\": 1, \"a\": [1, 2]}", "{\"b\": 1, \"a\": [1, 2]}"),
            new Case("jsonb", obj(pgobject("jsonb", "{\"b\": 1, \"a\": [1, 2]}")), (rs, i) -> ((PGobject) rs.getObject(i)).getValue(),
                    "{\"a\": [1, 2], \"b\": 1}", "{\"a\": [1, 2], \"b\": 1}"),
            new Case("integer[]", array("int4", new Integer[] {1, null, 3}), ARRAY, new Integer[] {1, null, 3}, "{1,NULL,3}"),
            new Case("integer[]", array("int4", new Integer[][] {{1, 2}, {3, 4}}), ARRAY, new Integer[][] {{1, 2}, {3, 4}},
                    "{{1,2},{3,4}}"),
            new Case("bigint[]", array("int8", new Long[] {}), ARRAY, new Long[] {}, "{}"),
            new Case("double precision[]", array("float8", new Double[] {1.5, -0.25}), ARRAY, new Double[] {1.5, -0.25}, "{1.5,-0.25}"),
            new Case("text[]", array("text", new String[] {"a", "b c", "", "\"q\"", "NULL", "back\\slash", null}), ARRAY,
                    new String[] {"a", "b c", "", "\"q\"", "NULL", "back\\slash", null},
                    "{a,\"b c\",\"\",\"\\\"q\\\"\",\"NULL\",\"back\\\\slash\",NULL}"),
            // pgjdbc sends a String[] through setObject as varchar[].
            new Case("varchar[]", obj(new String[] {"x", "y"}), ARRAY, new String[] {"x", "y"}, "{x,y}"));

    private static String show(Object v) {
        if (v instanceof Object[] a) {
            return Arrays.deepToString(a);
        }
        if (v instanceof byte[] b) {
            return Arrays.toString(b);
        }
        return String.valueOf(v) + (v == null ? "" : " (" + v.getClass().getSimpleName() + ")");
    }

    private static void check(String where, Case c, Object got, String text, List<String> failures) {
        if (!Objects.deepEquals(c.want(), got)) {
            failures.add(where + " " + c.sqlType() + ": got " + show(got) + ", want " + show(c.want()));
        }
        if (!c.text().equals(text)) {
            failures.add(where + " " + c.sqlType() + ": text '" + text + "', want '" + c.text() + "'");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"extended", "simple"})
    void roundTrip(String mode) throws SQLException {
        List<String> failures = new ArrayList<>();
        int binaryResults = 0;
        try (Connection conn = Db.connect(Db.props("preferQueryMode", mode))) {
            int runs = mode.equals("simple") ? 1 : 7;
            for (int n = 0; n < CASES.size(); n++) {
                Case c = CASES.get(n);
                try (PreparedStatement ps = conn.prepareStatement("SELECT ?::" + c.sqlType() + ", (?::" + c.sqlType() + ")::text")) {
                    for (int run = 1; run <= runs; run++) {
                        c.set().set(conn, ps, 1);
                        c.set().set(conn, ps, 2);
                        try (ResultSet rs = ps.executeQuery()) {
                            assertTrue(rs.next());
                            check("case " + n + " run " + run, c, c.get().get(rs, 1), rs.getString(2), failures);
                            if (rs.getMetaData().unwrap(PGResultSetMetaData.class).getFormat(1) == 1) {
                                binaryResults++;
                            }
                        }
                    }
                } catch (SQLException e) {
                    failures.add("case " + n + " " + c.sqlType() + ": " + e);
                }
            }
        }
        assertEquals(List.of(), failures);
        if (mode.equals("extended")) {
            assertTrue(binaryResults >= 20 * 3, "binary results: " + binaryResults);
        } else {
            assertEquals(0, binaryResults);
        }
    }

    /** Every case stored in a column of its type, then read back, from one row. */
    @ParameterizedTest
    @ValueSource(strings = {"extended", "simple"})
    void columns(String mode) throws SQLException {
        List<String> failures = new ArrayList<>();
        try (Connection conn = Db.connect(Db.props("preferQueryMode", mode))) {
            String t = "jdbc_types_" + mode;
            StringBuilder cols = new StringBuilder();
            StringBuilder params = new StringBuilder();
            for (int n = 0; n < CASES.size(); n++) {
                cols.append(n == 0 ? "" : ", ").append("c").append(n).append(' ').append(CASES.get(n).sqlType());
                params.append(n == 0 ? "?" : ", ?");
            }
            Db.exec(conn, "DROP TABLE IF EXISTS " + t, "CREATE TABLE " + t + " (" + cols + ")");
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO " + t + " VALUES (" + params + ")")) {
                for (int n = 0; n < CASES.size(); n++) {
                    CASES.get(n).set().set(conn, ins, n + 1);
                }
                assertEquals(1, ins.executeUpdate());
            }
            StringBuilder select = new StringBuilder("SELECT ");
            for (int n = 0; n < CASES.size(); n++) {
                select.append(n == 0 ? "" : ", ").append("c").append(n).append(", c").append(n).append("::text");
            }
            select.append(" FROM ").append(t);
            try (PreparedStatement sel = conn.prepareStatement(select.toString())) {
                for (int run = 1; run <= (mode.equals("simple") ? 1 : 6); run++) {
                    try (ResultSet rs = sel.executeQuery()) {
                        assertTrue(rs.next());
                        for (int n = 0; n < CASES.size(); n++) {
                            Case c = CASES.get(n);
                            check("column c" + n + " run " + run, c, c.get().get(rs, 2 * n + 1), rs.getString(2 * n + 2), failures);
                        }
                    }
                }
            }
            // getObject without a target class: the driver's default mapping.
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery("SELECT c0, c2, c3, c4, c5, c10, c19, c20 FROM " + t)) {
                assertTrue(rs.next());
                assertEquals(Boolean.TRUE, rs.getObject(1));
                assertEquals(Integer.valueOf(-32768), rs.getObject(2)); // smallint maps to Integer
                assertEquals(Integer.MAX_VALUE, rs.getObject(3));
                assertEquals(Long.MIN_VALUE, rs.getObject(4));
                assertEquals(3.14f, rs.getObject(5));
                assertEquals(new BigDecimal(BIG), rs.getObject(6));
                assertTrue(rs.getObject(7) instanceof byte[]);
                assertEquals(java.sql.Date.valueOf("2024-02-29"), rs.getObject(8));
            }
            Db.exec(conn, "DROP TABLE " + t);
        }
        assertEquals(List.of(), failures);
    }
}
