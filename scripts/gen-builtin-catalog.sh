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
q "select p.oid, proname, pronamespace, prokind, proretset, provolatile, proisstrict, prorettype,
          array_to_string(proargtypes::oid[], ' '), provariadic, prosrc, pronargdefaults,
          coalesce(array_to_string(proallargtypes, ' '), ''), coalesce(array_to_string(proargmodes, ' '), ''),
          coalesce(array_to_string(proargnames, ' '), ''), proparallel, procost, prorows
   from pg_proc p where pronamespace = 11 order by p.oid" > "$out/pg_proc.tsv"
q "select aggfnoid::oid, aggkind, aggtranstype, coalesce(agginitval, '\N') from pg_aggregate order by aggfnoid::oid" > "$out/pg_aggregate.tsv"

# Settings: every GUC with its boot value, unit, type, context and limits.
q "select name, coalesce(boot_val, ''), coalesce(unit, ''), category, short_desc, context, vartype,
          coalesce(min_val, ''), coalesce(max_val, ''), coalesce(array_to_string(enumvals, ','), ''), coalesce(extra_desc, '')
   from pg_settings order by name" > "$out/pg_settings.tsv"
wc -l "$out"/*.tsv
