#!/usr/bin/env python3
"""jsonb_gin.py — jsonb documents and GIN indexes: Tusk beside PostgreSQL 15
in the same run (issue 15's "measured, not assumed").

N (1,000,000) documents of one realistic shape: an id, a name, a status
(5 values), an age, a nested address (100 cities, a zip), an array of 1 to
4 tags (of 50), nested metrics, and for 1 in 100 documents a "vip" key.
Each round, on each server (Tusk first, then PostgreSQL):

  load         TRUNCATE, then one INSERT ... SELECT building the N documents
               with jsonb_build_object from generate_series (then ANALYZE,
               not timed)
  build_path   CREATE INDEX ... USING gin (doc jsonb_path_ops)
  contains_path  SELECT count(*) ... WHERE doc @> '{"status": ..., "address":
               {"city": ...}}' (about 0.2% of the rows) through that index
  build_ops    DROP the jsonb_path_ops index; CREATE INDEX ... USING gin (doc)
               (jsonb_ops)
  contains_ops   the same containment query through the jsonb_ops index
  exists       SELECT count(*) ... WHERE doc ? 'vip' (1% of the rows)
  group        SELECT doc->>'status', count(*) ... GROUP BY 1 (a full scan
               extracting a field)

Queries are timed by psql's \\timing around the statement alone; each query
runs 3 times per round and its best counts. Rounds interleave the servers.
The table gives medians and the speed ratio PostgreSQL time / Tusk time
(>= 1.0: Tusk at least as fast, the issue's target), and the sizes of both
GIN indexes (pg_relation_size) with their ratio Tusk / PostgreSQL (<= 1.0:
Tusk's no larger, the issue's target). Results of every query are compared
between the servers.

Both servers get a fresh data directory under $TMPDIR and a free port
(started as bench/work_mem.py starts them) and are stopped on exit.

Usage:
    bench/jsonb_gin.py [N] [--rounds 3] [--no-build]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from work_mem import start_pg, start_tusk  # noqa: E402

SCHEMA = "CREATE TABLE docs (doc jsonb)"

LOAD = """INSERT INTO docs (doc)
SELECT jsonb_build_object(
  'id', g,
  'name', 'user ' || g,
  'status', (ARRAY['active', 'inactive', 'pending', 'banned', 'deleted'])[1 + g % 5],
  'age', 18 + g % 60,
  'address', jsonb_build_object('city', 'city' || (g % 100), 'zip', lpad((g % 99991)::text, 5, '0')),
  'tags', (SELECT jsonb_agg('tag' || ((g * 7 + k * 13) % 50)) FROM generate_series(0, g % 4) k),
  'metrics', jsonb_build_object('visits', g % 1000, 'score', (g % 997) / 10.0)
) || CASE WHEN g % 100 = 0 THEN '{"vip": true}'::jsonb ELSE '{}'::jsonb END
FROM generate_series(1, {n}) g"""

CONTAINS = """SELECT count(*) FROM docs WHERE doc @> '{"status": "pending", "address": {"city": "city42"}}'"""
EXISTS = "SELECT count(*) FROM docs WHERE doc ? 'vip'"
GROUP = "SELECT doc->>'status', count(*) FROM docs GROUP BY 1 ORDER BY 1"
SIZE = "SELECT pg_relation_size('{idx}')"

WORKS = ["load", "build_path", "contains_path", "build_ops", "contains_ops", "exists", "group"]


def psql_cmd(port):
    return ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "postgres", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]


def psql(port, *sqls):
    cmd = psql_cmd(port)
    for s in sqls:
        cmd += ["-c", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"port {port}: {sqls[-1][:80]}: {r.stderr.strip()}")
    return r.stdout.strip()


def timed(port, sql):
    """Seconds for `sql` alone and its output (\\timing)."""
    cmd = psql_cmd(port) + ["-c", "\\timing on", "-c", sql]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"port {port}: {sql[:80]}: {r.stderr.strip()}")
    out, secs = [], None
    for line in r.stdout.splitlines():
        if line.startswith("Time: "):
            secs = float(line.split()[1]) / 1000.0
        else:
            out.append(line)
    if secs is None:
        raise SystemExit(f"port {port}: no timing in {r.stdout!r}")
    return secs, "\n".join(out)


def best_of(port, sql, times=3):
    runs = [timed(port, sql) for _ in range(times)]
    return min(s for s, _ in runs), runs[0][1]


def round_on(server, n):
    """One round on one server: {work: seconds}, {query: output}, {index: bytes}."""
    t, out, size = {}, {}, {}
    port = server.port
    psql(port, "DROP INDEX IF EXISTS docs_path", "DROP INDEX IF EXISTS docs_ops", "TRUNCATE docs")
    t["load"], _ = timed(port, LOAD.replace("{n}", str(n)))
    psql(port, "ANALYZE docs")
    t["build_path"], _ = timed(port, "CREATE INDEX docs_path ON docs USING gin (doc jsonb_path_ops)")
    size["jsonb_path_ops"] = int(psql(port, SIZE.format(idx="docs_path")))
    t["contains_path"], out["contains"] = best_of(port, CONTAINS)
    psql(port, "DROP INDEX docs_path")
    t["build_ops"], _ = timed(port, "CREATE INDEX docs_ops ON docs USING gin (doc)")
    size["jsonb_ops"] = int(psql(port, SIZE.format(idx="docs_ops")))
    t["contains_ops"], out["contains_ops"] = best_of(port, CONTAINS)
    t["exists"], out["exists"] = best_of(port, EXISTS)
    t["group"], out["group"] = best_of(port, GROUP)
    return t, out, size


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.expanduser("~/.cache/tusk/target")
    tusk_bin = os.environ.get("TUSK_BIN", os.path.join(target, "release", "tusk"))
    if not args.no_build:
        subprocess.run(f". '{ROOT}/scripts/env.sh' && cargo build --release --bin tusk", shell=True, check=True, cwd=ROOT)
    workdir = tempfile.mkdtemp(prefix="tusk-jsonb-gin-")
    os.chmod(workdir, 0o755)
    servers = []
    try:
        servers = [start_tusk(workdir, tusk_bin), start_pg(workdir)]
        for s in servers:
            psql(s.port, SCHEMA)
        times, sizes = {}, {}
        for r in range(args.rounds):
            outs = {}
            for s in servers:
                t, out, size = round_on(s, args.n)
                outs[s.name] = out
                for w, secs in t.items():
                    times.setdefault((w, s.name), []).append(secs)
                sizes[s.name] = size
                print(f"round {r + 1} {s.name:8} " + " ".join(f"{w}={t[w]:.3f}" for w in WORKS), flush=True)
            if outs["tusk"] != outs["postgres"]:
                raise SystemExit(f"results differ:\ntusk: {outs['tusk']}\npostgres: {outs['postgres']}")
        print()
        print(f"medians of {args.rounds} interleaved rounds, N = {args.n:,} documents")
        print(f"{'workload':14} {'tusk s':>9} {'pg s':>9} {'pg/tusk':>8} {'tusk/pg':>8}")
        for w in WORKS:
            t = statistics.median(times[(w, "tusk")])
            p = statistics.median(times[(w, "postgres")])
            print(f"{w:14} {t:9.3f} {p:9.3f} {p / t:8.2f} {t / p:8.2f}")
        print()
        print(f"{'GIN index size':14} {'tusk MB':>9} {'pg MB':>9} {'tusk/pg':>8}")
        for cls in ("jsonb_path_ops", "jsonb_ops"):
            t, p = sizes["tusk"][cls], sizes["postgres"][cls]
            print(f"{cls:14} {t / 1e6:9.1f} {p / 1e6:9.1f} {t / p:8.2f}")
        print("pg/tusk >= 1.00: Tusk at least as fast as PostgreSQL 15; size tusk/pg <= 1.00: no larger")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
