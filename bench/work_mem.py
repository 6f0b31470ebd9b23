#!/usr/bin/env python3
"""work_mem.py — memory and time of big sorts, aggregates and joins, Tusk beside PostgreSQL 15.

Each query works on 10 million rows (--rows) at work_mem = 4MB (--work-mem),
so both servers must spill to temporary files. For every query and server,
interleaved (Tusk, PostgreSQL, Tusk, ... for --rounds rounds), it reports
the wall time and the server's peak memory above its idle size while the
query ran: the sum of PSS over the server's processes (bench/memsample.py;
PostgreSQL: postmaster and all children, Tusk: its one process), sampled
every 50 ms. The issue's bar: peak above idle under about 2x work_mem.

Both servers get a fresh data directory under $TMPDIR and a free port, and
are stopped by PID on exit. PostgreSQL runs as the `postgres` OS user when
this runs as root.

Usage:
    bench/work_mem.py [--rows N] [--work-mem 4MB] [--rounds 3] [--no-build]
"""

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Plain connections to both servers (Tusk offers TLS by default, the
# reference PostgreSQL does not).
os.environ["PGSSLMODE"] = "disable"
PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tree_pss_kb(root):
    """PSS summed over root and its descendants (RSS where smaps_rollup is unreadable)."""
    children = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(p))
        except (OSError, ValueError, IndexError):
            pass
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1])
            except OSError:
                pass
    return total


def psql(port, sql, db="postgres"):
    return subprocess.run(
        ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", db, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
        check=True, capture_output=True, text=True,
    ).stdout.strip()


def wait_ready(port, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(port)]).returncode == 0:
            return
        time.sleep(0.2)
    raise SystemExit(f"server on port {port} did not start")


class Server:
    def __init__(self, name, pid, port, stop):
        self.name, self.pid, self.port, self.stop = name, pid, port, stop


def start_tusk(workdir, tusk_bin):
    port = free_port()
    log = open(os.path.join(workdir, "tusk.log"), "w")
    p = subprocess.Popen([tusk_bin, "serve", "--data-dir", os.path.join(workdir, "tusk"), "--port", str(port)], stdout=log, stderr=log)
    wait_ready(port)

    def stop():
        p.send_signal(signal.SIGINT)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
    return Server("tusk", p.pid, port, stop)


def as_pg(cmd):
    if os.geteuid() == 0:
        return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(cmd)]
    return cmd


def start_pg(workdir):
    port = free_port()
    data = os.path.join(workdir, "pg")
    if os.geteuid() == 0:
        shutil.chown(workdir, "postgres")
    subprocess.run(as_pg([f"{PG_BIN}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "--locale=C.UTF-8"]),
                   check=True, capture_output=True)
    subprocess.run(as_pg([f"{PG_BIN}/pg_ctl", "-D", data, "-l", os.path.join(workdir, "pg.log"), "-w", "-o",
                          f"'-p {port} -k {workdir} -c listen_addresses=127.0.0.1 -c shared_buffers=256MB'", "start"]),
                   check=True, capture_output=True)
    wait_ready(port)
    with open(os.path.join(data, "postmaster.pid")) as f:
        pid = int(f.readline())

    def stop():
        subprocess.run(as_pg([f"{PG_BIN}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"]), capture_output=True)
    return Server("postgres", pid, port, stop)


def run_measured(server, sql, work_mem):
    """Runs sql in a fresh session; returns (seconds, peak PSS above idle in kB)."""
    idle = tree_pss_kb(server.pid)
    p = subprocess.Popen(
        ["psql", "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
         "-c", f"SET work_mem = '{work_mem}'", "-c", sql],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    start = time.time()
    peak = idle
    while p.poll() is None:
        peak = max(peak, tree_pss_kb(server.pid))
        time.sleep(0.05)
    elapsed = time.time() - start
    out, err = p.communicate()
    if p.returncode != 0:
        raise SystemExit(f"{server.name}: {sql}: {err.strip()}")
    return elapsed, peak - idle, out.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--work-mem", default="4MB")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.expanduser("~/.cache/tusk/target")
    tusk_bin = os.environ.get("TUSK_BIN", os.path.join(target, "release", "tusk"))
    if not args.no_build:
        subprocess.run(f". '{ROOT}/scripts/env.sh' && cargo build --release --bin tusk", shell=True, check=True, cwd=ROOT)

    n = args.rows
    queries = {
        # The control: what a fresh session costs by itself, included in
        # every other query's "peak above idle".
        "session": "SELECT pg_sleep(1)",
        "sort": f"SELECT count(*) FROM (SELECT g FROM generate_series(1, {n}) g ORDER BY (g::int8 * 7919) % 10000019) s",
        "group-by": f"SELECT count(*), sum(c) FROM (SELECT g % {n // 2} AS k, count(*) AS c FROM generate_series(1, {n}) g GROUP BY 1) s",
        "hash-join": f"SELECT count(*) FROM (SELECT g FROM generate_series(1, {n // 2}) g) a JOIN (SELECT g FROM generate_series(1, {n // 2}) g) b ON a.g = b.g",
    }
    workdir = tempfile.mkdtemp(prefix="tusk-workmem-")
    os.chmod(workdir, 0o755)
    servers = []
    try:
        servers = [start_tusk(workdir, tusk_bin), start_pg(workdir)]
        results = {}
        for r in range(args.rounds):
            for name, sql in queries.items():
                for s in servers:
                    secs, kb, out = run_measured(s, sql, args.work_mem)
                    results.setdefault((name, s.name), []).append((secs, kb, out))
                    print(f"round {r + 1} {name:10} {s.name:8} {secs:7.2f} s  peak +{kb / 1024:7.1f} MB  -> {out}", flush=True)
        print()
        print(f"{args.rows} rows, work_mem = {args.work_mem}, medians of {args.rounds} interleaved rounds")
        print(f"{'query':10} {'tusk s':>8} {'pg s':>8} {'time t/p':>9} {'tusk +MB':>9} {'pg +MB':>9}")
        for name in queries:
            t = results[(name, "tusk")]
            p = results[(name, "postgres")]
            ts, ps = statistics.median(x[0] for x in t), statistics.median(x[0] for x in p)
            tm, pm = statistics.median(x[1] for x in t) / 1024, statistics.median(x[1] for x in p) / 1024
            agree = "" if t[0][2] == p[0][2] else "  ANSWERS DIFFER"
            print(f"{name:10} {ts:8.2f} {ps:8.2f} {ts / ps:9.2f} {tm:9.1f} {pm:9.1f}{agree}")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
