-- Publications and subscriptions: the catalogs, psql's \dRp/\dRs and \d
-- lines, PostgreSQL's checks and messages, and what publishing a table
-- asks of its UPDATEs and DELETEs.
CREATE ROLE pubtest_owner LOGIN SUPERUSER;
CREATE ROLE pubtest_plain;
SET SESSION AUTHORIZATION pubtest_owner;
CREATE SCHEMA pubtest_s;
CREATE TABLE pub_t1 (id int PRIMARY KEY, data text, n int);
CREATE TABLE pubtest_s.t2 (a int, b text);
CREATE TABLE pub_nokey (a int, b int);
CREATE VIEW pub_v AS SELECT 1 AS x;
CREATE TEMP TABLE pub_temp (a int);
CREATE UNLOGGED TABLE pub_unlogged (a int);

-- options
CREATE PUBLICATION pub_default;
CREATE PUBLICATION pub_ins WITH (publish = 'insert, truncate');
CREATE PUBLICATION pub_bad WITH (foo);
CREATE PUBLICATION pub_bad WITH (publish = 'insert, vacuum');
CREATE PUBLICATION pub_bad WITH (publish_via_partition_root = true, publish_via_partition_root = false);
CREATE PUBLICATION pub_default;
ALTER PUBLICATION pub_default SET (publish = 'update', publish_via_partition_root = on);
COMMENT ON PUBLICATION pub_default IS 'the default one';
SELECT pubname, puballtables, pubinsert, pubupdate, pubdelete, pubtruncate, pubviaroot,
       obj_description(oid, 'pg_publication') FROM pg_publication ORDER BY pubname;
\dRp

-- tables, column lists, row filters, schemas
CREATE PUBLICATION pub_tables FOR TABLE pub_t1 (id, n) WHERE (n > 10 AND data IS NOT NULL), pub_nokey;
CREATE PUBLICATION pub_schema FOR TABLES IN SCHEMA pubtest_s;
CREATE PUBLICATION pub_both FOR TABLES IN SCHEMA pubtest_s, TABLE pub_t1;
\dRp+ pub_tables
\dRp+ pub_both
SELECT p.pubname, r.prrelid::regclass, r.prattrs, pg_get_expr(r.prqual, r.prrelid)
  FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid ORDER BY 1, 2;
SELECT p.pubname, n.nspname FROM pg_publication_namespace pn
  JOIN pg_publication p ON p.oid = pn.pnpubid JOIN pg_namespace n ON n.oid = pn.pnnspid ORDER BY 1, 2;
SELECT * FROM pg_publication_tables ORDER BY 1, 2, 3;
\d pub_t1
\d+ pubtest_s.t2

-- what cannot be published, and conflicting requests
CREATE PUBLICATION pub_err FOR TABLE pub_v;
CREATE PUBLICATION pub_err FOR TABLE pub_temp;
CREATE PUBLICATION pub_err FOR TABLE pub_unlogged;
CREATE PUBLICATION pub_err FOR TABLE pg_class;
CREATE PUBLICATION pub_err FOR TABLE no_such_table;
CREATE PUBLICATION pub_err FOR TABLES IN SCHEMA pg_catalog;
CREATE PUBLICATION pub_err FOR TABLES IN SCHEMA no_such_schema;
CREATE PUBLICATION pub_err FOR TABLE pub_t1 (id, nope);
CREATE PUBLICATION pub_err FOR TABLE pub_t1 (id, ctid);
CREATE PUBLICATION pub_err FOR TABLE pub_t1 (id, id);
CREATE PUBLICATION pub_err FOR TABLE pub_t1 WHERE (n);
CREATE PUBLICATION pub_err FOR TABLE pub_t1 WHERE (n < avg(n));
CREATE PUBLICATION pub_err FOR TABLE pub_t1 WHERE (n < random());
CREATE PUBLICATION pub_err FOR TABLE pub_t1 WHERE (n IN (SELECT 1));
CREATE PUBLICATION pub_err FOR TABLE pub_t1 WHERE ('(0,1)'::tid = ctid);
CREATE PUBLICATION pub_err FOR TABLE pub_t1 WHERE (n = 1), pub_t1;
CREATE PUBLICATION pub_err FOR TABLE pub_t1 (id), pub_t1;
CREATE PUBLICATION pub_err FOR TABLES IN SCHEMA pubtest_s, TABLE pub_t1 (id);
CREATE PUBLICATION pub_ok FOR TABLE pub_t1 WHERE (COALESCE(data, 'x') = 'x' AND n IN (1, 2) AND length(data) < 6);
\dRp+ pub_ok
DROP PUBLICATION pub_ok;

