#!/usr/bin/env bash
# Records PostgreSQL 15's built-in catalog rows (types, casts, operators,
# functions) into crates/sql/src/catalog/builtin/*.tsv. Tusk's analyzer resolves
# functions and operators over exactly these rows, so overload resolution,
# result types and OIDs match PostgreSQL's. Run against any PostgreSQL 15:
#   scripts/gen-builtin-catalog.sh "host=127.0.0.1 port=54321 user=postgres"
set -euo pipefail
conn=${1:?usage: $0 CONNINFO}
out=$(cd "$(dirname "$0")/.." && pwd)/crates/sql/src/catalog/builtin
q() { psql "$conn" -X -A -t -F $'\t' -v ON_ERROR_STOP=1 -c "$1"; }
q "select oid, typname, typlen, typbyval, typtype, typcategory, typispreferred, typdelim, typelem, typarray,
          typinput::oid, typoutput::oid, typreceive::oid, typsend::oid, typalign, typstorage, typcollation
   from pg_type where typnamespace = 11 and typtype in ('b','p','c','r','m') order by oid" > "$out/pg_type.tsv"
q "select castsource, casttarget, castfunc, castcontext, castmethod from pg_cast order by oid" > "$out/pg_cast.tsv"
q "select o.oid, oprname, oprkind, oprleft, oprright, oprresult, oprcode::oid, oprcom, oprnegate
   from pg_operator o order by o.oid" > "$out/pg_operator.tsv"
# Besides pg_catalog's functions, information_schema's _pg_expandarray
# (pgjdbc's metadata queries call it), in Tusk's information_schema
# (namespace 13000) and without its SQL body (Tusk implements it by OID).
# proargnames keeps empty names (the loader splits on single spaces).
q "select p.oid, proname, case when pronamespace = 11 then 11 else 13000 end, prokind, proretset, provolatile,
          proisstrict, prorettype, array_to_string(proargtypes::oid[], ' '), provariadic,
          case when pronamespace = 11 then prosrc else '' end, pronargdefaults,
          coalesce(array_to_string(proallargtypes, ' '), ''), coalesce(array_to_string(proargmodes, ' '), ''),
          coalesce(array_to_string(proargnames, ' '), ''), proparallel, procost, prorows,
          coalesce(pg_get_expr(proargdefaults, 0), '')
   from pg_proc p
   where pronamespace = 11
      or (pronamespace = 'information_schema'::regnamespace and proname in ('_pg_expandarray'))
   order by p.oid" > "$out/pg_proc.tsv"
q "select oid, opcmethod, opcname, opcnamespace, opcowner, opcfamily, opcintype, opcdefault, opckeytype
   from pg_opclass order by oid" > "$out/pg_opclass.tsv"
q "select oid, opfmethod, opfname, opfnamespace, opfowner from pg_opfamily order by oid" > "$out/pg_opfamily.tsv"
q "select oid, amopfamily, amoplefttype, amoprighttype, amopstrategy, amoppurpose, amopopr, amopmethod, amopsortfamily
   from pg_amop order by oid" > "$out/pg_amop.tsv"
q "select oid, amprocfamily, amproclefttype, amprocrighttype, amprocnum, amproc::oid from pg_amproc order by oid" > "$out/pg_amproc.tsv"
# The first four columns are what the analyzer needs; the rest fill pg_aggregate.
q "select aggfnoid::oid, aggkind, aggtranstype, coalesce(agginitval, '\N'), aggnumdirectargs, aggtransfn::oid,
          aggfinalfn::oid, aggcombinefn::oid, aggserialfn::oid, aggdeserialfn::oid, aggmtransfn::oid,
          aggminvtransfn::oid, aggmfinalfn::oid, aggfinalextra, aggmfinalextra, aggfinalmodify, aggmfinalmodify,
          aggsortop, aggtransspace, aggmtranstype, aggmtransspace, coalesce(aggminitval, '\N')
   from pg_aggregate order by aggfnoid::oid" > "$out/pg_aggregate.tsv"
# initdb's comments on built-in functions, operators and types (psql's
# \df+, \do and \dT show them; obj_description reads them).
q "select objoid, classoid, objsubid, description from pg_description
   where classoid in ('pg_proc'::regclass, 'pg_operator'::regclass, 'pg_type'::regclass) and objoid < 16384
   order by classoid, objoid, objsubid" > "$out/pg_description.tsv"

# Settings: every GUC with its boot value, unit, type, context and limits.
q "select name, coalesce(boot_val, ''), coalesce(unit, ''), category, short_desc, context, vartype,
          coalesce(min_val, ''), coalesce(max_val, ''), coalesce(array_to_string(enumvals, ','), ''), coalesce(extra_desc, '')
   from pg_settings order by name" > "$out/pg_settings.tsv"
wc -l "$out"/*.tsv
# System catalogs and views Tusk provides: their columns, with domain types
# resolved to base types as RowDescription reports them.
q "select c.relname, n.nspname, c.oid, c.relkind, a.attnum, a.attname,
          case when t.typtype = 'd' then t.typbasetype else a.atttypid end,
          case when t.typtype = 'd' then t.typtypmod else a.atttypmod end
   from pg_class c join pg_namespace n on n.oid = c.relnamespace
   join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
   join pg_type t on t.oid = a.atttypid
   where (n.nspname = 'pg_catalog' and c.relname in ('pg_namespace','pg_class','pg_attribute','pg_type','pg_database',
            'pg_roles','pg_user','pg_authid','pg_settings','pg_tables','pg_views','pg_indexes','pg_sequences','pg_index',
            'pg_constraint','pg_attrdef','pg_description','pg_shdescription','pg_am','pg_proc','pg_sequence','pg_inherits',
            'pg_collation','pg_extension','pg_stat_activity','pg_stat_database','pg_operator','pg_cast','pg_aggregate','pg_depend','pg_trigger',
            'pg_tablespace','pg_matviews','pg_rewrite','pg_enum','pg_range','pg_language','pg_locks','pg_prepared_statements',
            'pg_stat_user_tables','pg_statistic_ext','pg_policy','pg_publication','pg_foreign_table','pg_partitioned_table',
            'pg_auth_members','pg_publication_namespace','pg_publication_rel','pg_opclass','pg_cursors',
            'pg_event_trigger','pg_parameter_acl','pg_db_role_setting','pg_default_acl','pg_subscription','pg_subscription_rel','pg_publication_tables',
            'pg_foreign_server','pg_foreign_data_wrapper','pg_user_mapping','pg_user_mappings','pg_largeobject',
            'pg_largeobject_metadata','pg_transform','pg_statistic_ext_data','pg_conversion','pg_seclabel',
            'pg_shseclabel','pg_opfamily','pg_amop','pg_amproc','pg_shdepend'))
      or (n.nspname = 'information_schema' and c.relname in ('tables','columns','views','schemata','table_constraints',
            'key_column_usage','referential_constraints','sequences','constraint_column_usage','check_constraints',
            'table_privileges','role_table_grants','applicable_roles','enabled_roles',
            'foreign_data_wrappers','foreign_data_wrapper_options','foreign_servers','foreign_server_options',
            'user_mappings','user_mapping_options','usage_privileges','role_usage_grants','foreign_tables','foreign_table_options'))
   order by n.nspname, c.relname, a.attnum" > "$out/system_columns.tsv"
wc -l "$out"/*.tsv
