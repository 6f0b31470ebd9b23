-- Object identifier types: reg* input looks names up when the statement
-- is analyzed (errors point at the literal), output prints names and
-- signatures, typename(x) is a cast when no function takes x, and the
-- to_reg* functions answer NULL for a missing object.
CREATE TABLE rt_tab (a int);
SELECT 'rt_tab'::regclass, 'public.rt_tab'::regclass, 'int4'::regtype, 'now'::regproc;
SELECT 'abs(numeric)'::regprocedure, 'abs(int4)'::regprocedure::regproc, 'int4pl'::regproc::regprocedure;
SELECT '+(int4,int4)'::regoperator, '+(int4,int4)'::regoperator::regoper, '||/'::regoper, '||/'::regoper::regoperator;
SELECT '-(NONE,int4)'::regoperator, 'pg_catalog."POSIX"'::regcollation, 'pg_toast'::regnamespace;
SELECT '-'::regclass, '0'::regproc, '1259'::regclass;
SELECT regoper('||/'), regoperator('+(int4,int4)'), regproc('now'), regprocedure('abs(numeric)');
SELECT regclass('pg_class'), regtype('int4'), regcollation('"POSIX"'), regnamespace('pg_catalog');
SELECT to_regoper('||/'), to_regoperator('+(int4,int4)'), to_regproc('now'), to_regprocedure('abs(numeric)');
SELECT to_regcollation('"POSIX"'), to_regnamespace('pg_catalog'), to_regrole('postgres');
SELECT to_regoper('no_such'), to_regoperator('+(int4,no_such_type)'), to_regproc('no_such'), to_regprocedure('abs(no_such)');
SELECT to_regcollation('no_such'), to_regnamespace('no_such'), to_regrole('no_such'), to_regproc('abs');
SELECT 'no_such'::regclass;
SELECT 'no_schema.rt_tab'::regclass;
SELECT 'no_such'::regproc;
SELECT 'abs'::regproc;
SELECT 'abs(no_such)'::regprocedure;
SELECT 'no_such'::regoper;
SELECT '+(int4)'::regoperator;
SELECT '+(int4,int4,int4)'::regoperator;
SELECT 'no_such'::regcollation;
SELECT 'no_such'::regnamespace;
SELECT 'foo..bar'::regclass;
SELECT to_regoperator('+(int4)');
SELECT regoper('no_such');
SELECT int4('42'), text(42), pg_catalog.int8(7::int2);
SELECT count(*) FROM pg_class WHERE oid = 'rt_tab'::regclass;
