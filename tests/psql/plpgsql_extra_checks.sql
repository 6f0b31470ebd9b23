-- PL/pgSQL's run-time extra checks as warnings (plpgsql.extra_warnings)
-- and plpgsql.print_strict_params, whose DETAIL and HINT lines only a
-- psql transcript shows.
CREATE TABLE pxc (a int);
INSERT INTO pxc VALUES (1), (2);

SET plpgsql.extra_warnings TO 'too_many_rows';
DO $$ DECLARE x int; BEGIN SELECT a FROM pxc INTO x; RAISE NOTICE 'x = %', x; END $$;
SET plpgsql.extra_errors TO 'too_many_rows';
DO $$ DECLARE x int; BEGIN SELECT a FROM pxc INTO x; END $$;
RESET plpgsql.extra_errors;
RESET plpgsql.extra_warnings;

SET plpgsql.extra_warnings TO 'strict_multi_assignment';
DO $$ DECLARE x int; y int; BEGIN SELECT 1 INTO x, y; SELECT 1, 2 INTO x, y; SELECT 1, 2, 3 INTO x, y; END $$;
SET plpgsql.extra_errors TO 'strict_multi_assignment';
DO $$ DECLARE x int; y int; BEGIN SELECT 1, 2, 3 INTO x, y; END $$;
RESET plpgsql.extra_errors;
RESET plpgsql.extra_warnings;

-- INTO of a modifying statement and of EXECUTE ... INTO STRICT
DO $$ DECLARE x int; BEGIN UPDATE pxc SET a = a RETURNING a INTO x; END $$;
DO $$ DECLARE x int; BEGIN EXECUTE 'SELECT a FROM pxc' INTO STRICT x; END $$;

-- print_strict_params: the variables the statement uses, or EXECUTE's USING values
SET plpgsql.print_strict_params TO true;
CREATE FUNCTION pxc_strict(p1 int, p3 text) RETURNS int AS $$
DECLARE x int;
BEGIN
  SELECT a FROM pxc WHERE a > p1 - 10 AND (p3 IS NULL OR p3 <> '') INTO STRICT x;
  RETURN x;
END $$ LANGUAGE plpgsql;
SELECT pxc_strict(2, 'it''s');
SELECT pxc_strict(2, NULL);
CREATE FUNCTION pxc_none(p1 int) RETURNS int AS $$
DECLARE x int;
BEGIN SELECT a FROM pxc WHERE a > p1 INTO STRICT x; RETURN x; END $$ LANGUAGE plpgsql;
SELECT pxc_none(5);
CREATE FUNCTION pxc_noparams() RETURNS int AS $$
DECLARE x int;
BEGIN SELECT a FROM pxc INTO STRICT x; RETURN x; END $$ LANGUAGE plpgsql;
SELECT pxc_noparams();
CREATE FUNCTION pxc_dyn(p1 int) RETURNS int AS $$
DECLARE x int;
BEGIN EXECUTE 'SELECT a FROM pxc WHERE a > $1 - 10 AND $2 = ''foo''' INTO STRICT x USING p1, 'foo'; RETURN x; END $$ LANGUAGE plpgsql;
SELECT pxc_dyn(0);
RESET plpgsql.print_strict_params;
-- the setting is read when the function is compiled; the option overrides it
CREATE FUNCTION pxc_opt(p1 int) RETURNS int AS $$
#print_strict_params on
DECLARE x int;
BEGIN SELECT a FROM pxc WHERE a > p1 INTO STRICT x; RETURN x; END $$ LANGUAGE plpgsql;
SELECT pxc_opt(0);
CREATE FUNCTION pxc_off(p1 int) RETURNS int AS $$
DECLARE x int;
BEGIN SELECT a FROM pxc WHERE a > p1 INTO STRICT x; RETURN x; END $$ LANGUAGE plpgsql;
SELECT pxc_off(0);

-- shadowed_variables as an error points into the CREATE statement
SET plpgsql.extra_errors TO 'shadowed_variables';
CREATE FUNCTION pxc_shadow(f1 int) RETURNS int AS $$ DECLARE f1 int; BEGIN RETURN 1; END $$ LANGUAGE plpgsql;
RESET plpgsql.extra_errors;
