"""Usage: connect_trim.py OLD_BIN NEW_BIN DB:RUN... (no scipy)

Connect's figures of the same runs read by two builds that estimate them differently
(`show --mode connect --format json`; in BENCHMARKS.md, "Connect's late key exchanges",
NEW_BIN was a local patch, not kept): per run, how many suites are marked `≈ best`, how
many of them are 10% or more behind the best, and the median 95% interval; over every
two runs, for the measured suites (sums are left out: they are made of the measured)
with at least MIN samples in both, the root mean square of log(run / other run) and how
often the two figures lie within the 95% interval of their difference (each interval's
half-width in quadrature): about 95% if the intervals are honest, whatever the
estimator. First, per run, the connections whose key exchange phase took over 20 ms
more than their suite's median, and by how much."""
import itertools, json, math, sqlite3, statistics as st, subprocess, sys

MIN = 10


def rows(binary, spec):
    db, run = spec.rsplit(':', 1)
    out = subprocess.run([binary, 'show', '--db', db, '--run', run, '--mode', 'connect',
                          '--format', 'json', '--top', 'all'], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)['suites']


def stalls(spec):
    db, run = spec.rsplit(':', 1)
    found = sqlite3.connect(db).execute(
        "select kex, hostkey, phases_json from samples where run_id = ? and mode = 'connect'"
        " and outcome = 'ok' and phases_json is not null", (int(run),)).fetchall()
    by = {}
    for kex, hostkey, phases in found:
        by.setdefault((kex, hostkey), []).append(json.loads(phases)['kex'])
    excess = [x - st.median(v) for v in by.values() for x in v]
    late = sorted(round(1e3 * e) for e in excess if e > 0.020)
    print(f"{spec}: {len(late)} of {len(found)} connections with a late key exchange,"
          f" by {late} ms")


def key(r):
    return (r['kex'], r['hostkey'])


def measured(r):
    # A sum's median and extremes are its mean (see analysis::sums).
    return not (r['n'] > 1 and r['min'] == r['max'] == r['mean'])


def per_run(name, spec, suites):
    ok = [r for r in suites if r['mean'] is not None]
    best = min(r['mean'] for r in ok if measured(r))
    tied = [r for r in ok if r['tie_with_best']]
    behind = [r for r in tied if r['mean'] >= best * 1.1]
    ci = st.median(r['ci95'] / r['mean'] for r in ok if r['ci95'] is not None)
    print(f"{name} {spec}: {len(tied)} tied, {len(behind)} of them >= 10% behind;"
          f" median interval +-{100 * ci:.1f}%")


def pairs(name, runs):
    logs, inside, total = [], 0, 0
    for a, b in itertools.combinations(runs, 2):
        of_b = {key(r): r for r in b if measured(r) and r['n'] >= MIN}
        for r in a:
            o = of_b.get(key(r))
            if not measured(r) or r['n'] < MIN or o is None or r['ci95'] is None:
                continue
            logs.append(math.log(r['mean'] / o['mean']))
            total += 1
            inside += abs(r['mean'] - o['mean']) <= math.hypot(r['ci95'], o['ci95'])
    if total:
        rms = math.sqrt(st.mean(x * x for x in logs))
        print(f"{name}: {total} comparisons of suites with >= {MIN} samples in both runs;"
              f" rms log ratio {rms:.4f}; within the difference's interval {inside}/{total}")


def main():
    old, new, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    for spec in specs:
        stalls(spec)
    for name, binary in (('old', old), ('new', new)):
        runs = [rows(binary, s) for s in specs]
        for spec, suites in zip(specs, runs):
            per_run(name, spec, suites)
        pairs(name, runs)


main()
