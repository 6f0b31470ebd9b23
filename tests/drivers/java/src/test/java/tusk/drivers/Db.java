// Connection helpers for the JDBC smoke suite: where the server is (the libpq
// variables PGHOST, PGPORT, PGUSER, PGDATABASE, defaulting to
// 127.0.0.1:5432 as postgres/postgres), and how to skip a check that Tusk is
// known to fail while still running it against PostgreSQL.
package tusk.drivers;

import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

final class Db {
    private Db() {}

    static String env(String key, String def) {
        String v = System.getenv(key);
        return v == null || v.isEmpty() ? def : v;
    }

    static String url() {
        return "jdbc:postgresql://" + env("PGHOST", "127.0.0.1") + ":" + env("PGPORT", "5432") + "/"
                + env("PGDATABASE", "postgres");
    }

    static String user() {
        return env("PGUSER", "postgres");
    }

    /** A connection with the driver's defaults (prepareThreshold=5, extended protocol). */
    static Connection connect() throws SQLException {
        return connect(new Properties());
    }

    /** A connection with extra driver properties (e.g. preferQueryMode=simple). */
    static Connection connect(Properties extra) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", user());
        props.setProperty("password", env("PGPASSWORD", ""));
        props.setProperty("sslmode", env("PGSSLMODE", "disable"));
        props.setProperty("connectTimeout", "10");
        props.setProperty("socketTimeout", "60");
        props.putAll(extra);
        return DriverManager.getConnection(url(), props);
    }

    static Properties props(String... keyValues) {
        Properties p = new Properties();
        for (int i = 0; i + 1 < keyValues.length; i += 2) {
            p.setProperty(keyValues[i], keyValues[i + 1]);
        }
        return p;
    }

    static void exec(Connection conn, String... statements) throws SQLException {
        try (Statement st = conn.createStatement()) {
            for (String sql : statements) {
                st.execute(sql);
            }
        }
    }

    static boolean isTusk(Connection conn) throws SQLException {
        return conn.getMetaData().getDatabaseProductVersion().contains("Tusk");
    }

    /**
     * Skips the rest of a test when the server is Tusk, for a known
     * incompatibility named in reason; against PostgreSQL the test runs, which
     * keeps its expectations honest.
     */
    static void tuskGap(Connection conn, String reason) throws SQLException {
        assumeFalse(isTusk(conn), "Tusk gap: " + reason);
    }
}
