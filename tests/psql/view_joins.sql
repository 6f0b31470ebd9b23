-- View definitions over joins as PostgreSQL prints them: columns of an
-- aliased join by the join's name, merged USING columns of an unnamed
-- join by their bare name, inner-join USING columns as the input that
-- needs no coercion, and * and NATURAL JOIN fixed when the view is made.
CREATE TABLE vj2 (a int, b int, c int);
CREATE TABLE vj3 (ax int8, b int2, c numeric);
CREATE TABLE vj4 (ay int, b int, q int);
CREATE VIEW vj_v1 AS SELECT * FROM vj2 NATURAL JOIN vj3;
CREATE VIEW vj_v1a AS SELECT * FROM (vj2 NATURAL JOIN vj3) j;
CREATE VIEW vj_v2 AS SELECT * FROM vj2 JOIN vj3 USING (b, c) JOIN vj4 USING (b);
CREATE VIEW vj_v2a AS SELECT * FROM (vj2 JOIN vj3 USING (b, c) JOIN vj4 USING (b)) j;
CREATE VIEW vj_v3 AS SELECT * FROM vj2 JOIN vj3 USING (b, c) FULL JOIN vj4 USING (b);
SELECT pg_get_viewdef('vj_v1', true);
SELECT pg_get_viewdef('vj_v1a', true);
SELECT pg_get_viewdef('vj_v2', true);
SELECT pg_get_viewdef('vj_v2a', true);
SELECT pg_get_viewdef('vj_v3', true);
ALTER TABLE vj2 ADD COLUMN d int;
ALTER TABLE vj3 ADD COLUMN d int;
SELECT pg_get_viewdef('vj_v1', true);
SELECT * FROM vj_v1;
CREATE TABLE vj5 (a int, b int);
CREATE TABLE vj6 (c int, d int);
CREATE VIEW vj_vv1 AS SELECT * FROM (vj5 CROSS JOIN vj6) j(aa, bb, cc, dd);
SELECT pg_get_viewdef('vj_vv1', true);
CREATE TABLE vj7 (e int, f int);
CREATE TABLE vj8 (g int, h int);
CREATE VIEW vj_same AS SELECT * FROM (SELECT * FROM (vj5 CROSS JOIN vj6) same) ss, (vj7 CROSS JOIN vj8) same;
\d+ vj_same
CREATE VIEW vj_where AS SELECT j.a, count(*) FROM (vj5 JOIN vj6 ON vj5.a = vj6.c) j WHERE j.d > 0 GROUP BY j.a HAVING max(j.b) > 1 ORDER BY j.a;
SELECT pg_get_viewdef('vj_where', true);
