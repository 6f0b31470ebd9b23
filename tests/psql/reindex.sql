-- REINDEX in its forms, with PostgreSQL 15's messages; client_min_messages
-- filtering the NOTICEs and WARNINGs a client sees (INFO always goes).
CREATE TABLE rx (a int PRIMARY KEY, b text UNIQUE, c int);
CREATE INDEX rx_c ON rx (c) WHERE c > 0;
INSERT INTO rx SELECT g, 'v' || g, g % 7 FROM generate_series(1, 500) g;
REINDEX TABLE rx;
REINDEX INDEX rx_c;
REINDEX TABLE CONCURRENTLY rx;
REINDEX (CONCURRENTLY false, VERBOSE off) INDEX rx_b_key;
-- The rebuilt indexes answer as before.
SET enable_seqscan = off;
SELECT a FROM rx WHERE b = 'v42';
SELECT count(*) FROM rx WHERE c = 3;
RESET enable_seqscan;
INSERT INTO rx VALUES (501, 'v1', 1);
\set VERBOSITY terse
REINDEX (VERBOSE) INDEX rx_c;
\set VERBOSITY default
REINDEX (nonsense) TABLE rx;
REINDEX TABLE rx_c;
REINDEX INDEX rx;
REINDEX TABLE no_such_table;
CREATE TABLE rx_plain (x int);
REINDEX TABLE rx_plain;
REINDEX TABLE CONCURRENTLY rx_plain;
CREATE VIEW rx_view AS SELECT 1 AS one;
REINDEX TABLE rx_view;
REINDEX (TABLESPACE no_such_space) TABLE rx;
REINDEX (TABLESPACE pg_default) TABLE rx;
BEGIN;
REINDEX TABLE rx;
REINDEX SCHEMA public;
ROLLBACK;
BEGIN;
REINDEX TABLE CONCURRENTLY rx;
ROLLBACK;
REINDEX SCHEMA no_such_schema;
REINDEX DATABASE no_such_db;
REINDEX SYSTEM CONCURRENTLY no_such_db;
REINDEX TABLE CONCURRENTLY pg_class;
REINDEX SCHEMA CONCURRENTLY pg_catalog;
CREATE SCHEMA rxs;
CREATE TABLE rxs.t (id int PRIMARY KEY, v int);
CREATE INDEX t_v ON rxs.t (v);
INSERT INTO rxs.t VALUES (1, 10), (2, 20);
\set VERBOSITY terse
REINDEX (VERBOSE) SCHEMA rxs;
\set VERBOSITY default
SELECT id FROM rxs.t WHERE v = 20;
CREATE ROLE regress_rx_user;
SET ROLE regress_rx_user;
REINDEX TABLE rx;
REINDEX SCHEMA rxs;
RESET ROLE;
-- client_min_messages
SET client_min_messages = chatty;
SET client_min_messages = warning;
DROP TABLE IF EXISTS no_such_table;
REINDEX TABLE rx_plain;
REINDEX SCHEMA CONCURRENTLY pg_catalog;
SET client_min_messages = error;
REINDEX SCHEMA CONCURRENTLY pg_catalog;
SELECT 1 / 0;
SET client_min_messages = 'NOTICE';
DROP TABLE IF EXISTS no_such_table;
RESET client_min_messages;
DROP ROLE regress_rx_user;
