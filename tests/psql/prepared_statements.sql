prepare p1(int, text) as select $1, $2;
prepare p2 as select 1;
select name, statement, prepare_time <= now(), parameter_types, from_sql, generic_plans >= 0 from pg_prepared_statements order by name;
deallocate p1;
select name from pg_prepared_statements;
deallocate all;
select count(*) from pg_prepared_statements;
