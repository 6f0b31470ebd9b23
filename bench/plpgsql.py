#!/usr/bin/env python3
"""plpgsql.py — functions, PL/pgSQL, triggers and NOTIFY: Tusk beside
PostgreSQL 15 in the same run (issue 14's "measured, not assumed").

Four workloads, each timed by the client's wall clock around one statement:

  loop      a PL/pgSQL function looping N times (10,000,000) with integer
            arithmetic and an IF
  lookup    a PL/pgSQL function doing N (100,000) single-row SELECT ... INTO
            by primary key from a table with an int primary key
  trigger   N (1,000,000) rows inserted by one INSERT ... SELECT through a
            BEFORE ROW trigger that sets a timestamp column (after a
            TRUNCATE in its own transaction)
  notify    N (100,000) notifications delivered to a listening session
            (bench/notify.py's "one-transaction" way: one statement calling
            pg_notify N times; the time runs until the listener has them all)

and, on request (--only), two workloads of the insert path without a
trigger, to tell the trigger's cost from the row writes' own:

  insert    N (1,000,000) rows inserted by one INSERT ... SELECT into an
            existing table without a primary key (hidden row ids) after a
            TRUNCATE in its own transaction
  insert-pk the same into a table with an int primary key and a
            non-unique index on another column

and, for the profiler built into Tusk (`tusk.plpgsql_profile`), the loop
and the trigger again on Tusk with the profiler on ("loop+prof",
"trigger+prof"): their ratio to the same workload without it is the
profiler's overhead.

Rounds interleave the servers (Tusk, then PostgreSQL, per workload per
round). The table gives medians and the speed ratio PostgreSQL time /
Tusk time (>= 1.0: Tusk at least as fast, the issue's target), and the
Tusk/PostgreSQL time ratio beside it.

Both servers get a fresh data directory under $TMPDIR and a free port
(PostgreSQL: initdb as the `postgres` OS user when run as root, default
settings but shared_buffers=256MB, as bench/work_mem.py starts it) and
are stopped by PID on exit. Every workload commits once per statement.

Usage:
    bench/plpgsql.py [--quick] [--rounds 3] [--only loop,lookup,trigger,notify,insert,insert-pk]
                     [--no-build] [--no-profile]
  --quick: sizes / 10 (loop 1,000,000, lookup 10,000, trigger 100,000,
           notify 10,000), for a run of about a minute.
"""

import argparse
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from work_mem import start_pg, start_tusk  # noqa: E402
import notify  # noqa: E402

SIZES = {"loop": 10_000_000, "lookup": 100_000, "trigger": 1_000_000, "notify": 100_000, "insert": 1_000_000, "insert-pk": 1_000_000}

SCHEMA = """
CREATE TABLE kv (id int PRIMARY KEY, v int);
INSERT INTO kv SELECT g, g * 2 FROM generate_series(1, 100000) g;
ANALYZE kv;
CREATE FUNCTION bench_loop(n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  s bigint := 0;
BEGIN
  FOR i IN 1 .. n LOOP
    IF i % 3 = 0 THEN
      s := s + i * 2;
    ELSE
      s := s - 1;
    END IF;
  END LOOP;
  RETURN s;
END $$;
CREATE FUNCTION bench_lookup(n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  s bigint := 0;
  x int;
BEGIN
  FOR i IN 1 .. n LOOP
    SELECT v INTO x FROM kv WHERE id = (i % 100000) + 1;
    s := s + x;
  END LOOP;
  RETURN s;
END $$;
CREATE TABLE stamped (id int, v text, updated_at timestamptz);
CREATE FUNCTION set_updated_at() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$;
CREATE TRIGGER stamped_updated_at BEFORE INSERT ON stamped FOR EACH ROW EXECUTE FUNCTION set_updated_at();
CREATE TABLE plain (id int, v text, updated_at timestamptz);
CREATE TABLE keyed (id int PRIMARY KEY, v text, updated_at timestamptz);
CREATE INDEX keyed_v ON keyed (v);
"""


def psql(port, *sqls):
    cmd = ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "postgres", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
    for s in sqls:
        cmd += ["-c", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"port {port}: {sqls[-1][:80]}: {r.stderr.strip()}")
    return r.stdout.strip()


def timed(port, setup, sql):
    """Seconds for `sql` alone, in a session that ran `setup` first (the
    session start and setup are outside the measured time: \\timing)."""
    cmd = ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "postgres", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
    for s in setup:
        cmd += ["-c", s]
    cmd += ["-c", "\\timing on", "-c", sql]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"port {port}: {sql[:80]}: {r.stderr.strip()}")
    for line in r.stdout.splitlines():
        if line.startswith("Time: "):
            return float(line.split()[1]) / 1000.0, r.stdout
    raise SystemExit(f"port {port}: no timing in {r.stdout!r}")


