#!/usr/bin/env bash
# record-psql.sh — record the expected output of tests/psql/*.sql from PostgreSQL 15.
#
# The psql script tests (crates/tusk/tests/psql.rs) run each script through
# psql against Tusk and compare the whole output with tests/psql/<name>.out.
# Those files come from here: this script starts a throwaway PostgreSQL 15
# cluster (initdb --locale=C.UTF-8 --encoding=UTF8), runs the same harness
# in record mode against it, then stops and deletes the cluster.
#
# Usage:
#   scripts/record-psql.sh              # record every tests/psql/*.sql
#   scripts/record-psql.sh copy         # only these scripts (names or stems)
set -euo pipefail
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/env.sh"
files=()
for f in "$@"; do files+=("$(basename "$f" .sql)"); done

. "$ROOT/scripts/throwaway-pg.sh"
throwaway_pg_start record-psql.sh
cd "$ROOT"
TUSK_PSQL_RECORD=1 TUSK_PSQL_PG="host=127.0.0.1 port=$port" TUSK_PSQL_FILES="$(IFS=,; echo "${files[*]:-}")" \
    cargo test --release -p tusk --test psql
