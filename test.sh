#!/usr/bin/env bash
# Runs Tusk's whole test suite: unit tests, integration tests against a
# spawned server, the SQL logic tests recorded from PostgreSQL 15, and the
# sqllogictest conformance check over ../shared/slt (when present).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
. scripts/env.sh
cargo build --release --bins
cargo test --release --workspace
if [ -d ../shared/slt ]; then
    scripts/conformance.py --check
fi
