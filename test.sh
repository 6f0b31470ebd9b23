#!/usr/bin/env bash
# Runs Tusk's whole test suite: unit tests, integration tests against a
# spawned server, the SQL logic tests recorded from PostgreSQL 15, and the
# sqllogictest conformance check over ../shared/slt and PostgreSQL's own
# regression suite over ../shared/pgregress (when present; see
# docs/conformance.md): no file may take the server down or time out, and
# the statements matched may not fall below the last recorded run's floor.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
. scripts/env.sh
cargo build --release --bins
cargo test --release --workspace
if [ -d ../shared/slt ]; then
    scripts/conformance.py --check
fi
if [ -d ../shared/pgregress ]; then
    scripts/pgregress.py --check --min-matched 22350
fi
