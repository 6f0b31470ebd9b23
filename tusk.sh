#!/usr/bin/env bash
# Builds Tusk (installing what the build needs) and starts the server in the
# foreground on ./tusk-data, port 5432. Extra arguments go to `tusk serve`
# (e.g. --port 5433 --data-dir /tmp/db). Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
. scripts/env.sh
cargo build --release --bin tusk
exec "$CARGO_TARGET_DIR/release/tusk" serve "$@"