def run(server, work, n, profile=False):
    setup = ["SET tusk.plpgsql_profile = on"] if profile else []
    if work == "loop":
        secs, out = timed(server.port, setup, f"SELECT bench_loop({n})")
        third = n // 3
        expect = 3 * third * (third + 1) - (n - third)
        if str(expect) not in out:
            raise SystemExit(f"{server.name}: bench_loop({n}) gave {out!r}, not {expect}")
        return secs
    if work == "lookup":
        secs, out = timed(server.port, setup, f"SELECT bench_lookup({n})")
        expect = sum(2 * ((i % 100000) + 1) for i in range(1, n + 1))
        if str(expect) not in out:
            raise SystemExit(f"{server.name}: bench_lookup({n}) gave {out!r}, not {expect}")
        return secs
    if work == "trigger":
        psql(server.port, "TRUNCATE stamped")
        secs, _ = timed(server.port, setup, f"INSERT INTO stamped(id, v) SELECT g, 'row ' || g FROM generate_series(1, {n}) g")
        stamped = psql(server.port, "SELECT count(*) FROM stamped WHERE updated_at IS NOT NULL")
        if int(stamped) != n:
            raise SystemExit(f"{server.name}: the trigger stamped {stamped} rows of {n}")
        return secs
    if work in ("insert", "insert-pk"):
        table = "plain" if work == "insert" else "keyed"
        psql(server.port, f"TRUNCATE {table}")
        secs, _ = timed(server.port, setup, f"INSERT INTO {table}(id, v, updated_at) SELECT g, 'row ' || g, now() FROM generate_series(1, {n}) g")
        count = psql(server.port, f"SELECT count(*) FROM {table}")
        if int(count) != n:
            raise SystemExit(f"{server.name}: {table} has {count} rows of {n}")
        return secs
    if work == "notify":
        return notify.measure(server, "one-transaction", n)
    raise SystemExit(f"unknown workload {work}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="loop,lookup,trigger,notify")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--no-profile", action="store_true")
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.expanduser("~/.cache/tusk/target")
    tusk_bin = os.environ.get("TUSK_BIN", os.path.join(target, "release", "tusk"))
    if not args.no_build:
        subprocess.run(f". '{ROOT}/scripts/env.sh' && cargo build --release --bin tusk", shell=True, check=True, cwd=ROOT)
    works = args.only.split(",")
    sizes = {k: (v // 10 if args.quick else v) for k, v in SIZES.items()}
    workdir = tempfile.mkdtemp(prefix="tusk-plpgsql-")
    os.chmod(workdir, 0o755)
    servers = []
    try:
        servers = [start_tusk(workdir, tusk_bin), start_pg(workdir)]
        for s in servers:
            psql(s.port, SCHEMA)
        results = {}
        for r in range(args.rounds):
            for work in works:
                for s in servers:
                    secs = run(s, work, sizes[work])
                    results.setdefault((work, s.name), []).append(secs)
                    print(f"round {r + 1} {work:13} {s.name:8} {secs:8.3f} s", flush=True)
                if not args.no_profile and work in ("loop", "trigger"):
                    tusk = servers[0]
                    secs = run(tusk, work, sizes[work], profile=True)
                    results.setdefault((work + "+prof", tusk.name), []).append(secs)
                    print(f"round {r + 1} {work + '+prof':13} {tusk.name:8} {secs:8.3f} s", flush=True)
        print()
        print(f"medians of {args.rounds} interleaved rounds" + (" (--quick sizes)" if args.quick else ""))
        print(f"{'workload':13} {'size':>10} {'tusk s':>9} {'pg s':>9} {'pg/tusk':>8} {'tusk/pg':>8}")
        for work in works:
            t = statistics.median(results[(work, "tusk")])
            p = statistics.median(results[(work, "postgres")])
            print(f"{work:13} {sizes[work]:>10,} {t:9.3f} {p:9.3f} {p / t:8.2f} {t / p:8.2f}")
        for work in works:
            if (work + "+prof", "tusk") in results:
                t = statistics.median(results[(work, "tusk")])
                tp = statistics.median(results[(work + "+prof", "tusk")])
                print(f"profiler on, {work}: {tp:.3f} s vs {t:.3f} s off: {100 * (tp / t - 1):+.0f}%")
        print("pg/tusk >= 1.00: Tusk at least as fast as PostgreSQL 15")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    main()
