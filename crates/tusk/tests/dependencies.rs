//! DROP along dependencies, checked through a real client for what the SQL
//! logic tests cannot see: the NOTICEs a CASCADE drop sends ("drop cascades
//! to ..."), and the DETAIL and HINT of a refused drop.
//!
//! Each case runs in a transaction of its own (rolled back afterwards):
//! setup statements, then the statement under test, whose NOTICEs and
//! error are rendered as lines and compared with the expected lines.
//!
//! The expected lines were captured from PostgreSQL 15. To check them
//! against a server (PostgreSQL itself, say) instead of a spawned Tusk:
//!
//!     TUSK_DEPENDENCIES_TARGET="host=127.0.0.1 port=5499 user=postgres dbname=x" \
//!         cargo test --release -p tusk --test dependencies
//!
//! and `TUSK_DEPENDENCIES_PRINT=1` prints every case's lines as the server
//! gave them, in the form the table below takes.
//!
//! The last tests need Tusk itself: a chain of thousands of views dropped
//! with CASCADE must end in success or 54001, never in a crash.

mod common;

use std::sync::mpsc;

use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

use common::TestServer;

/// One case: setup (run first, its notices ignored), then the statement.
struct Case {
    name: &'static str,
    setup: &'static str,
    statement: &'static str,
    expected: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "view_blocks_drop_table",
        setup: "CREATE TABLE t (a int, b int); CREATE VIEW v AS SELECT a FROM t",
        statement: "DROP TABLE t",
        expected: "ERROR 2BP01: cannot drop table t because other objects depend on it\nDETAIL: view v depends on table t\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_table_cascade_one_view",
        setup: "CREATE TABLE t (a int, b int); CREATE VIEW v AS SELECT a FROM t",
        statement: "DROP TABLE t CASCADE",
        expected: "NOTICE: drop cascades to view v\nOK",
    },
    Case {
        name: "drop_table_cascade_many",
        setup: "CREATE TABLE t (id serial PRIMARY KEY, a int CHECK (a > 0), b text UNIQUE); CREATE TABLE u (x int REFERENCES t (id), y text REFERENCES t (b)); CREATE VIEW v AS SELECT id, b FROM t; CREATE VIEW v2 AS SELECT count(*) AS n FROM t; CREATE VIEW v3 AS SELECT v.id, u.y FROM v JOIN u ON v.id = u.x; CREATE INDEX t_expr ON t ((a + 1))",
        statement: "DROP TABLE t CASCADE",
        expected: "NOTICE: drop cascades to 5 other objects\nDETAIL: drop cascades to constraint u_x_fkey on table u\ndrop cascades to constraint u_y_fkey on table u\ndrop cascades to view v\ndrop cascades to view v3\ndrop cascades to view v2\nOK",
    },
    Case {
        name: "drop_table_restrict_many",
        setup: "CREATE TABLE t (id serial PRIMARY KEY, a int CHECK (a > 0), b text UNIQUE); CREATE TABLE u (x int REFERENCES t (id), y text REFERENCES t (b)); CREATE VIEW v AS SELECT id, b FROM t; CREATE VIEW v2 AS SELECT count(*) AS n FROM t; CREATE VIEW v3 AS SELECT v.id, u.y FROM v JOIN u ON v.id = u.x",
        statement: "DROP TABLE t",
        expected: "ERROR 2BP01: cannot drop table t because other objects depend on it\nDETAIL: constraint u_x_fkey on table u depends on table t\nconstraint u_y_fkey on table u depends on table t\nview v depends on table t\nview v3 depends on view v\nview v2 depends on table t\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_two_tables_one_depends_on_other",
        setup: "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (a_id int REFERENCES a); CREATE VIEW ab AS SELECT * FROM a JOIN b ON a.id = b.a_id",
        statement: "DROP TABLE a, b CASCADE",
        expected: "NOTICE: drop cascades to view ab\nOK",
    },
    Case {
        name: "drop_two_tables_restrict",
        setup: "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (a_id int REFERENCES a); CREATE VIEW ab AS SELECT * FROM a JOIN b ON a.id = b.a_id",
        statement: "DROP TABLE a, b",
        expected: "ERROR 2BP01: cannot drop desired object(s) because other objects depend on them\nDETAIL: view ab depends on table a\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_two_tables_fk_between_them",
        setup: "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (a_id int REFERENCES a)",
        statement: "DROP TABLE a, b",
        expected: "OK",
    },
    Case {
        name: "drop_schema_cascade_serial",
        setup: "CREATE SCHEMA s; CREATE TABLE s.c (id serial PRIMARY KEY, n text DEFAULT 'x'); CREATE VIEW s.cv AS SELECT n FROM s.c; CREATE SEQUENCE s.free_seq; CREATE INDEX ON s.c (n)",
        statement: "DROP SCHEMA s CASCADE",
        expected: "NOTICE: drop cascades to 3 other objects\nDETAIL: drop cascades to table s.c\ndrop cascades to view s.cv\ndrop cascades to sequence s.free_seq\nOK",
    },
    Case {
        name: "drop_schema_restrict",
        setup: "CREATE SCHEMA s; CREATE TABLE s.c (id serial PRIMARY KEY, n text); CREATE VIEW s.cv AS SELECT n FROM s.c; CREATE SEQUENCE s.free_seq",
        statement: "DROP SCHEMA s",
        expected: "ERROR 2BP01: cannot drop schema s because other objects depend on it\nDETAIL: table s.c depends on schema s\nview s.cv depends on schema s\nsequence s.free_seq depends on schema s\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_empty_schema",
        setup: "CREATE SCHEMA s",
        statement: "DROP SCHEMA s",
        expected: "OK",
    },
    Case {
        name: "drop_schemas_referencing_each_other",
        setup: "CREATE SCHEMA s1; CREATE SCHEMA s2; CREATE TABLE s1.t (a int PRIMARY KEY); CREATE TABLE s2.u (a int REFERENCES s1.t); CREATE VIEW s2.v AS SELECT * FROM s1.t",
        statement: "DROP SCHEMA s1, s2 CASCADE",
        expected: "NOTICE: drop cascades to 3 other objects\nDETAIL: drop cascades to table s2.u\ndrop cascades to table s1.t\ndrop cascades to view s2.v\nOK",
    },
    Case {
        name: "drop_schema_cascade_reaches_other_schema",
        setup: "CREATE SCHEMA s1; CREATE SCHEMA s2; CREATE TABLE s1.t (a int PRIMARY KEY); CREATE TABLE s2.u (a int REFERENCES s1.t); CREATE VIEW s2.v AS SELECT * FROM s1.t",
        statement: "DROP SCHEMA s1 CASCADE",
        expected: "NOTICE: drop cascades to 3 other objects\nDETAIL: drop cascades to table s1.t\ndrop cascades to constraint u_a_fkey on table s2.u\ndrop cascades to view s2.v\nOK",
    },
    Case {
        name: "drop_column_other_columns_in_view",
        setup: "CREATE TABLE t (a int, b int, c int); CREATE VIEW v AS SELECT a, b FROM t",
        statement: "ALTER TABLE t DROP COLUMN c",
        expected: "OK",
    },
    Case {
        name: "drop_column_used_by_view",
        setup: "CREATE TABLE t (a int, b int, c int); CREATE VIEW v AS SELECT a, c FROM t; CREATE VIEW vv AS SELECT * FROM v",
        statement: "ALTER TABLE t DROP COLUMN c",
        expected: "ERROR 2BP01: cannot drop column c of table t because other objects depend on it\nDETAIL: view v depends on column c of table t\nview vv depends on view v\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_column_used_by_view_cascade",
        setup: "CREATE TABLE t (a int, b int, c int); CREATE VIEW v AS SELECT a, c FROM t; CREATE VIEW vv AS SELECT * FROM v",
        statement: "ALTER TABLE t DROP COLUMN c CASCADE",
        expected: "NOTICE: drop cascades to 2 other objects\nDETAIL: drop cascades to view v\ndrop cascades to view vv\nOK",
    },
    Case {
        name: "drop_column_with_index_and_check",
        setup: "CREATE TABLE t (a int, b int CHECK (b > 0), c int); CREATE INDEX t_b ON t (b); CREATE INDEX t_ab ON t (a, b); CREATE UNIQUE INDEX t_bexpr ON t ((b * 2)) WHERE c > 0",
        statement: "ALTER TABLE t DROP COLUMN b",
        expected: "OK",
    },
    Case {
        name: "drop_column_referenced_by_fk",
        setup: "CREATE TABLE t (id int PRIMARY KEY, x int); CREATE TABLE u (t_id int REFERENCES t)",
        statement: "ALTER TABLE t DROP COLUMN id",
        expected: "ERROR 2BP01: cannot drop column id of table t because other objects depend on it\nDETAIL: constraint u_t_id_fkey on table u depends on column id of table t\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_column_referenced_by_fk_cascade",
        setup: "CREATE TABLE t (id int PRIMARY KEY, x int); CREATE TABLE u (t_id int REFERENCES t)",
        statement: "ALTER TABLE t DROP COLUMN id CASCADE",
        expected: "NOTICE: drop cascades to constraint u_t_id_fkey on table u\nOK",
    },
    Case {
        name: "drop_serial_column",
        setup: "CREATE TABLE t (id serial, x int)",
        statement: "ALTER TABLE t DROP COLUMN id",
        expected: "OK",
    },
    Case {
        name: "drop_sequence_used_by_default",
        setup: "CREATE TABLE t (id serial, x int)",
        statement: "DROP SEQUENCE t_id_seq",
        expected: "ERROR 2BP01: cannot drop sequence t_id_seq because other objects depend on it\nDETAIL: default value for column id of table t depends on sequence t_id_seq\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_sequence_used_by_default_cascade",
        setup: "CREATE TABLE t (id serial, x int)",
        statement: "DROP SEQUENCE t_id_seq CASCADE",
        expected: "NOTICE: drop cascades to default value for column id of table t\nOK",
    },
    Case {
        name: "drop_sequence_named_in_defaults",
        setup: "CREATE SEQUENCE shared_seq; CREATE TABLE t1 (id int DEFAULT nextval('shared_seq')); CREATE TABLE t2 (id bigint DEFAULT nextval('shared_seq'::regclass))",
        statement: "DROP SEQUENCE shared_seq",
        expected: "ERROR 2BP01: cannot drop sequence shared_seq because other objects depend on it\nDETAIL: default value for column id of table t1 depends on sequence shared_seq\ndefault value for column id of table t2 depends on sequence shared_seq\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_identity_sequence",
        setup: "CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY, x int)",
        statement: "DROP SEQUENCE t_id_seq",
        expected: "ERROR 2BP01: cannot drop sequence t_id_seq because column id of table t requires it\nHINT: You can drop column id of table t instead.",
    },
    Case {
        name: "drop_pk_index",
        setup: "CREATE TABLE t (id int PRIMARY KEY)",
        statement: "DROP INDEX t_pkey",
        expected: "ERROR 2BP01: cannot drop index t_pkey because constraint t_pkey on table t requires it\nHINT: You can drop constraint t_pkey on table t instead.",
    },
    Case {
        name: "drop_pk_index_other_schema",
        setup: "CREATE SCHEMA s; CREATE TABLE s.t (id int PRIMARY KEY)",
        statement: "DROP INDEX s.t_pkey",
        expected: "ERROR 2BP01: cannot drop index s.t_pkey because constraint t_pkey on table s.t requires it\nHINT: You can drop constraint t_pkey on table s.t instead.",
    },
    Case {
        name: "drop_pk_constraint_referenced",
        setup: "CREATE TABLE t (id int PRIMARY KEY); CREATE TABLE u (t_id int REFERENCES t)",
        statement: "ALTER TABLE t DROP CONSTRAINT t_pkey",
        expected: "ERROR 2BP01: cannot drop constraint t_pkey on table t because other objects depend on it\nDETAIL: constraint u_t_id_fkey on table u depends on index t_pkey\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_pk_constraint_referenced_cascade",
        setup: "CREATE TABLE t (id int PRIMARY KEY); CREATE TABLE u (t_id int REFERENCES t)",
        statement: "ALTER TABLE t DROP CONSTRAINT t_pkey CASCADE",
        expected: "NOTICE: drop cascades to constraint u_t_id_fkey on table u\nOK",
    },
    Case {
        name: "drop_unique_index_referenced",
        setup: "CREATE TABLE t (id int, CONSTRAINT t_id_key UNIQUE (id)); CREATE TABLE u (t_id int REFERENCES t (id))",
        statement: "DROP INDEX t_id_key",
        expected: "ERROR 2BP01: cannot drop index t_id_key because constraint t_id_key on table t requires it\nHINT: You can drop constraint t_id_key on table t instead.",
    },
    Case {
        name: "drop_view_chain",
        setup: "CREATE TABLE t (a int, b int); CREATE VIEW v1 (x, y) AS SELECT t.a, t2.b FROM t JOIN t AS t2 USING (a); CREATE VIEW v2 AS SELECT x FROM v1; CREATE VIEW v3 AS SELECT * FROM v2 UNION ALL SELECT y FROM v1",
        statement: "DROP VIEW v1 CASCADE",
        expected: "NOTICE: drop cascades to 2 other objects\nDETAIL: drop cascades to view v2\ndrop cascades to view v3\nOK",
    },
    Case {
        name: "drop_view_chain_restrict",
        setup: "CREATE TABLE t (a int, b int); CREATE VIEW v1 (x, y) AS SELECT t.a, t2.b FROM t JOIN t AS t2 USING (a); CREATE VIEW v2 AS SELECT x FROM v1; CREATE VIEW v3 AS SELECT * FROM v2 UNION ALL SELECT y FROM v1",
        statement: "DROP VIEW v1",
        expected: "ERROR 2BP01: cannot drop view v1 because other objects depend on it\nDETAIL: view v2 depends on view v1\nview v3 depends on view v1\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_view_in_subquery",
        setup: "CREATE TABLE t (a int); CREATE TABLE u (b int); CREATE VIEW v AS SELECT a FROM t WHERE a IN (SELECT b FROM u)",
        statement: "DROP TABLE u",
        expected: "ERROR 2BP01: cannot drop table u because other objects depend on it\nDETAIL: view v depends on table u\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "view_cycle_restrict",
        setup: "CREATE TABLE c1 (a int); CREATE VIEW cv1 AS SELECT a FROM c1; CREATE VIEW cv2 AS SELECT a FROM cv1; CREATE OR REPLACE VIEW cv1 AS SELECT a FROM cv2",
        statement: "DROP VIEW cv1",
        expected: "ERROR 2BP01: cannot drop view cv1 because other objects depend on it\nDETAIL: view cv2 depends on view cv1\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "view_cycle_cascade",
        setup: "CREATE TABLE c1 (a int); CREATE VIEW cv1 AS SELECT a FROM c1; CREATE VIEW cv2 AS SELECT a FROM cv1; CREATE OR REPLACE VIEW cv1 AS SELECT a FROM cv2",
        statement: "DROP VIEW cv1 CASCADE",
        expected: "NOTICE: drop cascades to view cv2\nOK",
    },
    Case {
        name: "view_cycle_query",
        setup: "CREATE TABLE c1 (a int); CREATE VIEW cv1 AS SELECT a FROM c1; CREATE VIEW cv2 AS SELECT a FROM cv1; CREATE OR REPLACE VIEW cv1 AS SELECT a FROM cv2",
        statement: "SELECT * FROM cv1",
        expected: "ERROR 42P17: infinite recursion detected in rules for relation \"cv1\"",
    },
    Case {
        name: "view_cycle_table_free",
        setup: "CREATE TABLE c1 (a int); CREATE VIEW cv1 AS SELECT a FROM c1; CREATE VIEW cv2 AS SELECT a FROM cv1; CREATE OR REPLACE VIEW cv1 AS SELECT a FROM cv2",
        statement: "DROP TABLE c1",
        expected: "OK",
    },
    Case {
        name: "view_over_a_view_cycle_can_be_created",
        setup: "CREATE TABLE c1 (a int); CREATE VIEW cv1 AS SELECT a FROM c1; CREATE VIEW cv2 AS SELECT a FROM cv1; CREATE OR REPLACE VIEW cv1 AS SELECT a FROM cv2",
        statement: "CREATE VIEW cv3 AS SELECT a + 1 AS b FROM cv1",
        expected: "OK",
    },
    Case {
        name: "view_over_a_view_cycle_query",
        setup: "CREATE TABLE c1 (a int); CREATE VIEW cv1 AS SELECT a FROM c1; CREATE VIEW cv2 AS SELECT a FROM cv1; CREATE OR REPLACE VIEW cv1 AS SELECT a FROM cv2; CREATE VIEW cv3 AS SELECT a + 1 AS b FROM cv1",
        statement: "SELECT * FROM cv3",
        expected: "ERROR 42P17: infinite recursion detected in rules for relation \"cv1\"",
    },
    Case {
        name: "view_over_a_view_cycle_restrict",
        setup: "CREATE TABLE c1 (a int); CREATE VIEW cv1 AS SELECT a FROM c1; CREATE VIEW cv2 AS SELECT a FROM cv1; CREATE OR REPLACE VIEW cv1 AS SELECT a FROM cv2; CREATE VIEW cv3 AS SELECT a + 1 AS b FROM cv1",
        statement: "DROP VIEW cv2",
        expected: "ERROR 2BP01: cannot drop view cv2 because other objects depend on it\nDETAIL: view cv1 depends on view cv2\nview cv3 depends on view cv1\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "view_over_a_view_cycle_cascade",
        setup: "CREATE TABLE c1 (a int); CREATE VIEW cv1 AS SELECT a FROM c1; CREATE VIEW cv2 AS SELECT a FROM cv1; CREATE OR REPLACE VIEW cv1 AS SELECT a FROM cv2; CREATE VIEW cv3 AS SELECT a + 1 AS b FROM cv1",
        statement: "DROP VIEW cv2 CASCADE",
        expected: "NOTICE: drop cascades to 2 other objects\nDETAIL: drop cascades to view cv1\ndrop cascades to view cv3\nOK",
    },
    Case {
        name: "qualified_when_not_in_search_path",
        setup: "CREATE SCHEMA s; CREATE TABLE s.t (a int); CREATE VIEW s.v AS SELECT a FROM s.t; CREATE VIEW public.pv AS SELECT a FROM s.t",
        statement: "DROP TABLE s.t",
        expected: "ERROR 2BP01: cannot drop table s.t because other objects depend on it\nDETAIL: view s.v depends on table s.t\nview pv depends on table s.t\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "too_many_to_list",
        setup: "CREATE TABLE t (a int); CREATE VIEW v000 AS SELECT a FROM t; CREATE VIEW v001 AS SELECT a FROM t; CREATE VIEW v002 AS SELECT a FROM t; CREATE VIEW v003 AS SELECT a FROM t; CREATE VIEW v004 AS SELECT a FROM t; CREATE VIEW v005 AS SELECT a FROM t; CREATE VIEW v006 AS SELECT a FROM t; CREATE VIEW v007 AS SELECT a FROM t; CREATE VIEW v008 AS SELECT a FROM t; CREATE VIEW v009 AS SELECT a FROM t; CREATE VIEW v010 AS SELECT a FROM t; CREATE VIEW v011 AS SELECT a FROM t; CREATE VIEW v012 AS SELECT a FROM t; CREATE VIEW v013 AS SELECT a FROM t; CREATE VIEW v014 AS SELECT a FROM t; CREATE VIEW v015 AS SELECT a FROM t; CREATE VIEW v016 AS SELECT a FROM t; CREATE VIEW v017 AS SELECT a FROM t; CREATE VIEW v018 AS SELECT a FROM t; CREATE VIEW v019 AS SELECT a FROM t; CREATE VIEW v020 AS SELECT a FROM t; CREATE VIEW v021 AS SELECT a FROM t; CREATE VIEW v022 AS SELECT a FROM t; CREATE VIEW v023 AS SELECT a FROM t; CREATE VIEW v024 AS SELECT a FROM t; CREATE VIEW v025 AS SELECT a FROM t; CREATE VIEW v026 AS SELECT a FROM t; CREATE VIEW v027 AS SELECT a FROM t; CREATE VIEW v028 AS SELECT a FROM t; CREATE VIEW v029 AS SELECT a FROM t; CREATE VIEW v030 AS SELECT a FROM t; CREATE VIEW v031 AS SELECT a FROM t; CREATE VIEW v032 AS SELECT a FROM t; CREATE VIEW v033 AS SELECT a FROM t; CREATE VIEW v034 AS SELECT a FROM t; CREATE VIEW v035 AS SELECT a FROM t; CREATE VIEW v036 AS SELECT a FROM t; CREATE VIEW v037 AS SELECT a FROM t; CREATE VIEW v038 AS SELECT a FROM t; CREATE VIEW v039 AS SELECT a FROM t; CREATE VIEW v040 AS SELECT a FROM t; CREATE VIEW v041 AS SELECT a FROM t; CREATE VIEW v042 AS SELECT a FROM t; CREATE VIEW v043 AS SELECT a FROM t; CREATE VIEW v044 AS SELECT a FROM t; CREATE VIEW v045 AS SELECT a FROM t; CREATE VIEW v046 AS SELECT a FROM t; CREATE VIEW v047 AS SELECT a FROM t; CREATE VIEW v048 AS SELECT a FROM t; CREATE VIEW v049 AS SELECT a FROM t; CREATE VIEW v050 AS SELECT a FROM t; CREATE VIEW v051 AS SELECT a FROM t; CREATE VIEW v052 AS SELECT a FROM t; CREATE VIEW v053 AS SELECT a FROM t; CREATE VIEW v054 AS SELECT a FROM t; CREATE VIEW v055 AS SELECT a FROM t; CREATE VIEW v056 AS SELECT a FROM t; CREATE VIEW v057 AS SELECT a FROM t; CREATE VIEW v058 AS SELECT a FROM t; CREATE VIEW v059 AS SELECT a FROM t; CREATE VIEW v060 AS SELECT a FROM t; CREATE VIEW v061 AS SELECT a FROM t; CREATE VIEW v062 AS SELECT a FROM t; CREATE VIEW v063 AS SELECT a FROM t; CREATE VIEW v064 AS SELECT a FROM t; CREATE VIEW v065 AS SELECT a FROM t; CREATE VIEW v066 AS SELECT a FROM t; CREATE VIEW v067 AS SELECT a FROM t; CREATE VIEW v068 AS SELECT a FROM t; CREATE VIEW v069 AS SELECT a FROM t; CREATE VIEW v070 AS SELECT a FROM t; CREATE VIEW v071 AS SELECT a FROM t; CREATE VIEW v072 AS SELECT a FROM t; CREATE VIEW v073 AS SELECT a FROM t; CREATE VIEW v074 AS SELECT a FROM t; CREATE VIEW v075 AS SELECT a FROM t; CREATE VIEW v076 AS SELECT a FROM t; CREATE VIEW v077 AS SELECT a FROM t; CREATE VIEW v078 AS SELECT a FROM t; CREATE VIEW v079 AS SELECT a FROM t; CREATE VIEW v080 AS SELECT a FROM t; CREATE VIEW v081 AS SELECT a FROM t; CREATE VIEW v082 AS SELECT a FROM t; CREATE VIEW v083 AS SELECT a FROM t; CREATE VIEW v084 AS SELECT a FROM t; CREATE VIEW v085 AS SELECT a FROM t; CREATE VIEW v086 AS SELECT a FROM t; CREATE VIEW v087 AS SELECT a FROM t; CREATE VIEW v088 AS SELECT a FROM t; CREATE VIEW v089 AS SELECT a FROM t; CREATE VIEW v090 AS SELECT a FROM t; CREATE VIEW v091 AS SELECT a FROM t; CREATE VIEW v092 AS SELECT a FROM t; CREATE VIEW v093 AS SELECT a FROM t; CREATE VIEW v094 AS SELECT a FROM t; CREATE VIEW v095 AS SELECT a FROM t; CREATE VIEW v096 AS SELECT a FROM t; CREATE VIEW v097 AS SELECT a FROM t; CREATE VIEW v098 AS SELECT a FROM t; CREATE VIEW v099 AS SELECT a FROM t; CREATE VIEW v100 AS SELECT a FROM t; CREATE VIEW v101 AS SELECT a FROM t; CREATE VIEW v102 AS SELECT a FROM t; CREATE VIEW v103 AS SELECT a FROM t; CREATE VIEW v104 AS SELECT a FROM t",
        statement: "DROP TABLE t CASCADE",
        expected: "NOTICE: drop cascades to 105 other objects\nDETAIL: drop cascades to view v000\ndrop cascades to view v001\ndrop cascades to view v002\ndrop cascades to view v003\ndrop cascades to view v004\ndrop cascades to view v005\ndrop cascades to view v006\ndrop cascades to view v007\ndrop cascades to view v008\ndrop cascades to view v009\ndrop cascades to view v010\ndrop cascades to view v011\ndrop cascades to view v012\ndrop cascades to view v013\ndrop cascades to view v014\ndrop cascades to view v015\ndrop cascades to view v016\ndrop cascades to view v017\ndrop cascades to view v018\ndrop cascades to view v019\ndrop cascades to view v020\ndrop cascades to view v021\ndrop cascades to view v022\ndrop cascades to view v023\ndrop cascades to view v024\ndrop cascades to view v025\ndrop cascades to view v026\ndrop cascades to view v027\ndrop cascades to view v028\ndrop cascades to view v029\ndrop cascades to view v030\ndrop cascades to view v031\ndrop cascades to view v032\ndrop cascades to view v033\ndrop cascades to view v034\ndrop cascades to view v035\ndrop cascades to view v036\ndrop cascades to view v037\ndrop cascades to view v038\ndrop cascades to view v039\ndrop cascades to view v040\ndrop cascades to view v041\ndrop cascades to view v042\ndrop cascades to view v043\ndrop cascades to view v044\ndrop cascades to view v045\ndrop cascades to view v046\ndrop cascades to view v047\ndrop cascades to view v048\ndrop cascades to view v049\ndrop cascades to view v050\ndrop cascades to view v051\ndrop cascades to view v052\ndrop cascades to view v053\ndrop cascades to view v054\ndrop cascades to view v055\ndrop cascades to view v056\ndrop cascades to view v057\ndrop cascades to view v058\ndrop cascades to view v059\ndrop cascades to view v060\ndrop cascades to view v061\ndrop cascades to view v062\ndrop cascades to view v063\ndrop cascades to view v064\ndrop cascades to view v065\ndrop cascades to view v066\ndrop cascades to view v067\ndrop cascades to view v068\ndrop cascades to view v069\ndrop cascades to view v070\ndrop cascades to view v071\ndrop cascades to view v072\ndrop cascades to view v073\ndrop cascades to view v074\ndrop cascades to view v075\ndrop cascades to view v076\ndrop cascades to view v077\ndrop cascades to view v078\ndrop cascades to view v079\ndrop cascades to view v080\ndrop cascades to view v081\ndrop cascades to view v082\ndrop cascades to view v083\ndrop cascades to view v084\ndrop cascades to view v085\ndrop cascades to view v086\ndrop cascades to view v087\ndrop cascades to view v088\ndrop cascades to view v089\ndrop cascades to view v090\ndrop cascades to view v091\ndrop cascades to view v092\ndrop cascades to view v093\ndrop cascades to view v094\ndrop cascades to view v095\ndrop cascades to view v096\ndrop cascades to view v097\ndrop cascades to view v098\ndrop cascades to view v099\nand 5 other objects (see server log for list)\nOK",
    },
    Case {
        name: "drop_system_catalog",
        setup: "",
        statement: "DROP TABLE pg_class",
        expected: "ERROR 42501: permission denied: \"pg_class\" is a system catalog",
    },
    Case {
        name: "drop_pg_catalog",
        setup: "",
        statement: "DROP SCHEMA pg_catalog",
        expected: "ERROR 2BP01: cannot drop schema pg_catalog because it is required by the database system",
    },
    Case {
        name: "drop_role_owner_of_serial_table",
        setup: "CREATE ROLE dep_rs; GRANT CREATE ON SCHEMA public TO dep_rs; SET ROLE dep_rs; CREATE TABLE dep_ts (id serial, b bigserial); RESET ROLE",
        statement: "DROP ROLE dep_rs",
        expected: "ERROR 2BP01: role \"dep_rs\" cannot be dropped because some objects depend on it\nDETAIL: privileges for schema public\nowner of sequence dep_ts_id_seq\nowner of sequence dep_ts_b_seq\nowner of table dep_ts",
    },
    Case {
        name: "drop_role_owner",
        setup: "CREATE ROLE dep_r1; CREATE SCHEMA dep_s AUTHORIZATION dep_r1; CREATE TABLE dep_t (a int); ALTER TABLE dep_t OWNER TO dep_r1; CREATE SEQUENCE dep_q; ALTER SEQUENCE dep_q OWNER TO dep_r1",
        statement: "DROP ROLE dep_r1",
        expected: "ERROR 2BP01: role \"dep_r1\" cannot be dropped because some objects depend on it\nDETAIL: owner of schema dep_s\nowner of table dep_t\nowner of sequence dep_q",
    },
    Case {
        name: "drop_role_privileges",
        setup: "CREATE ROLE dep_r2; CREATE SCHEMA dep_s; CREATE TABLE dep_s.t (a int); GRANT USAGE ON SCHEMA dep_s TO dep_r2; GRANT SELECT, INSERT ON dep_s.t TO dep_r2",
        statement: "DROP ROLE dep_r2",
        expected: "ERROR 2BP01: role \"dep_r2\" cannot be dropped because some objects depend on it\nDETAIL: privileges for schema dep_s\nprivileges for table dep_s.t",
    },
    Case {
        name: "drop_owned",
        setup: "CREATE ROLE dep_r3; CREATE TABLE dep_t (id serial PRIMARY KEY); ALTER TABLE dep_t OWNER TO dep_r3; CREATE VIEW dep_v AS SELECT id FROM dep_t; ALTER VIEW dep_v OWNER TO dep_r3; CREATE TABLE other (a int); GRANT SELECT ON other TO dep_r3",
        statement: "DROP OWNED BY dep_r3",
        expected: "OK",
    },
    Case {
        name: "drop_owned_blocked",
        setup: "CREATE ROLE dep_r4; CREATE TABLE dep_t (id int); ALTER TABLE dep_t OWNER TO dep_r4; CREATE VIEW mine AS SELECT id FROM dep_t",
        statement: "DROP OWNED BY dep_r4",
        expected: "ERROR 2BP01: cannot drop table dep_t because other objects depend on it\nDETAIL: view mine depends on table dep_t\nHINT: Use DROP ... CASCADE to drop the dependent objects too.",
    },
    Case {
        name: "drop_owned_cascade",
        setup: "CREATE ROLE dep_r4; CREATE TABLE dep_t (id int); ALTER TABLE dep_t OWNER TO dep_r4; CREATE VIEW mine AS SELECT id FROM dep_t",
        statement: "DROP OWNED BY dep_r4 CASCADE",
        expected: "NOTICE: drop cascades to view mine\nOK",
    },
    Case {
        name: "drop_owned_then_role",
        setup: "CREATE ROLE dep_r5; CREATE TABLE dep_t (id int); ALTER TABLE dep_t OWNER TO dep_r5; CREATE TABLE other (a int); GRANT SELECT ON other TO dep_r5; DROP OWNED BY dep_r5",
        statement: "DROP ROLE dep_r5",
        expected: "OK",
    },
    Case {
        name: "reassign_owned_then_role",
        setup: "CREATE ROLE dep_r6; CREATE ROLE dep_r7; CREATE TABLE dep_t (id int); ALTER TABLE dep_t OWNER TO dep_r6; REASSIGN OWNED BY dep_r6 TO dep_r7",
        statement: "DROP ROLE dep_r6",
        expected: "OK",
    },
    Case {
        name: "reassigned_owner_holds",
        setup: "CREATE ROLE dep_r6; CREATE ROLE dep_r7; CREATE TABLE dep_t (id int); ALTER TABLE dep_t OWNER TO dep_r6; REASSIGN OWNED BY dep_r6 TO dep_r7",
        statement: "DROP ROLE dep_r7",
        expected: "ERROR 2BP01: role \"dep_r7\" cannot be dropped because some objects depend on it\nDETAIL: owner of table dep_t",
    },
    Case {
        name: "drop_owned_by_bootstrap",
        setup: "",
        statement: "DROP OWNED BY postgres",
        expected: "ERROR 2BP01: cannot drop objects owned by role postgres because they are required by the database system",
    },
    Case {
        name: "reassign_owned_by_bootstrap",
        setup: "CREATE ROLE dep_r8",
        statement: "REASSIGN OWNED BY postgres TO dep_r8",
        expected: "ERROR 2BP01: cannot reassign ownership of objects owned by role postgres because they are required by the database system",
    },
    Case {
        name: "drop_owned_missing_role",
        setup: "",
        statement: "DROP OWNED BY dep_nobody",
        expected: "ERROR 42704: role \"dep_nobody\" does not exist",
    },
];

