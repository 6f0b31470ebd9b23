#!/usr/bin/env bash
# Installs what building and testing Tusk needs on a fresh Debian machine:
# libclang (bindgen, for pg_query and RocksDB), a C++ toolchain, PostgreSQL 15
# (the reference server for recording and conformance checks), psycopg, and
# python3-venv, node, npm, Maven, a JDK and Go for the driver suites in
# tests/drivers (whose packages the drivers_* tests install themselves).
# Idempotent and quiet when everything is already there.
set -euo pipefail
need=()
[ -e /usr/lib/llvm-14/lib/libclang.so ] || ls /usr/lib/llvm-*/lib/libclang*.so >/dev/null 2>&1 || need+=(libclang-dev)
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
[ -x /usr/lib/postgresql/15/bin/postgres ] || need+=(postgresql-15)
command -v psql >/dev/null || need+=(postgresql-client-15)
# The TLS cipher scan in crates/tusk/tests/auth.rs: openssl s_client.
command -v openssl >/dev/null || need+=(openssl)
# The driver suites (tests/drivers): a Python virtualenv, node and npm.
command -v python3 >/dev/null || need+=(python3)
python3 -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
# The JDBC and pgx suites: Maven with a JDK, and Go (pgx needs Go 1.21 or
# newer; Debian 12's golang-go is older, so a machine without Go needs a
# newer toolchain than this installs).
command -v mvn >/dev/null || need+=(maven)
command -v javac >/dev/null || need+=(default-jdk-headless)
command -v go >/dev/null || need+=(golang-go)
if [ ${#need[@]} -gt 0 ]; then
    echo "setup: installing ${need[*]}" >&2
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! python3 -c "import psycopg" 2>/dev/null; then
    echo "setup: installing psycopg" >&2
    python3 -m pip install -q "psycopg[binary]" >/dev/null 2>&1 || python3 -m pip install -q --break-system-packages "psycopg[binary]" >/dev/null
fi
