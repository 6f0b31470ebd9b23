-- COPY FROM STDIN and TO STDOUT in text and CSV formats, with their
-- options, and PostgreSQL's errors for bad rows (the whole COPY fails).
CREATE TABLE t (id serial PRIMARY KEY, a int, b text, c numeric(5,2), d date);
COPY t (a, b, c, d) FROM STDIN;
1	hello	1.5	2024-01-01
2	tab\there	\N	\N
3	back\\slash	2	2024-02-29
\N	new\nline	3.14	2024-03-01
5	octal \101\x42 and \q	0	2024-01-05
\.
SELECT * FROM t ORDER BY id;
COPY t TO STDOUT;
COPY t (b, a) TO STDOUT WITH (FORMAT csv, HEADER);
COPY (SELECT id, b FROM t WHERE id > 2 ORDER BY id) TO STDOUT WITH (FORMAT csv, FORCE_QUOTE *);
COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER true);
a,b
10,"quoted, comma"
11,"multi
line"
12,""
13,
14,"say ""hi"""
\.
SELECT id, a, b IS NULL AS null_b, b FROM t WHERE a >= 10 ORDER BY id;
COPY t (a, b) FROM STDIN WITH (FORMAT csv, DELIMITER ';', QUOTE '''', NULL 'NULL', FORCE_NOT_NULL (b));
20;'x;y'
21;NULL
22;
\.
SELECT id, a, b IS NULL AS null_b, b FROM t WHERE a >= 20 ORDER BY id;
COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER match);
a,b
30,ok
\.
COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER match);
a,c
31,bad
\.
-- Bad rows fail the whole COPY; nothing of it stays.
COPY t (a, b) FROM STDIN;
40	fine
x	y
\.
COPY t (a, b) FROM STDIN;
41
\.
COPY t (a, b) FROM STDIN;
42	a	extra
\.
COPY t (a, c) FROM STDIN;
43	12345.678
\.
COPY t (id, a) FROM STDIN;
1	44
\.
COPY t (a, b) FROM STDIN (FORMAT csv);
45,"unterminated
\.
SELECT count(*), max(a) FROM t;
COPY t (a, a) FROM STDIN;
COPY t (zz) FROM STDIN;
COPY t FROM STDIN (DELIMITER 'ab');
COPY t FROM STDIN (QUOTE '"');
COPY t FROM STDIN (FORMAT csv, FORCE_QUOTE (a));
COPY t TO STDOUT (FORMAT csv, FORCE_NOT_NULL (a));
COPY t FROM STDIN (FORMAT csv, DELIMITER ',', DELIMITER ';');
-- FREEZE needs a table created or truncated in the transaction.
COPY t FROM STDIN (FREEZE);
1	1	x	1	2024-01-01
\.
BEGIN;
CREATE TABLE f (x int, y text DEFAULT 'dflt');
COPY f (x) FROM STDIN (FREEZE);
1
2
\.
COMMIT;
BEGIN;
TRUNCATE f;
COPY f FROM STDIN (FREEZE, FORMAT csv);
3,three
\.
COMMIT;
SELECT * FROM f;
CREATE VIEW v AS SELECT 1 AS one;
COPY v TO STDOUT;
COPY v FROM STDIN;
1
\.
COPY t (id, b) TO STDOUT (DELIMITER '|', NULL 'NULL');
COPY (SELECT E'a\tb', 'c\d', NULL::text, '', E'x\ny') TO STDOUT;
COPY (SELECT E'a\tb', 'c,d', NULL::text, '', '"q"', E'x\ny') TO STDOUT (FORMAT csv);
COPY (SELECT 1 AS x, 'y' AS "Col Y") TO STDOUT (HEADER);
COPY (SELECT 1 AS x, 'y' AS "Col, Y") TO STDOUT (FORMAT csv, HEADER);
COPY (SELECT * FROM generate_series(1, 3)) TO STDOUT;
COPY (SELECT 1 WHERE false) TO STDOUT;
COPY t FROM '/nonexistent/file';
COPY t TO 'relative/file';
-- \copy runs COPY ... FROM STDIN / TO STDOUT from the client.
\copy t (a, b) from stdin
50	via backslash copy
\.
\copy (SELECT a, b FROM t WHERE a = 50) to stdout with csv
