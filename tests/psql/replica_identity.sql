-- ALTER TABLE ... REPLICA IDENTITY: PostgreSQL's checks on the index,
-- pg_class.relreplident and pg_index.indisreplident, and how `\d` shows them.
CREATE TABLE ri (id serial PRIMARY KEY, a text NOT NULL, b text NOT NULL, c text,
  CONSTRAINT ri_ab_defer UNIQUE (a, b) DEFERRABLE, CONSTRAINT ri_ab UNIQUE (a, b));
CREATE TABLE ri_other (id int PRIMARY KEY);
CREATE INDEX ri_a ON ri (a);
CREATE UNIQUE INDEX ri_ac ON ri (a, c);
CREATE INDEX ri_hash ON ri USING hash (c);
CREATE UNIQUE INDEX ri_expr ON ri (a, (b || 'x'));
CREATE UNIQUE INDEX ri_part ON ri (a, b) WHERE b <> 'x';
SELECT relname, relreplident FROM pg_class WHERE relname IN ('ri', 'ri_pkey', 'ri_id_seq', 'pg_class') ORDER BY 1;
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_a;
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_ac;
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_hash;
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_expr;
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_part;
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_other_pkey;
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_ab_defer;
ALTER TABLE ri REPLICA IDENTITY USING INDEX no_such_index;
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_pkey;
SELECT relreplident FROM pg_class WHERE oid = 'ri'::regclass;
\d ri
ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_ab;
SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'ri'::regclass AND indisreplident;
ALTER TABLE ri ALTER COLUMN a DROP NOT NULL;
ALTER TABLE ri ALTER COLUMN c DROP NOT NULL;
ALTER TABLE ri REPLICA IDENTITY FULL;
SELECT relreplident, (SELECT count(*) FROM pg_index WHERE indrelid = 'ri'::regclass AND indisreplident) FROM pg_class WHERE oid = 'ri'::regclass;
\d+ ri
ALTER TABLE ri REPLICA IDENTITY NOTHING;
\d+ ri
ALTER TABLE ri REPLICA IDENTITY DEFAULT;
SELECT relreplident FROM pg_class WHERE oid = 'ri'::regclass;
ALTER TABLE ri_id_seq REPLICA IDENTITY FULL;
