"""Usage: coverage.py DB [N] (a run of many rounds, every suite in each).

Coverage of plain and moderated 95% intervals from n rounds, against the mean of the
other rounds of the same run (the interval widened by sqrt(1 + n/m) for that mean's own
error). Relative variances, Smyth's moments, t on floor(d0 + n - 1) df, as the code."""
import sqlite3, sys, math, random, struct, statistics as st
from scipy.special import digamma, polygamma
from scipy.optimize import brentq
from scipy.stats import t as tdist
db = sqlite3.connect(sys.argv[1]); N = int(sys.argv[2]) if len(sys.argv) > 2 else 3
def fig(mode, wb, ws, wall, e, r):
    if mode == 'echo':
        a = st.median(struct.unpack('<%df' % (len(e)//4), e)); b = st.median(struct.unpack('<%df' % (len(r)//4), r)) if r else None
        return a / b if b else a
    return wall if mode == 'connect' else wb / ws
def smyth(s2, d):
    e = [math.log(v) - float(digamma(x/2)) + math.log(x/2) for v, x in zip(s2, d)]
    m = st.mean(e); var = st.variance(e) - st.mean(float(polygamma(1, x/2)) for x in d)
    if var <= 0: return 200.0, math.exp(m)
    d0 = min(2 * brentq(lambda y: float(polygamma(1, y)) - var, 1e-8, 1e8), 200.0)
    return d0, math.exp(m + float(digamma(d0/2)) - math.log(d0/2))
rng = random.Random(1)
D0 = {}
for mode in ('connect', 'send', 'receive', 'echo'):
    rows = db.execute(f"select cipher, mac, kex, hostkey, round, window_bytes, window_s, wall_s, echoes, echoes_ref from samples where mode='{mode}' and round>0 and outcome='ok'").fetchall()
    suites = {}
    for c, m, k, h, rnd, wb, ws, wall, e, r in rows:
        suites.setdefault((c, m, k, h), {}).setdefault(rnd, []).append(fig(mode, wb, ws, wall, e, r))
    rounds = sorted({r for s in suites.values() for r in s})
    suites = {k: v for k, v in suites.items() if len(v) >= len(rounds) - 1}
    if len(suites) < 4 or len(rounds) < N + 3: continue
    hit = {'plain': 0, 'moderated': 0}; total = 0; width = {'plain': [], 'moderated': []}
    for _ in range(400):
        pick = set(rng.sample(rounds, N))
        draws = {}
        for key, by in suites.items():
            a = [x for r in pick for x in by.get(r, [])][:N]
            b = [x for r, xs in by.items() if r not in pick for x in xs]
            if len(a) == N and len(b) >= 2: draws[key] = (a, b)
        s2 = [(st.stdev(a)/st.mean(a))**2 for a, _ in draws.values()]
        usable = [(v, N-1) for v in s2 if v > 0]
        d0, s02 = smyth([u[0] for u in usable], [u[1] for u in usable]); D0.setdefault(mode, []).append(d0)
        for a, b in draws.values():
            m, sd = st.mean(a), st.stdev(a); truth = st.mean(b); widen = math.sqrt(1 + N / len(b))
            plain = tdist.ppf(.975, N-1) * sd / math.sqrt(N)
            post = (d0 * s02 + (N-1) * (sd/m)**2) / (d0 + N - 1)
            mod = tdist.ppf(.975, math.floor(d0 + N - 1)) * m * math.sqrt(post) / math.sqrt(N)
            for name, ci in (('plain', plain), ('moderated', mod)):
                hit[name] += abs(truth - m) <= ci * widen; width[name].append(ci / m)
            total += 1
    print(f"   d0 median {st.median(D0[mode]):.1f}, p10 {sorted(D0[mode])[len(D0[mode])//10]:.1f}")
    print(f"{mode}: {len(suites)} suites x {len(rounds)} rounds, n = {N}: coverage plain {hit['plain']/total:.3f}, moderated {hit['moderated']/total:.3f}; median half-width plain ±{st.median(width['plain'])*100:.1f}%, moderated ±{st.median(width['moderated'])*100:.1f}%")
