#!/usr/bin/env bash
# record-copy-binary.sh — record the binary COPY fixtures of
# crates/tusk/tests/copy_binary.rs from PostgreSQL 15.
#
# Starts a throwaway PostgreSQL 15 cluster (initdb --locale=C.UTF-8
# --encoding=UTF8), runs scripts/record-copy-binary.py against it (which
# writes tests/copy/binary_types.bin, binary_types.out, binary_cases.txt and
# binary_responses.txt), then stops and deletes the cluster. Needs python3
# with psycopg (3).
#
# Usage: scripts/record-copy-binary.sh
set -euo pipefail
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

. "$ROOT/scripts/throwaway-pg.sh"
throwaway_pg_start record-copy-binary.sh
python3 "$ROOT/scripts/record-copy-binary.py" "host=127.0.0.1 port=$port user=postgres dbname=postgres sslmode=disable"
echo "record-copy-binary.sh: wrote tests/copy/binary_*" >&2
