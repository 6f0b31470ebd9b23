#!/usr/bin/env python3
"""PostgreSQL 15's regression suite (../shared/pgregress) against a fresh Tusk.

Starts Tusk on a new data directory and a free port, runs the shared suite
through ../shared/tools/regress_diff.py (which drives psql exactly as
pg_regress does) with a restart command, and prints files passed,
statements matched, the files after which the server was found down (each
one a crash: a bug before anything else) and the files that hit the
per-file timeout.

  scripts/pgregress.py                        # the whole schedule
  scripts/pgregress.py --tests boolean char   # some files, in schedule order
  scripts/pgregress.py --record docs/conformance.md
  scripts/pgregress.py --check                # exit 1 on a crash or a timeout
  scripts/pgregress.py --check --min-matched N

--record rewrites the per-file table in docs/conformance.md (between its
markers) from this run. --check is what ./test.sh runs: the suite must not
take the server down nor make a file time out, and (with --min-matched)
must not match fewer statements than the floor recorded for CI.
"""
import argparse
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(ROOT, '..', 'shared'))
REGRESS_DIR = os.path.join(SHARED, 'pgregress')
RUNNER = os.path.join(SHARED, 'tools', 'regress_diff.py')
BEGIN_MARK = '<!-- pgregress:begin -->'
END_MARK = '<!-- pgregress:end -->'


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def default_tusk():
    target = os.environ.get('CARGO_TARGET_DIR') or os.path.join(os.path.expanduser('~'), '.cache', 'tusk', 'target')
    return os.path.join(target, 'release', 'tusk')


def wait_ready(port, timeout=60):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def start_script(tusk, port, data, log, pidfile):
    """A shell command that starts the server in the background and records
    its PID: used for the first start and as regress_diff's --restart-cmd."""
    return (f'"{tusk}" serve --port {port} --data-dir "{data}" >>"{log}" 2>&1 & '
            f'echo $! >"{pidfile}"; '
            f'for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done')


def stop(pidfile):
    try:
        with open(pidfile) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return
    for sig, wait in ((15, 20), (9, 5)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        t0 = time.time()
        while time.time() - t0 < wait:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def crashed_after(files):
    """The files after which the server was found down: regress_diff marks
    the file that found it down; the one before it took it down."""
    out = []
    prev = None
    for f in files:
        if f.get('restarted_server'):
            out.append(prev or '(start)')
        prev = f['test']
    return out


def record(path, summary, crashes, timeouts):
    files = [f for f in summary['files'] if f.get('statements_total')]
    files.sort(key=lambda f: (-(f['statements_total'] - f['statements_matched']), f['test']))
    t = summary['totals']
    lines = [BEGIN_MARK, '',
             f"Run of {summary['started'][:10]}: files {t['files_passed']}/{t['files_total']} passed, "
             f"statements {t['statements_matched']}/{t['statements_total']} matched "
             f"({100.0 * t['statements_matched'] / max(1, t['statements_total']):.1f}%) in {t['elapsed_s']} s; "
             f"server found down after: {', '.join(crashes) or 'none'}; files timed out: {', '.join(timeouts) or 'none'}.", '',
             '| file | status | matched | total | mismatched |', '|---|---|---:|---:|---:|']
    for f in files:
        lines.append(f"| {f['test']} | {f['status']} | {f['statements_matched']} | {f['statements_total']} | "
                     f"{f['statements_total'] - f['statements_matched']} |")
    lines += ['', END_MARK]
    text = open(path).read() if os.path.exists(path) else ''
    if BEGIN_MARK in text and END_MARK in text:
        head, rest = text.split(BEGIN_MARK, 1)
        tail = rest.split(END_MARK, 1)[1]
        text = head + '\n'.join(lines) + tail
    else:
        text = text + ('\n' if text else '') + '\n'.join(lines) + '\n'
    with open(path, 'w') as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--tusk', default=default_tusk())
    ap.add_argument('--tests', nargs='*')
    ap.add_argument('--skip', nargs='*', default=[])
    ap.add_argument('--timeout', type=float, default=120)
    ap.add_argument('--outdir', default=None)
    ap.add_argument('--record', metavar='MARKDOWN')
    ap.add_argument('--check', action='store_true', help='fail on a crash or a per-file timeout')
    ap.add_argument('--min-matched', type=int, default=0, help='with --check: fail below this many statements')
    a = ap.parse_args()
    if not os.path.isdir(REGRESS_DIR):
        print(f'pgregress: {REGRESS_DIR} not found', file=sys.stderr)
        return 2

    work = tempfile.mkdtemp(prefix='tusk-pgregress-')
    outdir = a.outdir or os.path.join(work, 'out')
    data, log, pidfile = os.path.join(work, 'data'), os.path.join(work, 'server.log'), os.path.join(work, 'pid')
    port = free_port()
    start = start_script(a.tusk, port, data, log, pidfile)
    subprocess.run(start, shell=True, check=True, executable='/bin/bash')
    if not wait_ready(port):
        print(f'pgregress: the server did not start; see {log}', file=sys.stderr)
        return 2
    try:
        argv = [sys.executable, RUNNER, '--regress-dir', REGRESS_DIR, '--host', '127.0.0.1', '--port', str(port),
                '--user', 'postgres', '--outdir', outdir, '--timeout', str(a.timeout),
                '--restart-cmd', 'bash -c ' + shlex.quote(start)]
        if a.tests:
            argv += ['--tests'] + a.tests
        if a.skip:
            argv += ['--skip'] + a.skip
        env = dict(os.environ, SHELL='/bin/bash')
        rc = subprocess.run(argv, env=env).returncode
    finally:
        stop(pidfile)
    if rc != 0:
        print(f'pgregress: regress_diff.py exited with {rc}', file=sys.stderr)
        return 2
    with open(os.path.join(outdir, 'summary.json')) as f:
        summary = json.load(f)
    files = summary['files']
    crashes = crashed_after(files)
    timeouts = [f['test'] for f in files if f.get('status') == 'timeout']
    t = summary['totals']
    print(f"pgregress: files {t['files_passed']}/{t['files_total']} passed; "
          f"statements {t['statements_matched']}/{t['statements_total']} matched "
          f"({100.0 * t['statements_matched'] / max(1, t['statements_total']):.1f}%) in {t['elapsed_s']} s")
    print(f"pgregress: server found down after: {', '.join(crashes) if crashes else 'none'}")
    print(f"pgregress: files timed out: {', '.join(timeouts) if timeouts else 'none'}")
    print(f'pgregress: results in {outdir}, server log {log}')
    if a.record:
        record(a.record, summary, crashes, timeouts)
    if a.check:
        bad = bool(crashes or timeouts)
        if a.min_matched and t['statements_matched'] < a.min_matched:
            print(f"pgregress: {t['statements_matched']} statements matched, fewer than the floor {a.min_matched}")
            bad = True
        if bad:
            return 1
    if a.check and not a.outdir and not (crashes or timeouts):
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
