// JDBC smoke tests: connecting, DDL, parameterized CRUD, transactions and
// savepoints, prepared statements reused past prepareThreshold (when pgjdbc
// switches to a named server-side statement and binary results), batches,
// NULLs, and errors with their SQLSTATEs and fields. Expected values are
// PostgreSQL 15's; see Db for where the server is.
package tusk.drivers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGResultSetMetaData;
import org.postgresql.PGStatement;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

class JdbcSmokeTest {

    @Test
    void connects() throws SQLException {
        try (Connection conn = Db.connect()) {
            assertTrue(conn.isValid(5));
            DatabaseMetaData md = conn.getMetaData();
            assertEquals("PostgreSQL", md.getDatabaseProductName());
            assertEquals(15, md.getDatabaseMajorVersion());
            assertEquals(Db.user(), md.getUserName());
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery(
                            "SELECT current_user, current_database(), current_setting('TimeZone'),"
                                    + " current_setting('DateStyle'), current_setting('client_encoding')")) {
                assertTrue(rs.next());
                assertEquals(Db.user(), rs.getString(1));
                assertEquals(Db.env("PGDATABASE", "postgres"), rs.getString(2));
                assertEquals("UTC", rs.getString(3));
                assertEquals("ISO, MDY", rs.getString(4));
                assertEquals("UTF8", rs.getString(5));
            }
        }
    }

    @Test
    void ddl() throws SQLException {
        try (Connection conn = Db.connect(); Statement st = conn.createStatement()) {
            st.execute("DROP TABLE IF EXISTS jdbc_ddl_child, jdbc_ddl");
            assertEquals(0, st.executeUpdate("CREATE TABLE jdbc_ddl (id serial PRIMARY KEY, name varchar(40) NOT NULL UNIQUE)"));
            st.execute("CREATE TABLE jdbc_ddl_child (id int PRIMARY KEY, parent int REFERENCES jdbc_ddl (id))");
            st.execute("CREATE INDEX jdbc_ddl_name_lower ON jdbc_ddl (lower(name))");
            st.execute("ALTER TABLE jdbc_ddl ADD COLUMN flag boolean NOT NULL DEFAULT true");
            // getGeneratedKeys appends RETURNING *.
            assertEquals(1, st.executeUpdate("INSERT INTO jdbc_ddl (name) VALUES ('a')", Statement.RETURN_GENERATED_KEYS));
            try (ResultSet keys = st.getGeneratedKeys()) {
                assertTrue(keys.next());
                assertEquals(1, keys.getInt("id"));
                assertTrue(keys.getBoolean("flag"));
            }
            st.execute("DROP TABLE jdbc_ddl_child, jdbc_ddl");
            SQLException e = assertThrows(SQLException.class, () -> st.executeQuery("SELECT * FROM jdbc_ddl"));
            assertEquals("42P01", e.getSQLState());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"extended", "simple"})
    void crud(String mode) throws SQLException {
        try (Connection conn = Db.connect(Db.props("preferQueryMode", mode))) {
            String t = "jdbc_crud_" + mode;
            Db.exec(conn, "DROP TABLE IF EXISTS " + t,
                    "CREATE TABLE " + t + " (id int PRIMARY KEY, name text NOT NULL, score numeric(10,2), note text)");
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO " + t + " (id, name, score) VALUES (?, ?, ?)")) {
                for (int i = 1; i <= 5; i++) {
                    ins.setInt(1, i);
                    ins.setString(2, "name " + i + "'s");
                    ins.setBigDecimal(3, new BigDecimal(i * 10 + ".25"));
                    assertEquals(1, ins.executeUpdate());
                }
            }
            try (PreparedStatement sel = conn.prepareStatement("SELECT name, score FROM " + t + " WHERE id = ?")) {
                sel.setInt(1, 3);
                try (ResultSet rs = sel.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals("name 3's", rs.getString(1));
                    assertEquals(new BigDecimal("30.25"), rs.getBigDecimal(2));
                    assertFalse(rs.next());
                }
            }
            try (PreparedStatement upd = conn.prepareStatement("UPDATE " + t + " SET score = score + ?, note = ? WHERE id >= ?")) {
                upd.setDouble(1, 1.5);
                upd.setString(2, "bumped");
                upd.setInt(3, 4);
                assertEquals(2, upd.executeUpdate());
            }
            try (PreparedStatement sel = conn.prepareStatement("SELECT id, score, note FROM " + t + " WHERE score > ? ORDER BY id")) {
                sel.setInt(1, 35);
                try (ResultSet rs = sel.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals(4, rs.getInt("id"));
                    assertEquals(new BigDecimal("41.75"), rs.getBigDecimal("score"));
                    assertTrue(rs.next());
                    assertEquals("bumped", rs.getString("note"));
                    assertFalse(rs.next());
                }
            }
            try (PreparedStatement del = conn.prepareStatement("DELETE FROM " + t + " WHERE id = ? OR name = ?")) {
                del.setInt(1, 1);
                del.setString(2, "name 2's");
                assertEquals(2, del.executeUpdate());
            }
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(*), sum(score) FROM " + t)) {
                assertTrue(rs.next());
                assertEquals(3, rs.getLong(1));
                assertEquals(new BigDecimal("123.75"), rs.getBigDecimal(2));
            }
            try (PreparedStatement ret = conn.prepareStatement("UPDATE " + t + " SET name = upper(name) WHERE id = ? RETURNING name")) {
                ret.setInt(1, 5);
                try (ResultSet rs = ret.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals("NAME 5'S", rs.getString(1));
                }
            }
            Db.exec(conn, "DROP TABLE " + t);
        }
    }

    private static long count(Connection conn, String table) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The ROLLBACK gap: what a JDBC application needs after any error in a transaction. */

    @Test
    void transactions() throws SQLException {
        try (Connection conn = Db.connect()) {
            Db.exec(conn, "DROP TABLE IF EXISTS jdbc_tx", "CREATE TABLE jdbc_tx (id int PRIMARY KEY, v text)");
            conn.setAutoCommit(false);
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO jdbc_tx VALUES (?, ?)")) {
                // Rollback leaves nothing behind.
                ins.setInt(1, 1);
                ins.setString(2, "rolled back");
                ins.executeUpdate();
                conn.rollback();
                assertEquals(0, count(conn, "jdbc_tx"));

                // Commit keeps; a savepoint rolls back alone.
                ins.setInt(1, 1);
                ins.setString(2, "kept");
                ins.executeUpdate();
                Savepoint sp = conn.setSavepoint("sp1");
                ins.setInt(1, 2);
                ins.setString(2, "savepoint");
                ins.executeUpdate();
                conn.rollback(sp);
                conn.commit();
                assertEquals(1, count(conn, "jdbc_tx"));
                conn.commit();
            }

            // Isolation level and read-only through the JDBC API.
            conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            conn.setReadOnly(true);
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SHOW transaction_isolation")) {
                rs.next();
                assertEquals("repeatable read", rs.getString(1));
            }
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SHOW transaction_read_only")) {
                rs.next();
                assertEquals("on", rs.getString(1));
            }
            conn.rollback();
            conn.setReadOnly(false);
            conn.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            conn.setAutoCommit(true);
            Db.exec(conn, "DROP TABLE jdbc_tx");
        }
    }

    @Test
    void errorsInTransactions() throws SQLException {
        try (Connection conn = Db.connect()) {
            Db.exec(conn, "DROP TABLE IF EXISTS jdbc_txerr", "CREATE TABLE jdbc_txerr (id int PRIMARY KEY, v text)",
                    "INSERT INTO jdbc_txerr VALUES (1, 'kept')");
            conn.setAutoCommit(false);
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO jdbc_txerr VALUES (?, ?)")) {
                // An error aborts the transaction: 25P02 until rollback.
                ins.setInt(1, 3);
                ins.setString(2, "lost");
                ins.executeUpdate();
                ins.setInt(1, 1);
                ins.setString(2, "duplicate");
                assertEquals("23505", assertThrows(SQLException.class, ins::executeUpdate).getSQLState());
                SQLException aborted = assertThrows(SQLException.class, () -> count(conn, "jdbc_txerr"));
                assertEquals("25P02", aborted.getSQLState());
                assertEquals("ERROR: current transaction is aborted, commands ignored until end of transaction block",
                        aborted.getMessage());
                conn.rollback();
                assertEquals(1, count(conn, "jdbc_txerr"));

                // A savepoint taken before the error makes the transaction usable again
                // (what autosave=always does for every statement).
                Savepoint before = conn.setSavepoint();
                ins.setInt(1, 1);
                ins.setString(2, "duplicate");
                assertThrows(SQLException.class, ins::executeUpdate);
                conn.rollback(before);
                ins.setInt(1, 4);
                ins.setString(2, "after savepoint");
                ins.executeUpdate();
                conn.commit();
                assertEquals(2, count(conn, "jdbc_txerr"));
                conn.commit();
            }
            conn.setReadOnly(true);
            try (Statement st = conn.createStatement()) {
                SQLException e = assertThrows(SQLException.class, () -> st.executeUpdate("INSERT INTO jdbc_txerr VALUES (9, 'ro')"));
                assertEquals("25006", e.getSQLState());
                assertEquals("ERROR: cannot execute INSERT in a read-only transaction", e.getMessage());
            }
            conn.rollback();
            conn.setReadOnly(false);
            conn.setAutoCommit(true);
            Db.exec(conn, "DROP TABLE jdbc_txerr");
        }
    }

    /** autosave=always: pgjdbc wraps each statement in a savepoint, so a failed statement does not abort the transaction. */
    @Test
    void autosave() throws SQLException {
        try (Connection conn = Db.connect(Db.props("autosave", "always"))) {
            Db.exec(conn, "DROP TABLE IF EXISTS jdbc_autosave", "CREATE TABLE jdbc_autosave (id int PRIMARY KEY)");
            conn.setAutoCommit(false);
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO jdbc_autosave VALUES (?)")) {
                for (int i : new int[] {1, 2, 1, 3}) {
                    ins.setInt(1, i);
                    try {
                        ins.executeUpdate();
                    } catch (SQLException e) {
                        assertEquals("23505", e.getSQLState());
                    }
                }
            }
            conn.commit();
            assertEquals(3, count(conn, "jdbc_autosave"));
            conn.setAutoCommit(true);
            Db.exec(conn, "DROP TABLE jdbc_autosave");
        }
    }

    /**
     * A PreparedStatement executed more than prepareThreshold (5) times: from
     * the fifth execution on, pgjdbc uses a named server-side statement, and
     * from the sixth on it asks for binary results for the types it can decode.
     */
    @Test
    void preparedStatementReuse() throws SQLException {
        try (Connection conn = Db.connect()) {
            Db.exec(conn, "DROP TABLE IF EXISTS jdbc_prep",
                    "CREATE TABLE jdbc_prep (id bigint PRIMARY KEY, label text, amount double precision, n int)");
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO jdbc_prep VALUES (?, ?, ?, ?)")) {
                for (long i = 1; i <= 20; i++) {
                    ins.setLong(1, i);
                    ins.setString(2, "row " + i);
                    ins.setDouble(3, i / 4.0);
                    ins.setInt(4, (int) i * 1000);
                    assertEquals(1, ins.executeUpdate());
                }
                assertTrue(ins.unwrap(PGStatement.class).isUseServerPrepare());
            }
            List<Integer> formats = new ArrayList<>();
            try (PreparedStatement sel = conn.prepareStatement("SELECT label, amount, n, id FROM jdbc_prep WHERE id = ?")) {
                assertEquals(5, sel.unwrap(PGStatement.class).getPrepareThreshold());
                for (long i = 1; i <= 10; i++) {
                    sel.setLong(1, i);
                    try (ResultSet rs = sel.executeQuery()) {
                        assertTrue(rs.next());
                        assertEquals("row " + i, rs.getString(1));
                        assertEquals(i / 4.0, rs.getDouble(2));
                        assertEquals(i * 1000, rs.getInt(3));
                        assertEquals(i, rs.getLong(4));
                        assertFalse(rs.next());
                        formats.add(rs.getMetaData().unwrap(PGResultSetMetaData.class).getFormat(3));
                    }
                }
                assertTrue(sel.unwrap(PGStatement.class).isUseServerPrepare());
            }
            // int4 comes back as text until the statement is named (at the fifth
            // execution, which also describes it), in binary from the sixth on.
            assertEquals(List.of(0, 0, 0, 0, 0, 1, 1, 1, 1, 1), formats);

            // Statement.execute of the same SQL does not prepare, but a
            // PreparedStatement with prepareThreshold 1 names it at once.
            try (PreparedStatement sel = conn.prepareStatement("SELECT sum(n) FROM jdbc_prep WHERE id <= ?")) {
                sel.unwrap(PGStatement.class).setPrepareThreshold(1);
                for (int i = 1; i <= 3; i++) {
                    sel.setLong(1, i);
                    try (ResultSet rs = sel.executeQuery()) {
                        rs.next();
                        assertEquals(1000L * i * (i + 1) / 2, rs.getLong(1));
                    }
                }
                assertTrue(sel.unwrap(PGStatement.class).isUseServerPrepare());
            }
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'S\\_%'")) {
                rs.next();
                assertTrue(rs.getInt(1) >= 2, "named statements S_n on the server");
            }
            Db.exec(conn, "DROP TABLE jdbc_prep");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"extended", "simple"})
    void batches(String mode) throws SQLException {
        try (Connection conn = Db.connect(Db.props("preferQueryMode", mode))) {
            String t = "jdbc_batch_" + mode;
            Db.exec(conn, "DROP TABLE IF EXISTS " + t, "CREATE TABLE " + t + " (id int PRIMARY KEY, v text)");
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO " + t + " VALUES (?, ?)")) {
                for (int i = 1; i <= 50; i++) {
                    ins.setInt(1, i);
                    ins.setString(2, "v" + i);
                    ins.addBatch();
                }
                int[] counts = ins.executeBatch();
                assertEquals(50, counts.length);
                for (int c : counts) {
                    assertTrue(c == 1 || c == Statement.SUCCESS_NO_INFO);
                }
            }
            try (Statement st = conn.createStatement()) {
                st.addBatch("UPDATE " + t + " SET v = 'even' WHERE id % 2 = 0");
                st.addBatch("DELETE FROM " + t + " WHERE id > 40");
                assertArrayEquals(new int[] {25, 10}, st.executeBatch());
            }
            assertEquals(40, count(conn, t));
            // A failing batch reports the SQLSTATE of the failure.
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO " + t + " VALUES (?, ?)")) {
                ins.setInt(1, 100);
                ins.setString(2, "new");
                ins.addBatch();
                ins.setInt(1, 1);
                ins.setString(2, "duplicate");
                ins.addBatch();
                SQLException e = assertThrows(SQLException.class, ins::executeBatch);
                SQLException cause = e.getNextException() != null ? e.getNextException() : e;
                assertEquals("23505", cause.getSQLState());
            }
            Db.exec(conn, "DROP TABLE " + t);
        }
    }

    /**
     * With autocommit off and a fetch size, pgjdbc reads a result in chunks:
     * Execute with a row limit, PortalSuspended, Execute again on the same portal.
     */
    @Test
    void fetchSizeCursor() throws SQLException {
        try (Connection conn = Db.connect()) {
            conn.setAutoCommit(false);
            try (PreparedStatement ps = conn.prepareStatement("SELECT g, repeat('x', g % 7) FROM generate_series(1, ?) g ORDER BY g")) {
                ps.setFetchSize(10);
                ps.setInt(1, 95);
                long sum = 0;
                int rows = 0;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows++;
                        sum += rs.getInt(1);
                        assertEquals(rs.getInt(1) % 7, rs.getString(2).length());
                    }
                }
                assertEquals(95, rows);
                assertEquals(95 * 96 / 2, sum);
            }
            conn.commit();
            conn.setAutoCommit(true);
        }
    }

    /** COPY FROM STDIN and COPY TO STDOUT (text format) through pgjdbc's CopyManager. */
    @Test
    void copy() throws SQLException, java.io.IOException {
        try (Connection conn = Db.connect()) {
            Db.exec(conn, "DROP TABLE IF EXISTS jdbc_copy", "CREATE TABLE jdbc_copy (id int PRIMARY KEY, name text, at date)");
            org.postgresql.copy.CopyManager copy = conn.unwrap(org.postgresql.PGConnection.class).getCopyAPI();
            StringBuilder in = new StringBuilder();
            for (int i = 1; i <= 100; i++) {
                in.append(i).append('\t').append(i % 10 == 0 ? "\\N" : "n\\t" + i).append("\t2024-03-01\n");
            }
            long copied = copy.copyIn("COPY jdbc_copy FROM STDIN", new java.io.StringReader(in.toString()));
            assertEquals(100, copied);
            java.io.StringWriter out = new java.io.StringWriter();
            assertEquals(3, copy.copyOut("COPY (SELECT * FROM jdbc_copy WHERE id IN (1, 10, 11) ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)", out));
            assertEquals("id,name,at\n1,n\t1,2024-03-01\n10,,2024-03-01\n11,n\t11,2024-03-01\n", out.toString());
            Db.exec(conn, "DROP TABLE jdbc_copy");
        }
    }

    /** Values of a few megabytes, both ways, in text and binary. */
    @Test
    void largeValues() throws SQLException {
        try (Connection conn = Db.connect(); PreparedStatement ps = conn.prepareStatement("SELECT ?::text, ?::bytea, length(?::text)")) {
            String text = "é".repeat(1 << 20);
            byte[] bytes = new byte[3 << 20];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) (i * 31);
            }
            for (int run = 0; run < 6; run++) {
                ps.setString(1, text);
                ps.setBytes(2, bytes);
                ps.setString(3, text);
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals(text, rs.getString(1));
                    assertArrayEquals(bytes, rs.getBytes(2));
                    assertEquals(1 << 20, rs.getInt(3));
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"extended", "simple"})
    void nulls(String mode) throws SQLException {
        try (Connection conn = Db.connect(Db.props("preferQueryMode", mode))) {
            String t = "jdbc_nulls_" + mode;
            Db.exec(conn, "DROP TABLE IF EXISTS " + t,
                    "CREATE TABLE " + t + " (id int PRIMARY KEY, i int, t text, ts timestamptz, b bytea, n numeric)");
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO " + t + " VALUES (?, ?, ?, ?, ?, ?)")) {
                ins.setInt(1, 1);
                ins.setNull(2, Types.INTEGER);
                ins.setNull(3, Types.VARCHAR);
                ins.setNull(4, Types.TIMESTAMP_WITH_TIMEZONE);
                ins.setBytes(5, null);
                ins.setBigDecimal(6, null);
                ins.executeUpdate();
            }
            try (PreparedStatement sel = conn.prepareStatement("SELECT i, t, ts, b, n, i IS NULL AND t IS NULL FROM " + t + " WHERE id = ?")) {
                for (int round = 0; round < 6; round++) { // text, then binary past the threshold
                    sel.setInt(1, 1);
                    try (ResultSet rs = sel.executeQuery()) {
                        assertTrue(rs.next());
                        assertEquals(0, rs.getInt(1));
                        assertTrue(rs.wasNull());
                        assertNull(rs.getObject(1));
                        assertNull(rs.getString(2));
                        assertNull(rs.getTimestamp(3));
                        assertNull(rs.getBytes(4));
                        assertNull(rs.getBigDecimal(5));
                        assertTrue(rs.getBoolean(6));
                    }
                }
            }
            try (PreparedStatement sel = conn.prepareStatement("SELECT ?::bigint + 1, coalesce(?::text, 'dflt')")) {
                sel.setNull(1, Types.BIGINT);
                sel.setNull(2, Types.VARCHAR);
                try (ResultSet rs = sel.executeQuery()) {
                    assertTrue(rs.next());
                    assertNull(rs.getObject(1));
                    assertEquals("dflt", rs.getString(2));
                }
            }
            Db.exec(conn, "DROP TABLE " + t);
        }
    }

    private static ServerErrorMessage serverError(SQLException e) {
        assertTrue(e instanceof PSQLException, "a PSQLException: " + e);
        ServerErrorMessage m = ((PSQLException) e).getServerErrorMessage();
        assertTrue(m != null, "the server's error fields");
        return m;
    }

    @ParameterizedTest
    @ValueSource(strings = {"extended", "simple"})
    void errors(String mode) throws SQLException {
        try (Connection conn = Db.connect(Db.props("preferQueryMode", mode))) {
            String t = "jdbc_err_" + mode;
            Db.exec(conn, "DROP TABLE IF EXISTS " + t, "CREATE TABLE " + t + " (id int PRIMARY KEY, name text NOT NULL)",
                    "INSERT INTO " + t + " VALUES (1, 'one')");
            try (PreparedStatement ins = conn.prepareStatement("INSERT INTO " + t + " VALUES (?, ?)")) {
                ins.setInt(1, 1);
                ins.setString(2, "again");
                SQLException e = assertThrows(SQLException.class, ins::executeUpdate);
                assertEquals("23505", e.getSQLState());
                ServerErrorMessage m = serverError(e);
                assertEquals("ERROR", m.getSeverity());
                assertEquals("duplicate key value violates unique constraint \"" + t + "_pkey\"", m.getMessage());
                assertEquals("Key (id)=(1) already exists.", m.getDetail());
                assertEquals("public", m.getSchema());
                assertEquals(t, m.getTable());
                assertEquals(t + "_pkey", m.getConstraint());

                ins.setInt(1, 2);
                ins.setNull(2, Types.VARCHAR);
                e = assertThrows(SQLException.class, ins::executeUpdate);
                assertEquals("23502", e.getSQLState());
                m = serverError(e);
                assertEquals("null value in column \"name\" of relation \"" + t + "\" violates not-null constraint", m.getMessage());
                assertEquals("name", m.getColumn());
                assertEquals(t, m.getTable());
            }
            try (PreparedStatement div = conn.prepareStatement("SELECT 1 / ?")) {
                div.setInt(1, 0);
                SQLException e = assertThrows(SQLException.class, div::executeQuery);
                assertEquals("22012", e.getSQLState());
                assertEquals("ERROR: division by zero", e.getMessage());
            }
            try (Statement st = conn.createStatement()) {
                SQLException e = assertThrows(SQLException.class, () -> st.executeQuery("SELECT * FROM jdbc_no_such_table"));
                assertEquals("42P01", e.getSQLState());
                assertEquals("relation \"jdbc_no_such_table\" does not exist", serverError(e).getMessage());
                assertEquals(15, serverError(e).getPosition());

                e = assertThrows(SQLException.class, () -> st.executeQuery("SELECT nope FROM " + t));
                assertEquals("42703", e.getSQLState());
                assertEquals(8, serverError(e).getPosition());

                e = assertThrows(SQLException.class, () -> st.executeQuery("SELEC 1"));
                assertEquals("42601", e.getSQLState());
                assertEquals("syntax error at or near \"SELEC\"", serverError(e).getMessage());

                e = assertThrows(SQLException.class, () -> st.executeQuery("SELECT 'abc'::int"));
                assertEquals("22P02", e.getSQLState());
                assertEquals("invalid input syntax for type integer: \"abc\"", serverError(e).getMessage());

                // The connection is still usable.
                try (ResultSet rs = st.executeQuery("SELECT name FROM " + t + " WHERE id = 1")) {
                    assertTrue(rs.next());
                    assertEquals("one", rs.getString(1));
                }
            }
            Db.exec(conn, "DROP TABLE " + t);
        }
    }
}
