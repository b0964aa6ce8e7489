"""Usage: receive_ab.py A_BIN B_BIN CYCLES [--mode MODES] [--a ARGS] [--b ARGS] > rows.jsonl
       receive_ab.py --summary rows.jsonl...

Two builds of sshbench alternated on receive, each run set against long plain-ssh
receives just before and after it (benchkit's references, 4 s each, on the client's
CPUs as in bench/run.sh): per cycle and suite (aes128-gcm, chacha20-poly1305) the
order ref, run, ref, run, ref, the builds' order swapped every cycle. Each run is
`run --mode receive --rounds 3` of one suite against its own sandbox (`--mode` other
modes beside receive; `--a`, `--b` more options for one side, as one string; the two
builds may be the same binary). The summary pools
each build's run/reference ratios and the B/A ratio (geometric means, 95% t intervals).
Build target/release/examples/benchkit first; A_BIN's `sandbox` serves the references."""
import json, math, os, shutil, statistics as st, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KIT = os.path.join(ROOT, 'target/release/examples/benchkit')
SUITES = ['aes128-gcm@openssh.com', 'chacha20-poly1305@openssh.com']


def t95(df):
    # Cornish-Fisher's first term: within 0.03 of Student's t from 10 degrees of freedom.
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df)


def pooled(logs):
    if len(logs) < 2:
        return f"n = {len(logs)}: too few to pool"
    m, se = st.mean(logs), st.stdev(logs) / math.sqrt(len(logs))
    h = t95(len(logs) - 1) * se
    return f"{math.exp(m):.3f} ({math.exp(m - h):.3f}-{math.exp(m + h):.3f}), n = {len(logs)}"


def summary(files):
    rows = [json.loads(line) for f in files for line in open(f)]
    for suite in SUITES + [None]:
        of = [r for r in rows if suite in (None, r['suite'])]
        name = suite or 'both'
        for key in ('a', 'b'):
            print(f"{name}: {key} / references {pooled([math.log(r[key + '_ratio']) for r in of])}")
        print(f"{name}: b / a {pooled([math.log(r['b'] / r['a']) for r in of])}")


def main(a_bin, b_bin, cycles, modes='receive', extra=None):
    extra = extra or {}
    work = tempfile.mkdtemp(prefix='receive_ab.')
    sb = subprocess.Popen([a_bin, 'sandbox'], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    config = sb.stdout.readline().strip()
    cpus = subprocess.run([KIT, 'client-cpus'], capture_output=True, text=True).stdout.strip()
    runs = 0

    def reference(suite):
        cmd = [KIT, 'reference', '--config', config, '--host', 'sshbench-sandbox',
               '--cipher', suite, '--mac', '-', '--mode', 'receive',
               '--bytes', str(4 << 30), '--seconds', '4']
        if cpus:
            cmd = ['taskset', '-c', cpus] + cmd
        moved, total = subprocess.run(cmd, capture_output=True, text=True,
                                      check=True).stdout.split()[:2]
        return float(moved) / float(total)

    def ours(key, binary, suite):
        nonlocal runs
        runs += 1
        db = os.path.join(work, f'{runs}.sqlite')
        subprocess.run([binary, 'run', '-q', '--db', db, '--mode', modes, '--rounds', '3',
                        '--ciphers', suite] + extra.get(key, '').split(), check=True,
                       stdout=subprocess.DEVNULL)
        out = subprocess.run([binary, 'show', '--db', db, '--format', 'json', '--top', 'all'],
                             capture_output=True, text=True, check=True).stdout
        return next(s['mean'] for s in json.loads(out)['suites'] if s['mode'] == 'receive')

    try:
        for cycle in range(cycles):
            for suite in SUITES:
                order = [('a', a_bin), ('b', b_bin)][::1 if cycle % 2 == 0 else -1]
                refs = [reference(suite)]
                row = {'cycle': cycle, 'suite': suite}
                for key, binary in order:
                    row[key] = ours(key, binary, suite)
                    refs.append(reference(suite))
                    row[key + '_ratio'] = row[key] / ((refs[-2] + refs[-1]) / 2)
                row['references'] = refs
                print(json.dumps(row), flush=True)
    finally:
        sb.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    if sys.argv[1:2] == ['--summary']:
        summary(sys.argv[2:])
    else:
        opts = dict(zip(sys.argv[4::2], sys.argv[5::2]))
        main(sys.argv[1], sys.argv[2], int(sys.argv[3]), opts.get('--mode', 'receive'),
             {'a': opts.get('--a', ''), 'b': opts.get('--b', '')})
