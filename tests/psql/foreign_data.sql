-- SQL/MED objects: foreign-data wrappers, servers and user mappings with
-- their OPTIONS, the postgresql_fdw_validator checks, USAGE privileges,
-- owners, renames, comments, DROP ... CASCADE, the catalogs and
-- information_schema views over them, and psql's \dew, \des, \deu.
-- Roles are cluster-wide: names start with psql_fdw_ and the script drops them.
CREATE ROLE psql_fdw_admin LOGIN SUPERUSER;
SET SESSION AUTHORIZATION psql_fdw_admin;
CREATE ROLE psql_fdw_user;
CREATE ROLE psql_fdw_other;
CREATE ROLE psql_fdw_super SUPERUSER;
CREATE FOREIGN DATA WRAPPER psql_fdw_dummy;
COMMENT ON FOREIGN DATA WRAPPER psql_fdw_dummy IS 'useless';
CREATE FOREIGN DATA WRAPPER psql_fdw_pg VALIDATOR postgresql_fdw_validator;
SELECT fdwname, fdwhandler::regproc, fdwvalidator::regproc, fdwoptions FROM pg_foreign_data_wrapper WHERE fdwname LIKE 'psql_fdw%' ORDER BY 1;
CREATE FOREIGN DATA WRAPPER psql_fdw_foo VALIDATOR bar;
CREATE FOREIGN DATA WRAPPER psql_fdw_foo HANDLER now;
CREATE FOREIGN DATA WRAPPER psql_fdw_foo VALIDATOR postgresql_fdw_validator VALIDATOR postgresql_fdw_validator;
CREATE FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (testing '1', testing '2');
CREATE FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (testing '1', another '2');
CREATE FOREIGN DATA WRAPPER psql_fdw_foo;
SET ROLE psql_fdw_user;
CREATE FOREIGN DATA WRAPPER psql_fdw_bar;
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (ADD d '5');
RESET ROLE;
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (SET c '4');
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (DROP c);
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (ADD x '1', DROP x);
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (DROP testing, SET another '3', ADD c '4');
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (another '4');
ALTER FOREIGN DATA WRAPPER psql_fdw_foo VALIDATOR postgresql_fdw_validator;
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (ADD e '6');
ALTER FOREIGN DATA WRAPPER psql_fdw_foo NO VALIDATOR;
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OWNER TO psql_fdw_user;
ALTER FOREIGN DATA WRAPPER psql_fdw_foo OWNER TO psql_fdw_super;
ALTER FOREIGN DATA WRAPPER psql_fdw_foo RENAME TO psql_fdw_foo1;
ALTER FOREIGN DATA WRAPPER psql_fdw_foo1 RENAME TO psql_fdw_dummy;
ALTER FOREIGN DATA WRAPPER psql_fdw_foo1 RENAME TO psql_fdw_foo;
\dew+ psql_fdw*
DROP ROLE psql_fdw_super;
DROP FOREIGN DATA WRAPPER psql_fdw_nonexistent;
DROP FOREIGN DATA WRAPPER IF EXISTS psql_fdw_nonexistent;
-- servers
CREATE SERVER psql_fdw_s1 FOREIGN DATA WRAPPER psql_fdw_nowhere;
CREATE SERVER psql_fdw_s1 FOREIGN DATA WRAPPER psql_fdw_foo;
CREATE SERVER psql_fdw_s1 FOREIGN DATA WRAPPER psql_fdw_foo;
CREATE SERVER IF NOT EXISTS psql_fdw_s1 FOREIGN DATA WRAPPER psql_fdw_foo;
CREATE SERVER psql_fdw_s2 TYPE 'oracle' VERSION '17.0' FOREIGN DATA WRAPPER psql_fdw_foo OPTIONS (host 'a', dbname 'b');
CREATE SERVER psql_fdw_s8 FOREIGN DATA WRAPPER psql_fdw_pg OPTIONS (foo '1');
CREATE SERVER psql_fdw_s8 FOREIGN DATA WRAPPER psql_fdw_pg OPTIONS (host 'localhost', dbname 's8db');
COMMENT ON SERVER psql_fdw_s1 IS 'foreign server';
SET ROLE psql_fdw_user;
CREATE SERVER psql_fdw_t1 FOREIGN DATA WRAPPER psql_fdw_foo;
RESET ROLE;
GRANT USAGE ON FOREIGN DATA WRAPPER psql_fdw_foo TO psql_fdw_other;
GRANT psql_fdw_other TO psql_fdw_user;
GRANT SELECT ON FOREIGN DATA WRAPPER psql_fdw_foo TO psql_fdw_user;
SET ROLE psql_fdw_user;
CREATE SERVER psql_fdw_t1 FOREIGN DATA WRAPPER psql_fdw_foo;
ALTER SERVER psql_fdw_s1 VERSION '1.1';
ALTER SERVER psql_fdw_t1 VERSION '2.0' OPTIONS (a '1');
ALTER SERVER psql_fdw_t1 OWNER TO psql_fdw_admin;
RESET ROLE;
ALTER SERVER psql_fdw_s8 OPTIONS (foo '1');
ALTER SERVER psql_fdw_s8 OPTIONS (connect_timeout '30', SET dbname 'db1', DROP host);
ALTER SERVER psql_fdw_s0 OPTIONS (a '1');
GRANT USAGE ON FOREIGN SERVER psql_fdw_s8 TO psql_fdw_user WITH GRANT OPTION;
ALTER SERVER psql_fdw_s2 RENAME TO psql_fdw_s3;
\des+ psql_fdw*
-- user mappings
CREATE USER MAPPING FOR psql_fdw_missing SERVER psql_fdw_s1;
CREATE USER MAPPING FOR current_user SERVER psql_fdw_nowhere;
CREATE USER MAPPING FOR current_user SERVER psql_fdw_s1;
CREATE USER MAPPING FOR current_user SERVER psql_fdw_s1;
CREATE USER MAPPING IF NOT EXISTS FOR current_user SERVER psql_fdw_s1;
CREATE USER MAPPING FOR public SERVER psql_fdw_s3 OPTIONS ("this mapping" 'is public');
CREATE USER MAPPING FOR user SERVER psql_fdw_s8 OPTIONS (username 'test');
CREATE USER MAPPING FOR user SERVER psql_fdw_s8 OPTIONS (user 'test', password 'secret');
CREATE USER MAPPING FOR psql_fdw_user SERVER psql_fdw_s8 OPTIONS (user 'u');
SET ROLE psql_fdw_user;
CREATE USER MAPPING FOR public SERVER psql_fdw_s8;
ALTER USER MAPPING FOR current_user SERVER psql_fdw_s8 OPTIONS (SET user 'u2');
SELECT srvname, usename, umoptions FROM pg_user_mappings WHERE srvname LIKE 'psql_fdw%' ORDER BY 1, 2;
RESET ROLE;
ALTER USER MAPPING FOR public SERVER psql_fdw_s1 OPTIONS (gotcha 'true');
ALTER USER MAPPING FOR current_user SERVER psql_fdw_s8 OPTIONS (DROP user, SET password 'public');
\deu+ psql_fdw*
SELECT * FROM information_schema.foreign_data_wrappers WHERE foreign_data_wrapper_name LIKE 'psql_fdw%' ORDER BY 1, 2;
SELECT * FROM information_schema.foreign_data_wrapper_options WHERE foreign_data_wrapper_name LIKE 'psql_fdw%' ORDER BY 1, 2, 3;
SELECT * FROM information_schema.foreign_servers WHERE foreign_server_name LIKE 'psql_fdw%' ORDER BY 1, 2;
SELECT * FROM information_schema.foreign_server_options WHERE foreign_server_name LIKE 'psql_fdw%' ORDER BY 1, 2, 3;
SELECT * FROM information_schema.user_mappings WHERE foreign_server_name LIKE 'psql_fdw%' ORDER BY lower(authorization_identifier), 2, 3;
SELECT * FROM information_schema.user_mapping_options WHERE foreign_server_name LIKE 'psql_fdw%' ORDER BY lower(authorization_identifier), 2, 3, 4;
SELECT * FROM information_schema.usage_privileges WHERE object_type LIKE 'FOREIGN%' AND object_name LIKE 'psql_fdw%' ORDER BY 1, 2, 3, 4, 5;
SELECT * FROM information_schema.role_usage_grants WHERE object_type LIKE 'FOREIGN%' AND object_name LIKE 'psql_fdw%' ORDER BY 1, 2, 3, 4, 5;
SELECT has_foreign_data_wrapper_privilege('psql_fdw_user', 'psql_fdw_foo', 'USAGE'),
       has_foreign_data_wrapper_privilege('psql_fdw_other', 'psql_fdw_foo', 'USAGE WITH GRANT OPTION'),
       has_server_privilege('psql_fdw_user', 'psql_fdw_s8', 'USAGE WITH GRANT OPTION'),
       has_server_privilege('psql_fdw_other', 'psql_fdw_s8', 'USAGE');
