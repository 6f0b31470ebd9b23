#!/usr/bin/env python3
"""Conformance with the SQLite sqllogictest corpus in ../shared/slt.

The measure is: of the records PostgreSQL 15 itself passes, the share Tusk
passes too. PostgreSQL's results are recorded once into
tests/conformance/pg15-baseline.json (--record-baseline starts a throwaway
PostgreSQL 15 for that); --check runs the corpus against a freshly spawned
Tusk and compares.

  scripts/conformance.py --record-baseline
  scripts/conformance.py --check [--min 0.95] [--tusk PATH] [--jobs N]
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(ROOT, '..', 'shared'))
CORPUS = [os.path.join(SHARED, 'slt', p) for p in
          ('select1.test', 'select2.test', 'select3.test', 'select4.test', 'select5.test',
           'evidence', 'index/between', 'index/in', 'index/delete')]
RUNNER = os.path.join(SHARED, 'tools', 'slt_run.py')
BASELINE = os.path.join(ROOT, 'tests', 'conformance', 'pg15-baseline.json')
PGBIN = '/usr/lib/postgresql/15/bin'


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_ready(port, proc=None, timeout=60):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError('server exited during startup')
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError('server did not start')


def run_corpus(port, jobs, out_json, timeout):
    cmd = [sys.executable, RUNNER, '--port', str(port), '--dbname', 'slt', '--create-dbs',
           '--jobs', str(jobs), '--max-failures', '1000000', '--timeout', str(timeout),
           '--json', out_json] + CORPUS
    subprocess.run(cmd, check=True, stdout=sys.stdout, stderr=sys.stderr)
    with open(out_json) as f:
        return json.load(f)


def per_file(summary):
    """file (relative to shared/slt) -> (records, failed lines or None if the file did not run)."""
    out = {}
    for r in summary['files']:
        rel = os.path.relpath(r['file'], os.path.join(SHARED, 'slt'))
        if 'error' in r:
            out[rel] = (None, None)
        else:
            out[rel] = (r['passed'] + r['failed'], sorted(f['line'] for f in r.get('failures', [])))
    return out


def record_baseline(args):
    tmp = tempfile.mkdtemp(prefix='tusk-pg15-')
    os.chmod(tmp, 0o777)
    data = os.path.join(tmp, 'data')
    port = free_port()
    as_pg = (lambda c: ['su', 'postgres', '-c', c]) if os.geteuid() == 0 else (lambda c: ['sh', '-c', c])
    try:
        subprocess.run(as_pg(f'{PGBIN}/initdb -D {data} -U postgres --auth=trust --locale=C.UTF-8 --encoding=UTF8 >/dev/null'), check=True)
        subprocess.run(as_pg(f"{PGBIN}/pg_ctl -D {data} -o '-p {port} -k {tmp}' -l {tmp}/log -w start >/dev/null"), check=True)
        summary = run_corpus(port, args.jobs, os.path.join(tmp, 'pg.json'), args.timeout)
    finally:
        subprocess.run(as_pg(f'{PGBIN}/pg_ctl -D {data} -m immediate stop >/dev/null 2>&1'))
        shutil.rmtree(tmp, ignore_errors=True)
    files = per_file(summary)
    os.makedirs(os.path.dirname(BASELINE), exist_ok=True)
    with open(BASELINE, 'w') as f:
        json.dump({'recorded_from': 'PostgreSQL 15 (' + PGBIN + ')',
                   'files': {k: {'records': v[0], 'failed_lines': v[1]} for k, v in sorted(files.items())}}, f, indent=1)
    print('baseline written to', BASELINE)


def check(args):
    with open(BASELINE) as f:
        base = json.load(f)['files']
    tusk = args.tusk or os.path.join(os.environ.get('CARGO_TARGET_DIR', os.path.join(ROOT, 'target')), 'release', 'tusk')
    tmp = tempfile.mkdtemp(prefix='tusk-conf-')
    port = free_port()
    log = open(os.path.join(tmp, 'server.log'), 'w')
    proc = subprocess.Popen([tusk, 'serve', '--data-dir', os.path.join(tmp, 'data'), '--port', str(port)],
                            stdout=log, stderr=log)
    try:
        wait_ready(port, proc)
        t0 = time.time()
        summary = run_corpus(port, args.jobs, os.path.join(tmp, 'tusk.json'), args.timeout)
        elapsed = time.time() - t0
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    files = per_file(summary)
    pg_pass = both = 0
    worst = []
    for name, b in sorted(base.items()):
        if b['records'] is None:
            continue
        pg_failed = set(b['failed_lines'])
        passed_by_pg = b['records'] - len(pg_failed)
        records, failed = files.get(name, (None, None))
        if records is None:
            both_here = 0
        else:
            extra = set(failed) - pg_failed
            both_here = passed_by_pg - len(extra)
        pg_pass += passed_by_pg
        both += both_here
        if both_here < passed_by_pg:
            worst.append((passed_by_pg - both_here, name))
    ratio = both / pg_pass if pg_pass else 0.0
    worst.sort(reverse=True)
    for n, name in worst[:10]:
        print(f'  {name}: {n} records PostgreSQL passes and Tusk fails')
    print(f'conformance: Tusk passes {both}/{pg_pass} of the records PostgreSQL 15 passes ({ratio:.2%}) in {elapsed:.0f}s')
    shutil.rmtree(tmp, ignore_errors=True)
    if ratio < args.min:
        print(f'conformance below the required {args.min:.0%}', file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--record-baseline', action='store_true')
    ap.add_argument('--check', action='store_true')
    ap.add_argument('--min', type=float, default=0.95)
    ap.add_argument('--tusk', default=None)
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--timeout', type=float, default=900)
    args = ap.parse_args()
    if args.record_baseline:
        return record_baseline(args)
    if args.check:
        return check(args)
    ap.print_help()
    return 2


if __name__ == '__main__':
    sys.exit(main() or 0)