-- ALTER ... ADD / DROP / SET
ALTER PUBLICATION pub_default ADD TABLE pub_nokey;
ALTER PUBLICATION pub_default ADD TABLE pub_nokey;
ALTER PUBLICATION pub_default ADD TABLES IN SCHEMA pubtest_s;
ALTER PUBLICATION pub_default ADD TABLES IN SCHEMA pubtest_s;
ALTER PUBLICATION pub_default DROP TABLE pub_t1;
ALTER PUBLICATION pub_default DROP TABLE pub_nokey WHERE (a > 1);
ALTER PUBLICATION pub_default DROP TABLES IN SCHEMA public;
\dRp+ pub_default
ALTER PUBLICATION pub_default SET TABLE pub_t1 (id, data);
\dRp+ pub_default
ALTER PUBLICATION pub_default DROP TABLE pub_t1;
ALTER PUBLICATION pub_default SET TABLES IN SCHEMA pubtest_s, pubtest_s;
ALTER PUBLICATION pub_default ADD TABLE pub_t1 (id);
\dRp+ pub_default
ALTER PUBLICATION pub_default SET TABLE pub_t1 (id);
ALTER PUBLICATION pub_default ADD TABLES IN SCHEMA pubtest_s;
ALTER PUBLICATION no_such_pub ADD TABLE pub_t1;

-- FOR ALL TABLES
CREATE PUBLICATION pub_all FOR ALL TABLES WITH (publish = 'insert');
ALTER PUBLICATION pub_all ADD TABLE pub_t1;
ALTER PUBLICATION pub_all DROP TABLES IN SCHEMA pubtest_s;
\dRp+ pub_all
\d pub_nokey
SELECT tablename FROM pg_publication_tables WHERE pubname = 'pub_all' ORDER BY 1;

-- UPDATE and DELETE of published tables need a replica identity
INSERT INTO pub_nokey VALUES (1, 2);
UPDATE pub_nokey SET b = 3;
DELETE FROM pub_nokey;
ALTER TABLE pub_nokey REPLICA IDENTITY FULL;
UPDATE pub_nokey SET b = 3;
DELETE FROM pub_nokey;
INSERT INTO pub_t1 VALUES (1, 'x', 11);
UPDATE pub_t1 SET data = 'y';
ALTER PUBLICATION pub_tables SET TABLE pub_t1 WHERE (n > 10);
UPDATE pub_t1 SET data = 'z';
ALTER PUBLICATION pub_tables SET TABLE pub_t1 (data, n);
UPDATE pub_t1 SET data = 'z';
DELETE FROM pub_t1;
ALTER PUBLICATION pub_tables SET (publish = 'insert');
ALTER PUBLICATION pub_both SET (publish = 'insert');
UPDATE pub_t1 SET data = 'w';
SELECT * FROM pub_t1;

-- dependencies: columns, tables and schemas in publications
ALTER TABLE pub_t1 DROP COLUMN n;
ALTER PUBLICATION pub_tables SET TABLE pub_t1;
ALTER TABLE pub_t1 DROP COLUMN n;
DROP TABLE pub_nokey;
SELECT p.pubname, r.prrelid::regclass FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid ORDER BY 1, 2;
DROP SCHEMA pubtest_s CASCADE;
SELECT count(*) FROM pg_publication_namespace;
\dRp+ pub_schema

-- rename, owner, privileges
ALTER PUBLICATION pub_ins RENAME TO pub_tables;
ALTER PUBLICATION pub_ins RENAME TO pub_insert;
ALTER PUBLICATION pub_insert OWNER TO pubtest_plain;
\dRp pub_insert
SET ROLE pubtest_plain;
CREATE PUBLICATION pub_mine;
ALTER PUBLICATION pub_tables RENAME TO pub_x;
DROP PUBLICATION pub_tables;
RESET ROLE;
ALTER PUBLICATION pub_all OWNER TO pubtest_plain;
DROP PUBLICATION pub_nope;
DROP PUBLICATION IF EXISTS pub_nope;
DROP PUBLICATION pub_default, pub_insert, pub_tables, pub_schema, pub_both, pub_all;
\dRp

