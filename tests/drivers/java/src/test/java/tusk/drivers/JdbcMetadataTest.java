// JDBC metadata: DatabaseMetaData (getTables, getColumns, getPrimaryKeys,
// getImportedKeys, getIndexInfo, getSchemas) and ResultSetMetaData, which GUI
// tools, ORMs and migration tools call; pgjdbc answers them with queries on
// pg_catalog, so these tests check that those queries run and give
// PostgreSQL 15's answers.
package tusk.drivers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.PGResultSetMetaData;

class JdbcMetadataTest {

    @BeforeAll
    static void schema() throws SQLException {
        try (Connection conn = Db.connect()) {
            Db.exec(conn,
                    "DROP VIEW IF EXISTS jdbc_meta_view",
                    "DROP TABLE IF EXISTS jdbc_meta_child, jdbc_meta_parent",
                    "CREATE TABLE jdbc_meta_parent (id serial PRIMARY KEY, name varchar(50) NOT NULL DEFAULT 'x',"
                            + " price numeric(10,2), created timestamptz, tags text[])",
                    "CREATE TABLE jdbc_meta_child (a int, b int, parent_id int REFERENCES jdbc_meta_parent (id),"
                            + " note char(3), PRIMARY KEY (a, b))",
                    "CREATE UNIQUE INDEX jdbc_meta_child_note ON jdbc_meta_child (note)",
                    "CREATE INDEX jdbc_meta_child_parent ON jdbc_meta_child (parent_id)",
                    "CREATE VIEW jdbc_meta_view AS SELECT id, name FROM jdbc_meta_parent",
                    "COMMENT ON TABLE jdbc_meta_parent IS 'the parents'",
                    "COMMENT ON COLUMN jdbc_meta_parent.name IS 'a name'");
        }
    }

    @AfterAll
    static void dropSchema() throws SQLException {
        try (Connection conn = Db.connect()) {
            Db.exec(conn, "DROP VIEW jdbc_meta_view", "DROP TABLE jdbc_meta_child, jdbc_meta_parent");
        }
    }