/// A connection whose NOTICEs are collected.
struct Session {
    client: Client,
    notices: mpsc::Receiver<tokio_postgres::error::DbError>,
}

async fn open(config: &Config) -> Session {
    let (client, mut connection) = config.connect(NoTls).await.expect("connect");
    let (tx, rx) = mpsc::channel();
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notice(n))) => {
                    let _ = tx.send(n);
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            }
        }
    });
    Session { client, notices: rx }
}

impl Session {
    fn drain(&self) -> Vec<tokio_postgres::error::DbError> {
        self.notices.try_iter().collect()
    }

    /// Runs `sql` and renders its NOTICEs and its error, if any.
    async fn transcript(&self, sql: &str) -> String {
        self.drain();
        let result = self.client.simple_query(sql).await;
        let mut lines = Vec::new();
        for n in self.drain() {
            lines.push(format!("NOTICE: {}", n.message()));
            if let Some(d) = n.detail() {
                lines.push(format!("DETAIL: {d}"));
            }
            if let Some(h) = n.hint() {
                lines.push(format!("HINT: {h}"));
            }
        }
        match result {
            Ok(_) => lines.push("OK".to_string()),
            Err(e) => match e.as_db_error() {
                Some(d) => {
                    lines.push(format!("ERROR {}: {}", d.code().code(), d.message()));
                    if let Some(x) = d.detail() {
                        lines.push(format!("DETAIL: {x}"));
                    }
                    if let Some(x) = d.hint() {
                        lines.push(format!("HINT: {x}"));
                    }
                }
                None => lines.push(format!("CONNECTION ERROR: {e}")),
            },
        }
        lines.join("\n")
    }
}

