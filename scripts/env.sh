# Sourced by the scripts: where build outputs go. They live outside the
# clone so that a fresh clone builds incrementally (RocksDB's C++ build
# takes about 20 minutes on these machines).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tusk/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
