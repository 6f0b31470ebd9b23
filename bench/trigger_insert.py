#!/usr/bin/env python3
"""trigger_insert.py — 1,000,000 inserts through a BEFORE ROW trigger that
sets a timestamp column, on Tusk and on PostgreSQL 15 in the same run.

Each server gets a fresh data directory and a free port on 127.0.0.1
(PostgreSQL: initdb, fsync off as scripts/throwaway-pg.sh sets it up; Tusk:
`tusk serve`). Both get the same schema:

    CREATE TABLE t (id int, v text, updated_at timestamptz);
    CREATE FUNCTION set_updated_at() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$;
    CREATE TRIGGER t_updated_at BEFORE INSERT ON t FOR EACH ROW
      EXECUTE FUNCTION set_updated_at();

and each round runs, on Tusk then on PostgreSQL (interleaved), one
`INSERT INTO t(id, v) SELECT g, 'row ' || g FROM generate_series(1, N) g`
after a TRUNCATE, timed by the client (psql) wall clock. It prints each
run, the median per server and the ratio Tusk/PostgreSQL of the insert
rates (>= 1.0: Tusk at least as fast). Servers are stopped by PID and their
directories removed on exit.

Usage: bench/trigger_insert.py [--rows N] [--rounds R] [--tusk PATH]
  (default: 1,000,000 rows, 3 rounds, $CARGO_TARGET_DIR/release/tusk)
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")

SCHEMA = """
CREATE TABLE t (id int, v text, updated_at timestamptz);
CREATE FUNCTION set_updated_at() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$;
CREATE TRIGGER t_updated_at BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION set_updated_at();
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_ready(port, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        r = subprocess.run([f"{PG_BIN}/pg_isready", "-h", "127.0.0.1", "-p", str(port)], capture_output=True)
        if r.returncode == 0:
            return
        time.sleep(0.2)
    raise SystemExit(f"server on port {port} did not start")


def psql(port, sql):
    r = subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "postgres", "-c", sql],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(f"port {port}: {sql[:60]}...: {r.stderr.strip()}")
    return r.stdout


def as_pg(cmd):
    if os.getuid() == 0:
        return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(cmd)]
    return cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/tusk/target"))
    ap.add_argument("--tusk", default=f"{target}/release/tusk")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="trigger-bench.")
    os.chmod(work, 0o755)
    if os.getuid() == 0:
        shutil.chown(work, "postgres")
    procs = []
    pg_data = f"{work}/pg"
    pg_started = False
    try:
        # PostgreSQL 15.
        subprocess.run(as_pg([f"{PG_BIN}/initdb", "-D", pg_data, "-U", "postgres", "--auth=trust", "--no-sync", "--locale=C.UTF-8", "-E", "UTF8"]), check=True, capture_output=True)
        pg_port = free_port()
        opts = f"-p {pg_port} -k {work} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(as_pg([f"{PG_BIN}/pg_ctl", "-D", pg_data, "-l", f"{work}/pg.log", "-w", "-o", f"'{opts}'", "start"]), check=True, capture_output=True)
        pg_started = True
        # Tusk.
        tusk_port = free_port()
        tusk = subprocess.Popen([args.tusk, "serve", "--port", str(tusk_port), "--data-dir", f"{work}/tusk"], stdout=subprocess.DEVNULL, stderr=open(f"{work}/tusk.log", "w"))
        procs.append(tusk)
        wait_ready(pg_port)
        wait_ready(tusk_port)
        servers = [("tusk", tusk_port), ("pg", pg_port)]
        for _, port in servers:
            psql(port, SCHEMA)
        insert = f"INSERT INTO t(id, v) SELECT g, 'row ' || g FROM generate_series(1, {args.rows}) g"
        times = {name: [] for name, _ in servers}
        for rnd in range(args.rounds):
            for name, port in servers:
                psql(port, "TRUNCATE t")
                t0 = time.monotonic()
                psql(port, insert)
                dt = time.monotonic() - t0
                times[name].append(dt)
                print(f"round {rnd + 1} {name}: {dt:.3f} s ({args.rows / dt:,.0f} rows/s)", flush=True)
        # Every row went through the trigger.
        for name, port in servers:
            out = psql(port, "SELECT count(*) FROM t WHERE updated_at IS NOT NULL")
            print(f"{name}: rows stamped by the trigger: {out.split()[2] if len(out.split()) > 2 else out.strip()}")
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"median tusk {med['tusk']:.3f} s, pg {med['pg']:.3f} s")
        print(f"ratio Tusk/PG (rate) = {med['pg'] / med['tusk']:.2f}")
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if pg_started:
            subprocess.run(as_pg([f"{PG_BIN}/pg_ctl", "-D", pg_data, "-m", "immediate", "-w", "stop"]), capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
