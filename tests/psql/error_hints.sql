-- Error positions and hints as PostgreSQL reports them: the closest
-- column names for a misspelled one (errorMissingColumn), cursors inside
-- CREATE TABLE's DEFAULT and CHECK expressions and CREATE INDEX's keys,
-- none for names utility statements resolve (COMMENT, VACUUM, ALTER),
-- and enum settings' messages.
CREATE TABLE hint_t (id int, name text, value int, valve int);
CREATE TABLE hint_u (id int, nome text);
SELECT nam FROM hint_t;
SELECT hint_t.nam FROM hint_t;
SELECT hint_u.name FROM hint_t, hint_u;
SELECT hint_x.name FROM hint_t hint_x;
SELECT valu FROM hint_t;
SELECT vale FROM hint_t;
SELECT nam FROM hint_t, hint_u;
SELECT zzzzzz FROM hint_t;
SELECT * FROM hint_t t JOIN hint_u u ON t.id = u.id WHERE nome2 = 'x';
SELECT * FROM hint_t t JOIN (SELECT id FROM hint_u WHERE t.id = 1) s ON true;
SELECT * FROM hint_u, (SELECT nome) s;
SELECT hint_tt.name FROM hint_t;
SELECT hint_tt.nam FROM hint_t;
SELECT * FROM hint_t t1 JOIN hint_t t2 ON t1.id = t3.id JOIN hint_t t3 ON t3.id = t2.vale;
-- positions inside CREATE TABLE, none for ALTER TABLE
CREATE TABLE hint_d (id int DEFAULT (id));
CREATE TABLE hint_d (a int DEFAULT (avg(1)));
CREATE TABLE hint_d (a int DEFAULT (select 1));
CREATE TABLE hint_d (a int DEFAULT (generate_series(1,3)));
CREATE TABLE hint_d (a int, CHECK (b > 0));
CREATE TABLE hint_d (a int, CHECK (a > 'x'));
ALTER TABLE hint_t ADD CHECK (nam IS NOT NULL);
ALTER TABLE hint_t ADD COLUMN extra int DEFAULT (nosuch + 1);
ALTER TABLE hint_t ALTER COLUMN value SET DEFAULT (avg(1));
CREATE INDEX ON hint_t ((nam || 'x'));
CREATE INDEX ON hint_t (id) WHERE nam > '';
INSERT INTO hint_t (id) VALUES (DEFAULT, DEFAULT);
-- utility statements name no position
COMMENT ON TABLE hint_nosuch IS 'x';
VACUUM hint_nosuch;
ALTER TABLE hint_nosuch RENAME TO hint_other;
LOCK TABLE hint_nosuch;
GRANT SELECT ON hint_nosuch TO PUBLIC;
SELECT * FROM hint_nosuch;
-- enum settings take boolean spellings when they have on and off
SET constraint_exclusion = 1;
SHOW constraint_exclusion;
SET constraint_exclusion = no;
SHOW constraint_exclusion;
SET constraint_exclusion = maybe;
SET password_encryption = true;
RESET constraint_exclusion;
