#!/usr/bin/env python3
"""memsample.py — peak memory of a server's process tree (used by bench/pgbench.sh).

Usage:
    memsample.py ROOT_PID OUT_FILE [INTERVAL_SECONDS]   # sample until killed or ROOT_PID exits
    memsample.py --once ROOT_PID                         # print one sample and exit

Every INTERVAL seconds (default 0.2) it finds ROOT_PID and all its descendants
(PostgreSQL: the postmaster and every backend and auxiliary process; Tusk: its
one process) and sums, over those processes,

  - PSS (proportional set size, from /proc/PID/smaps_rollup): each shared page
    is divided among the processes that map it, so PostgreSQL's shared_buffers
    count once for the whole server rather than once per backend;
  - RSS (resident set size): shared pages count once per process that maps
    them, so for a multi-process server the sum overstates the real use.

It keeps the maximum of each sum over the samples and rewrites OUT_FILE
(atomically) whenever a maximum grows, with one line:

    pss_kb=N rss_kb=N procs=N samples=N source=pss sampler_cpu_s=S

(procs is the largest number of processes seen, sampler_cpu_s the CPU time the
sampler itself used: reading smaps_rollup walks a process's page tables, about
a millisecond per PostgreSQL backend. So that the sampler takes little CPU from
the benchmark, it waits longer than INTERVAL when a sample was expensive,
keeping its own CPU use under 5% of one core: with 100 PostgreSQL backends
that is about one sample every two seconds.)

source=rss means smaps_rollup could not be read (old kernel, no permission) and
pss_kb then repeats the RSS sum. The file is also rewritten on exit so that
samples= is final. Killing the sampler with SIGTERM is the normal way to stop it.
"""

import os
import signal
import sys
import time


def children_map():
    """ppid -> [pid] for every process visible in /proc."""
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name (field 2) may contain spaces and parentheses: the
        # fields after the last ')' are state, ppid, ...
        rest = stat[stat.rfind(b")") + 2:].split()
        if len(rest) < 2:
            continue
        kids.setdefault(int(rest[1]), []).append(int(name))
    return kids


def tree(root):
    kids = children_map()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, ()))
    return out


# Largest share of one CPU the sampler may use (it lengthens its interval).
MAX_DUTY = 0.05

# smaps_rollup exists since Linux 4.14; without it, RSS only.
HAVE_ROLLUP = os.path.exists("/proc/self/smaps_rollup")


def proc_mem(pid):
    """(pss_kb or None, rss_kb) of one process, or None if it is gone."""
    if HAVE_ROLLUP:
        return rollup_mem(pid)
    return status_mem(pid)


def rollup_mem(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            pss = rss = None
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
        # An exiting process (a backend whose client left) may have no
        # memory map any more: its rollup is empty.
        return (pss or 0), (rss or 0)
    except (FileNotFoundError, ProcessLookupError):
        return None  # gone, or exiting (reading a process without mm gives ESRCH)
    except OSError:
        return status_mem(pid)  # no permission: RSS only


def status_mem(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return None, int(line.split()[1])
        return None, 0  # a zombie has no VmRSS line
    except OSError:
        return None


def sample(root):
    """(pss_sum_kb, rss_sum_kb, nprocs, pss_complete) or None if root is gone."""
    if not os.path.exists(f"/proc/{root}"):
        return None
    pss_sum = rss_sum = n = 0
    complete = True
    for pid in tree(root):
        m = proc_mem(pid)
        if m is None:
            continue
        pss, rss = m
        n += 1
        rss_sum += rss
        if pss is None:
            complete = False
            pss_sum += rss
        else:
            pss_sum += pss
    return pss_sum, rss_sum, n, complete


def main(argv):
    if len(argv) >= 2 and argv[0] == "--once":
        s = sample(int(argv[1]))
        if s is None:
            print("gone")
            return 1
        pss, rss, n, complete = s
        print(f"pss_kb={pss} rss_kb={rss} procs={n} samples=1 source={'pss' if complete else 'rss'}")
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root, out = int(argv[0]), argv[1]
    interval = float(argv[2]) if len(argv) > 2 else 0.2
    peak = {"pss": 0, "rss": 0, "procs": 0, "samples": 0, "complete": True}

    def write():
        t = os.times()
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            f.write(
                f"pss_kb={peak['pss']} rss_kb={peak['rss']} procs={peak['procs']} "
                f"samples={peak['samples']} source={'pss' if peak['complete'] else 'rss'} "
                f"sampler_cpu_s={t.user + t.system:.2f}\n"
            )
        os.replace(tmp, out)

    def stop(*_):
        write()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    write()
    while True:
        cpu0 = time.process_time()
        s = sample(root)
        cost = time.process_time() - cpu0
        if s is None:
            stop()
        pss, rss, n, complete = s
        peak["samples"] += 1
        grew = False
        if pss > peak["pss"]:
            peak["pss"] = pss
            grew = True
        if rss > peak["rss"]:
            peak["rss"] = rss
            grew = True
        if n > peak["procs"]:
            peak["procs"] = n
            grew = True
        if not complete and peak["complete"]:
            peak["complete"] = False
            grew = True
        if grew:
            write()
        # Keep the sampler's own CPU use under MAX_DUTY of one core: with a
        # hundred PostgreSQL backends one sample costs ~0.1 s of CPU, and the
        # benchmark runs on 2 cores.
        time.sleep(max(interval, cost * (1 - MAX_DUTY) / MAX_DUTY))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