SELECT has_server_privilege('psql_fdw_user', 'psql_fdw_s8', 'SELECT');
DROP ROLE psql_fdw_user;
-- drops
DROP USER MAPPING FOR psql_fdw_missing SERVER psql_fdw_s1;
DROP USER MAPPING IF EXISTS FOR psql_fdw_missing SERVER psql_fdw_s1;
DROP USER MAPPING IF EXISTS FOR user SERVER psql_fdw_nowhere;
DROP USER MAPPING IF EXISTS FOR public SERVER psql_fdw_s1;
DROP USER MAPPING FOR public SERVER psql_fdw_s1;
SET ROLE psql_fdw_other;
DROP SERVER psql_fdw_s3;
DROP FOREIGN DATA WRAPPER psql_fdw_foo CASCADE;
RESET ROLE;
DROP SERVER psql_fdw_s3;
DROP SERVER psql_fdw_s3 CASCADE;
DROP FOREIGN DATA WRAPPER psql_fdw_foo;
BEGIN;
DROP FOREIGN DATA WRAPPER psql_fdw_foo CASCADE;
\des psql_fdw*
ROLLBACK;
\des psql_fdw*
-- foreign tables
CREATE FOREIGN TABLE psql_fdw_ft1 () SERVER psql_fdw_nowhere;
CREATE FOREIGN TABLE psql_fdw_ft1 (c1 integer PRIMARY KEY) SERVER psql_fdw_s1;
CREATE FOREIGN TABLE psql_fdw_ft1 (c1 integer, UNIQUE (c1)) SERVER psql_fdw_s1;
CREATE FOREIGN TABLE psql_fdw_ft1 (
    c1 integer OPTIONS ("param 1" 'val1') NOT NULL,
    c2 text OPTIONS (param2 'val2', param3 'val3') CHECK (c2 <> ''),
    c3 date
) SERVER psql_fdw_s1 OPTIONS (delimiter ',', quote '"', "be quoted" 'value');
COMMENT ON FOREIGN TABLE psql_fdw_ft1 IS 'ft1';
COMMENT ON COLUMN psql_fdw_ft1.c1 IS 'ft1.c1';
\d+ psql_fdw_ft1
\det+ psql_fdw*
SELECT * FROM psql_fdw_ft1;
INSERT INTO psql_fdw_ft1 VALUES (1, 'x', NULL);
CREATE INDEX psql_fdw_idx ON psql_fdw_ft1 (c1);
DROP TABLE psql_fdw_ft1;
ALTER FOREIGN TABLE psql_fdw_ft1 ADD COLUMN c4 integer OPTIONS (p1 'v1');
ALTER FOREIGN TABLE psql_fdw_ft1 ADD PRIMARY KEY (c1);
ALTER FOREIGN TABLE psql_fdw_ft1 ALTER COLUMN c4 TYPE char(10) USING '0';
ALTER FOREIGN TABLE psql_fdw_ft1 ALTER COLUMN c4 TYPE text;
ALTER FOREIGN TABLE psql_fdw_ft1 ALTER COLUMN xmin OPTIONS (ADD p1 'v1');
ALTER FOREIGN TABLE psql_fdw_ft1 ALTER COLUMN c4 OPTIONS (SET p1 'V1', ADD p2 'v2');
ALTER FOREIGN TABLE psql_fdw_ft1 OPTIONS (DROP delimiter, SET quote '~', ADD escape '@');
ALTER FOREIGN TABLE psql_fdw_ft1 RENAME TO psql_fdw_ft2;
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'psql_fdw_ft2'::regclass;
SELECT attname, attfdwoptions FROM pg_attribute WHERE attrelid = 'psql_fdw_ft2'::regclass AND attnum > 0 ORDER BY attnum;
SELECT * FROM information_schema.foreign_tables WHERE foreign_table_name LIKE 'psql_fdw%' ORDER BY 1, 2, 3;
SELECT * FROM information_schema.foreign_table_options WHERE foreign_table_name LIKE 'psql_fdw%' ORDER BY 1, 2, 3, 4;
DROP SERVER psql_fdw_s1;
IMPORT FOREIGN SCHEMA s1 FROM SERVER psql_fdw_nowhere INTO public;
IMPORT FOREIGN SCHEMA s1 FROM SERVER psql_fdw_s1 INTO public;
DROP OWNED BY psql_fdw_user, psql_fdw_other;
DROP FOREIGN DATA WRAPPER psql_fdw_foo, psql_fdw_pg, psql_fdw_dummy CASCADE;
\dew psql_fdw*
\deu psql_fdw*
RESET SESSION AUTHORIZATION;
DROP ROLE psql_fdw_user, psql_fdw_other, psql_fdw_super, psql_fdw_admin;
