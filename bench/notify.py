#!/usr/bin/env python3
"""notify.py — 100,000 NOTIFYs delivered to a listener, Tusk beside PostgreSQL 15.

One session listens and sits idle, counting the NotificationResponse
messages that arrive on its socket; another sends 100,000 distinct
notifications (--count). The time measured runs from just before the
sender sends its first statement until the listener has received the last
notification. Three ways of sending:

  one-transaction   one statement: SELECT count(pg_notify('bench', g::text))
                    FROM generate_series(1, N) g
  batches-of-100    N/100 transactions, each one simple Query of 100 NOTIFY
                    statements (an implicit transaction block)
  autocommit        N single-NOTIFY transactions, the Query messages
                    pipelined (the sender reads the answers as they come)

Every transaction commits with synchronous_commit = off in both servers:
a NOTIFY-only transaction in PostgreSQL gets a transaction id and flushes
a commit record, which would measure the disk rather than the delivery.

The clients speak the wire protocol over raw sockets (no driver), the
listener in its own process, so that the client side costs the same for
both servers. Rounds interleave Tusk and PostgreSQL (--rounds, default 3);
the table gives medians and the Tusk/PostgreSQL time ratio (below 1: Tusk
is faster).

Both servers get a fresh data directory under $TMPDIR and a free port, and
are stopped by PID on exit (PostgreSQL runs as the `postgres` OS user when
this runs as root).

Usage:
    bench/notify.py [--count 100000] [--rounds 3] [--no-build]
"""

import argparse
import multiprocessing
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from work_mem import start_pg, start_tusk  # noqa: E402


class Conn:
    """A minimal protocol-3 client: trust authentication, simple queries."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0
        body = struct.pack("!i", 196608) + b"user\0postgres\0database\0postgres\0\0"
        self.sock.sendall(struct.pack("!i", len(body) + 4) + body)
        self.until_ready()

    def message(self):
        """The next message: (tag, body)."""
        while True:
            avail = len(self.buf) - self.pos
            if avail >= 5:
                tag = self.buf[self.pos]
                (length,) = struct.unpack_from("!i", self.buf, self.pos + 1)
                if avail >= 1 + length:
                    body = bytes(self.buf[self.pos + 5:self.pos + 1 + length])
                    self.pos += 1 + length
                    return tag, body
            if self.pos > 1 << 20:
                del self.buf[:self.pos]
                self.pos = 0
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise SystemExit("server closed the connection")
            self.buf += chunk

    def until_ready(self):
        """Reads up to ReadyForQuery; fails on an error."""
        while True:
            tag, body = self.message()
            if tag == ord("E"):
                raise SystemExit(f"server error: {body!r}")
            if tag == ord("R") and struct.unpack("!i", body[:4])[0] != 0:
                raise SystemExit("the benchmark needs trust authentication")
            if tag == ord("Z"):
                return

    @staticmethod
    def query_message(sql):
        b = sql.encode() + b"\0"
        return b"Q" + struct.pack("!i", len(b) + 4) + b

    def query(self, sql):
        self.sock.sendall(self.query_message(sql))
        self.until_ready()


def listen(port, count, ready, done):
    """The listener process: LISTEN, then count notifications; reports the
    monotonic time the last one arrived."""
    c = Conn(port)
    c.query("LISTEN bench")
    ready.set()
    got = 0
    while got < count:
        tag, _ = c.message()
        if tag == ord("A"):
            got += 1
    done.put(time.monotonic())


def send(port, way, count):
    """Sends `count` notifications on channel bench; returns the start time."""
    c = Conn(port)
    c.query("SET synchronous_commit = off")
    if way == "one-transaction":
        start = time.monotonic()
        c.query(f"SELECT count(pg_notify('bench', g::text)) FROM generate_series(1, {count}) g")
        return start
    if way == "batches-of-100":
        queries = [
            Conn.query_message("".join(f"NOTIFY bench, '{i}';" for i in range(b, min(b + 100, count))))
            for b in range(0, count, 100)
        ]
    else:
        queries = [Conn.query_message(f"NOTIFY bench, '{i}'") for i in range(count)]
    payload = b"".join(queries)
    start = time.monotonic()
    writer = threading.Thread(target=c.sock.sendall, args=(payload,))
    writer.start()
    for _ in queries:
        c.until_ready()
    writer.join()
    return start


def measure(server, way, count):
    ready = multiprocessing.Event()
    done = multiprocessing.Queue()
    p = multiprocessing.Process(target=listen, args=(server.port, count, ready, done))
    p.start()
    if not ready.wait(30):
        raise SystemExit(f"{server.name}: the listener did not start")
    start = send(server.port, way, count)
    try:
        end = done.get(timeout=600)
    finally:
        p.join(5)
        if p.is_alive():
            p.kill()
    return end - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ways", default="one-transaction,batches-of-100,autocommit")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.expanduser("~/.cache/tusk/target")
    tusk_bin = os.environ.get("TUSK_BIN", os.path.join(target, "release", "tusk"))
    if not args.no_build:
        subprocess.run(f". '{ROOT}/scripts/env.sh' && cargo build --release --bin tusk", shell=True, check=True, cwd=ROOT)
    ways = args.ways.split(",")
    workdir = tempfile.mkdtemp(prefix="tusk-notify-")
    os.chmod(workdir, 0o755)
    servers = []
    try:
        servers = [start_tusk(workdir, tusk_bin), start_pg(workdir)]
        results = {}
        for r in range(args.rounds):
            for way in ways:
                for s in servers:
                    secs = measure(s, way, args.count)
                    results.setdefault((way, s.name), []).append(secs)
                    print(f"round {r + 1} {way:16} {s.name:8} {secs:7.3f} s", flush=True)
        print()
        print(f"{args.count} notifications to one listener, medians of {args.rounds} interleaved rounds")
        print(f"{'sent as':16} {'tusk s':>8} {'pg s':>8} {'tusk/pg':>8}")
        for way in ways:
            t = statistics.median(results[(way, "tusk")])
            p = statistics.median(results[(way, "postgres")])
            print(f"{way:16} {t:8.3f} {p:8.3f} {t / p:8.2f}")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
