-- psql's role listings (\du, \dg, \drds-free parts) and privilege listing
-- (\dp) over roles that are members of one another: the "Member of"
-- column reads pg_auth_members. Roles are cluster-wide: names start with
-- psql_roles_ and the script drops them.
CREATE ROLE psql_roles_staff;
CREATE ROLE psql_roles_audit NOINHERIT CONNECTION LIMIT 3;
CREATE ROLE psql_roles_ann LOGIN CREATEDB IN ROLE psql_roles_staff;
CREATE ROLE psql_roles_bob LOGIN ROLE psql_roles_ann ADMIN psql_roles_staff;
GRANT psql_roles_audit TO psql_roles_staff, psql_roles_ann WITH ADMIN OPTION;
GRANT psql_roles_ann TO psql_roles_staff;
GRANT psql_roles_audit TO psql_roles_ann;
CREATE TABLE roles_t (id int, v text);
GRANT SELECT, INSERT ON roles_t TO psql_roles_staff;
GRANT SELECT ON roles_t TO psql_roles_bob WITH GRANT OPTION;
ALTER TABLE roles_t OWNER TO psql_roles_ann;
COMMENT ON ROLE psql_roles_ann IS 'Ann, who audits';
\du psql_roles_*
\dg psql_roles_*
\du+ psql_roles_a*
\dp roles_t
SET ROLE psql_roles_bob;
SELECT current_user, pg_has_role('psql_roles_staff', 'MEMBER') AS staff, pg_has_role('psql_roles_audit', 'USAGE') AS audit;
SELECT * FROM roles_t;
RESET ROLE;
REVOKE psql_roles_audit FROM psql_roles_ann;
REVOKE ADMIN OPTION FOR psql_roles_audit FROM psql_roles_staff;
\du psql_roles_*
DROP TABLE roles_t;
DROP ROLE psql_roles_staff;
\du psql_roles_*
DROP ROLE psql_roles_audit, psql_roles_ann, psql_roles_bob;
\du psql_roles_*
