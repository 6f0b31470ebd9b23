-- Table inheritance as psql shows it: the NOTICEs of merged columns and
-- constraints, the DETAIL of DROP, and \d's "Inherits" / "Child tables"
-- footers. (Query results are in tests/slt/inheritance.slt.)
CREATE TABLE a (aa text);
CREATE TABLE b (bb text) INHERITS (a);
CREATE TABLE c (cc text) INHERITS (a);
CREATE TABLE d (dd text) INHERITS (b, c, a);
CREATE TABLE e (aa text, ee int) INHERITS (a);
CREATE TABLE f (x int, aa text) INHERITS (a);
CREATE TABLE g (aa int) INHERITS (a);
\d a
\d+ a
\d d
\d+ d
ALTER TABLE b ADD COLUMN n int;
ALTER TABLE a ADD COLUMN n int;
ALTER TABLE a ADD COLUMN m int CHECK (m > 0);
\d b
DROP TABLE a;
DROP TABLE b;
DROP TABLE a CASCADE;

-- CHECK constraints merged by name.
CREATE TABLE p (f1 int, CONSTRAINT pos CHECK (f1 > 0));
CREATE TABLE q (f1 int, CONSTRAINT pos CHECK (f1 > 0)) INHERITS (p);
CREATE TABLE r (CONSTRAINT pos CHECK (f1 > 1)) INHERITS (p);
CREATE TABLE r (CONSTRAINT pos CHECK (f1 > 0) NO INHERIT) INHERITS (p);
CREATE TABLE s () INHERITS (p);
ALTER TABLE s ADD CONSTRAINT two CHECK (f1 < 10);
ALTER TABLE p ADD CONSTRAINT two CHECK (f1 < 10);
\d s
ALTER TABLE p DROP CONSTRAINT two;
\d s
DROP TABLE p CASCADE;

-- Conflicting defaults.
CREATE TABLE d1 (t int DEFAULT 1);
CREATE TABLE d2 (t int DEFAULT 2);
CREATE TABLE dc () INHERITS (d1, d2);
DROP TABLE d1, d2;