-- subscriptions
CREATE SUBSCRIPTION sub1 CONNECTION 'dbname=nowhere' PUBLICATION p1, p2 WITH (connect = false);
CREATE SUBSCRIPTION sub1 CONNECTION 'dbname=nowhere' PUBLICATION p1 WITH (connect = false);
CREATE SUBSCRIPTION sub2 CONNECTION 'nowhere' PUBLICATION p1;
CREATE SUBSCRIPTION sub2 CONNECTION 'bogus_option=1' PUBLICATION p1;
CREATE SUBSCRIPTION sub2 CONNECTION 'port=-1' PUBLICATION p1;
CREATE SUBSCRIPTION sub2 CONNECTION 'dbname=nowhere' PUBLICATION p1, p1 WITH (connect = false);
CREATE SUBSCRIPTION sub2 CONNECTION 'dbname=nowhere' PUBLICATION p1 WITH (connect = false, enabled = true);
CREATE SUBSCRIPTION sub2 CONNECTION 'dbname=nowhere' PUBLICATION p1 WITH (slot_name = NONE);
CREATE SUBSCRIPTION sub2 CONNECTION 'dbname=nowhere' PUBLICATION p1 WITH (connect = false, binary = maybe);
CREATE SUBSCRIPTION sub2 CONNECTION 'dbname=nowhere' PUBLICATION p1 WITH (connect = false, nonsense = 1);
CREATE SUBSCRIPTION sub2 CONNECTION 'dbname=nowhere' PUBLICATION p1 WITH (slot_name = NONE, connect = false, streaming = true, two_phase = true);
BEGIN;
CREATE SUBSCRIPTION sub3 CONNECTION 'dbname=nowhere' PUBLICATION p1 WITH (create_slot);
ROLLBACK;
COMMENT ON SUBSCRIPTION sub1 IS 'first';
SELECT subname, subenabled, subslotname, subpublications, obj_description(oid, 'pg_subscription') FROM pg_subscription ORDER BY 1;
\dRs
\dRs+
ALTER SUBSCRIPTION sub1 ADD PUBLICATION p3 WITH (refresh = false);
ALTER SUBSCRIPTION sub1 ADD PUBLICATION p3 WITH (refresh = false);
ALTER SUBSCRIPTION sub1 DROP PUBLICATION p9 WITH (refresh = false);
ALTER SUBSCRIPTION sub1 DROP PUBLICATION p1, p2, p3 WITH (refresh = false);
ALTER SUBSCRIPTION sub1 DROP PUBLICATION p2 WITH (refresh = false);
ALTER SUBSCRIPTION sub1 SET PUBLICATION p5 WITH (refresh = false);
ALTER SUBSCRIPTION sub1 CONNECTION 'dbname=elsewhere';
ALTER SUBSCRIPTION sub1 CONNECTION 'elsewhere';
ALTER SUBSCRIPTION sub1 SET (synchronous_commit = remote_apply, binary = true, disable_on_error = true);
ALTER SUBSCRIPTION sub1 SET (synchronous_commit = sometimes);
ALTER SUBSCRIPTION sub1 SET (slot_name = '');
ALTER SUBSCRIPTION sub1 SET (two_phase = false);
ALTER SUBSCRIPTION sub1 SKIP (lsn = '0/ABC');
ALTER SUBSCRIPTION sub1 SKIP (lsn = '0/0');
ALTER SUBSCRIPTION sub1 REFRESH PUBLICATION;
ALTER SUBSCRIPTION sub2 ENABLE;
ALTER SUBSCRIPTION sub1 RENAME TO sub2;
ALTER SUBSCRIPTION sub1 RENAME TO sub_renamed;
ALTER SUBSCRIPTION sub_renamed OWNER TO pubtest_plain;
\dRs+
BEGIN;
DROP SUBSCRIPTION sub_renamed;
ROLLBACK;
ALTER SUBSCRIPTION sub_renamed SET (slot_name = NONE);
DROP SUBSCRIPTION sub_renamed;
DROP SUBSCRIPTION sub2;
DROP SUBSCRIPTION sub2;
DROP SUBSCRIPTION IF EXISTS sub2;
SET SESSION AUTHORIZATION pubtest_plain;
CREATE SUBSCRIPTION sub4 CONNECTION 'dbname=nowhere' PUBLICATION p1 WITH (connect = false);
RESET SESSION AUTHORIZATION;
DROP TABLE pub_t1, pub_unlogged;
DROP VIEW pub_v;
DROP ROLE pubtest_owner;
DROP ROLE pubtest_plain;