/// The server the cases run against: TUSK_DEPENDENCIES_TARGET, or a Tusk
/// spawned for the test (kept alive by the returned guard).
fn target() -> (Config, Option<TestServer>) {
    match std::env::var("TUSK_DEPENDENCIES_TARGET") {
        Ok(s) => (s.parse().expect("a libpq connection string"), None),
        Err(_) => {
            let server = TestServer::start();
            let config = server.config("postgres");
            (config, Some(server))
        }
    }
}

#[tokio::test]
async fn drop_reports_dependents_as_postgres_does() {
    let (config, _server) = target();
    let print = std::env::var("TUSK_DEPENDENCIES_PRINT").is_ok();
    let mut failures = Vec::new();
    for case in CASES {
        let s = open(&config).await;
        s.client.batch_execute("BEGIN").await.unwrap();
        if let Err(e) = s.client.batch_execute(case.setup).await {
            failures.push(format!("{}: setup failed: {e:?}", case.name));
            continue;
        }
        let got = s.transcript(case.statement).await;
        let _ = s.client.batch_execute("ROLLBACK").await;
        if print {
            println!("    Case {{\n        name: {:?},\n        setup: {:?},\n        statement: {:?},\n        expected: {:?},\n    }},", case.name, case.setup, case.statement, got);
        }
        if got != case.expected {
            failures.push(format!("{}: {}\n--- expected\n{}\n--- got\n{}", case.name, case.statement, case.expected, got));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n\n{}", failures.len(), CASES.len(), failures.join("\n\n"));
}

/// Runs `sql`; Ok, or the error's SQLSTATE.
async fn outcome(client: &Client, sql: &str) -> Result<(), String> {
    match client.batch_execute(sql).await {
        Ok(()) => Ok(()),
        Err(e) => Err(e.as_db_error().map(|d| format!("{} {}", d.code().code(), d.message())).unwrap_or_else(|| format!("connection: {e}"))),
    }
}

/// A chain of 2000 views, each reading the one before: reading the last
/// and dropping the first with CASCADE walk 2000 levels. Each must succeed
/// or fail with 54001 (stack depth limit exceeded); the server must live.
#[tokio::test]
async fn a_chain_of_two_thousand_views_drops_or_fails_cleanly() {
    const N: usize = 2000;
    let (config, _server) = target();
    let s = open(&config).await;
    let c = &s.client;
    c.batch_execute("DROP SCHEMA IF EXISTS dep_chain CASCADE; CREATE SCHEMA dep_chain; CREATE TABLE dep_chain.t (a int); INSERT INTO dep_chain.t VALUES (7)").await.unwrap();
    // Every view first reads the table (cheap to make), then, from the
    // last to the second, is replaced to read the view before it: each
    // replacement reads a view that still reads the table directly.
    let mut batch = String::new();
    for i in 1..=N {
        batch.push_str(&format!("CREATE VIEW dep_chain.v{i} AS SELECT a FROM dep_chain.t;"));
        if i % 200 == 0 {
            c.batch_execute(&batch).await.unwrap();
            batch.clear();
        }
    }
    for i in (2..=N).rev() {
        batch.push_str(&format!("CREATE OR REPLACE VIEW dep_chain.v{i} AS SELECT a FROM dep_chain.v{};", i - 1));
        if i % 200 == 0 {
            c.batch_execute(&batch).await.unwrap();
            batch.clear();
        }
    }
    c.batch_execute(&batch).await.unwrap();
    // The chain is in pg_depend: each view's rule reads the view before it.
    let links: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid \
             JOIN pg_class v ON v.oid = r.ev_class JOIN pg_class w ON w.oid = d.refobjid \
             WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass \
               AND w.relkind = 'v' AND w.oid <> v.oid AND v.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'dep_chain')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(links, N as i64 - 1);
    let read = outcome(c, &format!("SELECT * FROM dep_chain.v{N}")).await;
    assert!(read.is_ok() || read.as_ref().unwrap_err().starts_with("54001"), "reading the chain: {read:?}");
    let dropped = outcome(c, "DROP TABLE dep_chain.t CASCADE").await;
    assert!(dropped.is_ok() || dropped.as_ref().unwrap_err().starts_with("54001"), "dropping the chain: {dropped:?}");
    if dropped.is_ok() {
        let notices = s.drain();
        assert!(notices.iter().any(|n| n.message() == format!("drop cascades to {N} other objects")), "{notices:?}");
        let left: i64 = c.query_one("SELECT count(*) FROM pg_class WHERE relname LIKE 'v%' AND relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'dep_chain')", &[]).await.unwrap().get(0);
        assert_eq!(left, 0);
    }
    // The session and the server carry on.
    c.batch_execute("DROP SCHEMA dep_chain CASCADE").await.unwrap();
    let fresh = open(&config).await;
    let one: i32 = fresh.client.query_one("SELECT 1", &[]).await.unwrap().get(0);
    assert_eq!(one, 1);
}
