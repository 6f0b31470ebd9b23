-- Storage parameters (pg_class.reloptions) and covering indexes as psql
-- shows them: CREATE TABLE / INDEX / VIEW ... WITH (...), ALTER ... SET
-- and RESET with PostgreSQL's validation messages, the TOAST table's
-- options, `\d+` footers, and INCLUDE columns in pg_index,
-- pg_get_indexdef and `\d`.
CREATE TABLE opts (i int, t text) WITH (FiLLFaCToR=30, autovacuum_enabled = false, autovacuum_analyze_scale_factor = 0.2, toast.autovacuum_vacuum_cost_delay = 23);
SELECT reloptions FROM pg_class WHERE oid = 'opts'::regclass;
SELECT t.relname = 'pg_toast_' || c.oid AS toast_named, t.relkind, t.relnamespace::regnamespace, t.reloptions
  FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid WHERE c.relname = 'opts';
SELECT i.indisunique, i.indnatts, a.attname
  FROM pg_class c JOIN pg_index i ON i.indrelid = c.reltoastrelid JOIN pg_attribute a ON a.attrelid = i.indexrelid
  WHERE c.relname = 'opts' ORDER BY a.attnum;
\d+ opts
-- only tables whose rows can outgrow a page get a TOAST table
CREATE TABLE narrow (a int, b varchar(10), c numeric(10,2));
CREATE TABLE wide (a int, b varchar(1000));
SELECT relname, reltoastrelid <> 0 AS has_toast FROM pg_class WHERE relname IN ('narrow', 'wide', 'opts') ORDER BY 1;
-- bounds, types, names and namespaces are checked
CREATE TABLE bad (i int) WITH (fillfactor=2);
CREATE TABLE bad (i int) WITH (fillfactor=110);
CREATE TABLE bad (i int) WITH (fillfactor=30.5);
SELECT reloptions FROM pg_class WHERE relname = 'bad';
DROP TABLE bad;
CREATE TABLE bad (i int) WITH (autovacuum_analyze_scale_factor = -10.0);
CREATE TABLE bad (i int) WITH (not_existing_option=2);
CREATE TABLE bad (i int) WITH (not_existing_namespace.fillfactor=2);
CREATE TABLE bad (i int) WITH (fillfactor='string');
CREATE TABLE bad (i int) WITH (fillfactor=true);
CREATE TABLE bad (i int) WITH (autovacuum_enabled=12);
CREATE TABLE bad (i int) WITH (autovacuum_analyze_scale_factor='string');
CREATE TABLE bad (i int) WITH (vacuum_index_cleanup=maybe);
CREATE TABLE bad (i int) WITH (fillfactor=30, fillfactor=40);
CREATE TABLE bad (i int) WITH (fillfactor);
CREATE TABLE bad (i int) WITH (toast.fillfactor=50);
CREATE TABLE bad (i int) WITH (oids=true);
CREATE TABLE bad (i int) WITH (oids=false, autovacuum_enabled=of);
SELECT reloptions FROM pg_class WHERE relname = 'bad';
-- the options are checked before the name
CREATE TABLE opts (i int) WITH (fillfactor=1);
-- SET keeps the others and appends, RESET removes, none left is NULL
ALTER TABLE opts SET (fillfactor=31, autovacuum_analyze_scale_factor = 0.3);
SELECT reloptions FROM pg_class WHERE oid = 'opts'::regclass;
ALTER TABLE opts SET (autovacuum_enabled, fillfactor=32);
SELECT reloptions FROM pg_class WHERE oid = 'opts'::regclass;
ALTER TABLE opts RESET (fillfactor, autovacuum_enabled, autovacuum_analyze_scale_factor);
SELECT reloptions IS NULL AS reset FROM pg_class WHERE oid = 'opts'::regclass;
ALTER TABLE opts RESET (fillfactor=12);
ALTER TABLE opts SET (fillfactor=20, fillfactor=30);
ALTER TABLE opts SET (toast.autovacuum_vacuum_cost_delay = 24, toast.vacuum_truncate = false);
ALTER TABLE opts RESET (toast.autovacuum_vacuum_cost_delay);
SELECT t.reloptions FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid WHERE c.relname = 'opts';
ALTER TABLE opts SET WITHOUT OIDS;
CREATE SEQUENCE opts_seq;
ALTER TABLE opts_seq SET (fillfactor=10);
-- index options: per access method
CREATE INDEX opts_i ON opts (i) WITH (fillfactor=70, deduplicate_items=off);
CREATE INDEX opts_i ON opts (i) WITH (not_existing_ns.fillfactor=2);
CREATE INDEX opts_h ON opts USING hash (i) WITH (deduplicate_items=off);
CREATE INDEX opts_h ON opts USING hash (i) WITH (fillfactor=20);
ALTER INDEX opts_i RESET (deduplicate_items);
ALTER INDEX opts_i SET (fillfactor=5);
SELECT c.relname, c.reloptions, pg_get_indexdef(c.oid) FROM pg_class c WHERE c.relname LIKE 'opts\__' ORDER BY 1;
ALTER TABLE opts ADD CONSTRAINT opts_u UNIQUE (i) WITH (fillfactor=80);
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'opts_u';
\d opts
\d+ opts_i
-- view options
CREATE VIEW opts_v WITH (security_barrier) AS SELECT i FROM opts;
ALTER VIEW opts_v SET (fillfactor=10);
ALTER VIEW opts_v SET (check_option=both);
ALTER VIEW opts_v SET (check_option=local, security_invoker=on);
SELECT reloptions FROM pg_class WHERE relname = 'opts_v';
\d+ opts_v
CREATE VIEW opts_v2 AS SELECT i FROM opts WITH CASCADED CHECK OPTION;
SELECT reloptions FROM pg_class WHERE relname = 'opts_v2';
-- covering indexes
CREATE TABLE cover (c1 int, c2 int, c3 int, c4 text);
CREATE INDEX cover_idx ON cover (c1, c2) INCLUDE (c3, c4);
CREATE INDEX ON cover (c1, c2) INCLUDE (c1, c3);
CREATE INDEX ON cover USING hash (c1) INCLUDE (c2);
CREATE INDEX ON cover (c1) INCLUDE ((c2 + 1));
CREATE INDEX ON cover (c1) INCLUDE (c2 DESC);
CREATE INDEX ON cover (c1) INCLUDE (nope);
ALTER TABLE cover ADD CONSTRAINT cover_key UNIQUE (c1) INCLUDE (c4);
ALTER TABLE cover ADD PRIMARY KEY (c2, c1) INCLUDE (c3);
SELECT c.relname, i.indnatts, i.indnkeyatts, i.indkey, pg_get_indexdef(i.indexrelid)
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'cover'::regclass ORDER BY 1;
SELECT conname, pg_get_constraintdef(oid), conkey FROM pg_constraint WHERE conrelid = 'cover'::regclass ORDER BY 1;
\d cover
\d cover_idx
-- uniqueness is on the key columns only
INSERT INTO cover VALUES (1, 2, 3, 'x');
INSERT INTO cover VALUES (1, 3, 4, 'y');
INSERT INTO cover VALUES (5, 2, 3, 'x');
-- dropping an included column drops the index and its constraint
ALTER TABLE cover DROP COLUMN c4;
SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'cover'::regclass ORDER BY 1;
SELECT conname FROM pg_constraint WHERE conrelid = 'cover'::regclass ORDER BY 1;
-- client_min_messages filters what reaches the client
SET client_min_messages = warning;
DROP TABLE IF EXISTS no_such_table;
SET client_min_messages = notice;
DROP TABLE IF EXISTS no_such_table;