    /** The named columns of every row, each row as "v1|v2|...". */
    private static List<String> rows(ResultSet rs, String... columns) throws SQLException {
        List<String> out = new ArrayList<>();
        try (rs) {
            while (rs.next()) {
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < columns.length; i++) {
                    sb.append(i == 0 ? "" : "|").append(rs.getString(columns[i]));
                }
                out.add(sb.toString());
            }
        }
        return out;
    }

    @Test
    void tables() throws SQLException {
        try (Connection conn = Db.connect()) {
            DatabaseMetaData md = conn.getMetaData();
            String db = Db.env("PGDATABASE", "postgres");
            assertEquals(List.of(
                    db + "|public|jdbc_meta_child|TABLE|null",
                    db + "|public|jdbc_meta_parent|TABLE|the parents",
                    db + "|public|jdbc_meta_view|VIEW|null"),
                    rows(md.getTables(null, "public", "jdbc_meta%", new String[] {"TABLE", "VIEW"}),
                            "TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS"));
            // With no type filter, indexes are listed too.
            assertEquals(List.of(
                    "jdbc_meta_child_note|INDEX",
                    "jdbc_meta_child_parent|INDEX",
                    "jdbc_meta_child_pkey|INDEX",
                    "jdbc_meta_parent_pkey|INDEX",
                    "jdbc_meta_parent_id_seq|SEQUENCE",
                    "jdbc_meta_child|TABLE",
                    "jdbc_meta_parent|TABLE",
                    "jdbc_meta_view|VIEW"),
                    rows(md.getTables(null, "public", "jdbc_meta%", null), "TABLE_NAME", "TABLE_TYPE"));
            List<String> types = rows(md.getTableTypes(), "TABLE_TYPE");
            assertTrue(types.contains("TABLE") && types.contains("VIEW") && types.contains("SEQUENCE"), types.toString());
        }
    }

    @Test
    void schemas() throws SQLException {
        try (Connection conn = Db.connect()) {
            List<String> schemas = rows(conn.getMetaData().getSchemas(), "TABLE_SCHEM");
            assertTrue(schemas.containsAll(List.of("information_schema", "pg_catalog", "public")), schemas.toString());
            assertEquals(List.of("public"), rows(conn.getMetaData().getSchemas(null, "pub%"), "TABLE_SCHEM"));
        }
    }

    @Test
    void columns() throws SQLException {
        try (Connection conn = Db.connect()) {
            assertEquals(List.of(
                    "id|4|serial|10|0|0|nextval('jdbc_meta_parent_id_seq'::regclass)|1|NO|YES|null",
                    "name|12|varchar|50|0|0|'x'::character varying|2|NO|NO|a name",
                    "price|2|numeric|10|2|1|null|3|YES|NO|null",
                    "created|93|timestamptz|35|6|1|null|4|YES|NO|null",
                    "tags|2003|_text|2147483647|0|1|null|5|YES|NO|null"),
                    rows(conn.getMetaData().getColumns(null, "public", "jdbc_meta_parent", "%"),
                            "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS", "NULLABLE",
                            "COLUMN_DEF", "ORDINAL_POSITION", "IS_NULLABLE", "IS_AUTOINCREMENT", "REMARKS"));
            assertEquals(List.of("note|1|bpchar|3"),
                    rows(conn.getMetaData().getColumns(null, "public", "jdbc_meta_child", "note"),
                            "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE"));
        }
    }

    @Test
    void primaryKeys() throws SQLException {
        try (Connection conn = Db.connect()) {
            DatabaseMetaData md = conn.getMetaData();
            assertEquals(List.of("jdbc_meta_child|a|1|jdbc_meta_child_pkey", "jdbc_meta_child|b|2|jdbc_meta_child_pkey"),
                    rows(md.getPrimaryKeys(null, "public", "jdbc_meta_child"), "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME"));
            assertEquals(List.of("jdbc_meta_parent|id|1|jdbc_meta_parent_pkey"),
                    rows(md.getPrimaryKeys(null, null, "jdbc_meta_parent"), "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME"));
        }
    }

    @Test
    void foreignKeys() throws SQLException {
        try (Connection conn = Db.connect()) {
            DatabaseMetaData md = conn.getMetaData();
            assertEquals(List.of("jdbc_meta_parent|id|jdbc_meta_child|parent_id|1|3|3|jdbc_meta_child_parent_id_fkey|jdbc_meta_parent_pkey"),
                    rows(md.getImportedKeys(null, "public", "jdbc_meta_child"), "PKTABLE_NAME", "PKCOLUMN_NAME", "FKTABLE_NAME",
                            "FKCOLUMN_NAME", "KEY_SEQ", "UPDATE_RULE", "DELETE_RULE", "FK_NAME", "PK_NAME"));
            assertEquals(rows(md.getImportedKeys(null, "public", "jdbc_meta_child"), "FK_NAME"),
                    rows(md.getExportedKeys(null, "public", "jdbc_meta_parent"), "FK_NAME"));
        }
    }

    @Test
    void indexInfo() throws SQLException {
        try (Connection conn = Db.connect()) {
            assertEquals(List.of(
                    "f|jdbc_meta_child_note|1|note",
                    "f|jdbc_meta_child_pkey|1|a",
                    "f|jdbc_meta_child_pkey|2|b",
                    "t|jdbc_meta_child_parent|1|parent_id"),
                    rows(conn.getMetaData().getIndexInfo(null, "public", "jdbc_meta_child", false, false),
                            "NON_UNIQUE", "INDEX_NAME", "ORDINAL_POSITION", "COLUMN_NAME"));
        }
    }

    @Test
    void resultSetMetaData() throws SQLException {
        try (Connection conn = Db.connect();
                PreparedStatement ps = conn.prepareStatement(
                        "SELECT p.id, p.name, p.price, p.created, p.tags, c.note, p.id + 1 AS next"
                                + " FROM jdbc_meta_parent p LEFT JOIN jdbc_meta_child c ON c.parent_id = p.id")) {
            ResultSetMetaData md = ps.getMetaData(); // described before execution
            assertEquals(7, md.getColumnCount());
            List<String> got = new ArrayList<>();
            PGResultSetMetaData pg = md.unwrap(PGResultSetMetaData.class);
            for (int i = 1; i <= md.getColumnCount(); i++) {
                got.add(md.getColumnLabel(i) + "|" + md.getColumnType(i) + "|" + md.getColumnTypeName(i) + "|"
                        + md.getColumnClassName(i) + "|" + md.getPrecision(i) + "|" + md.getScale(i) + "|"
                        + md.isNullable(i) + "|" + md.isAutoIncrement(i) + "|" + pg.getBaseTableName(i) + "|"
                        + pg.getBaseColumnName(i));
            }
            assertEquals(List.of(
                    "id|4|serial|java.lang.Integer|10|0|0|true|jdbc_meta_parent|id",
                    "name|12|varchar|java.lang.String|50|0|0|false|jdbc_meta_parent|name",
                    "price|2|numeric|java.math.BigDecimal|10|2|1|false|jdbc_meta_parent|price",
                    "created|93|timestamptz|java.sql.Timestamp|35|6|1|false|jdbc_meta_parent|created",
                    "tags|2003|_text|java.sql.Array|2147483647|0|1|false|jdbc_meta_parent|tags",
                    "note|1|bpchar|java.lang.String|3|0|1|false|jdbc_meta_child|note",
                    "next|4|int4|java.lang.Integer|10|0|2|false||"), got);
            try (ResultSet rs = ps.executeQuery()) {
                assertFalse(rs.next());
                assertEquals(Types.INTEGER, rs.getMetaData().getColumnType(1));
            }
        }
    }

    @Test
    void typeInfo() throws SQLException {
        try (Connection conn = Db.connect()) {
            List<String> names = rows(conn.getMetaData().getTypeInfo(), "TYPE_NAME");
            assertTrue(names.containsAll(List.of("int4", "text", "numeric", "timestamptz", "uuid", "jsonb", "_int4")),
                    names.toString());
        }
    }
}
