"""Usage: interaction.py DB [RUN] [REFERENCE-MAC] (a run of every cipher x MAC pair).

Is cipher x MAC additive? Two-way ANOVA with replication on per-byte time (transfers)
or seconds (echo), and the cross design's predictions against the measured pairs."""
import sqlite3, struct, sys, statistics as st, math, itertools
from collections import defaultdict
db = sqlite3.connect(sys.argv[1])
run = sys.argv[2] if len(sys.argv) > 2 else None
refc = 'aes128-ctr'; refm = sys.argv[3] if len(sys.argv) > 3 else 'umac-64-etm@openssh.com'
def fig(mode, wb, ws, blob):
    if mode == 'echo':
        v = struct.unpack('<%df' % (len(blob)//4), blob); return st.median(v)
    return ws / wb  # seconds per byte
def spearman(a, b):
    def rk(v):
        o = sorted(range(len(v)), key=lambda i: v[i]); r = [0]*len(v)
        for k, i in enumerate(o): r[i] = k
        return r
    ra, rb = rk(a), rk(b); n = len(a)
    return 1 - 6*sum((x-y)**2 for x, y in zip(ra, rb))/(n*(n*n-1))
q = "select mode,cipher,mac,window_bytes,window_s,echoes from samples where round>0 and outcome='ok' and mac is not null and compression is null"
if run: q += f" and run_id={run}"
cells = defaultdict(list)
for mode, c, m, wb, ws, blob in db.execute(q):
    cells[(mode, c, m)].append(fig(mode, wb, ws, blob))
for mode in ('send', 'receive', 'echo'):
    cs = sorted({c for (md, c, m) in cells if md == mode}); ms = sorted({m for (md, c, m) in cells if md == mode})
    if not cs: continue
    full = all((mode, c, m) in cells and len(cells[(mode, c, m)]) >= 2 for c in cs for m in ms)
    mean = {(c, m): st.mean(cells[(mode, c, m)]) for c in cs for m in ms if (mode, c, m) in cells}
    # Two-way ANOVA (balanced enough: use cell means for interaction, within-cell var).
    gm = st.mean(mean.values())
    cm = {c: st.mean(mean[(c, m)] for m in ms if (c, m) in mean) for c in cs}
    mm = {m: st.mean(mean[(c, m)] for c in cs if (c, m) in mean) for m in ms}
    resid = [mean[(c, m)] - cm[c] - mm[m] + gm for (c, m) in mean]
    ssw = sum(sum((x - mean[(c, m)])**2 for x in cells[(mode, c, m)]) for (c, m) in mean)
    dfw = sum(len(cells[(mode, c, m)]) - 1 for (c, m) in mean)
    nbar = st.mean(len(cells[(mode, c, m)]) for (c, m) in mean)
    msw = ssw / dfw
    ssi = nbar * sum(r*r for r in resid); dfi = (len(cs)-1)*(len(ms)-1)
    print(f"{mode}: {len(cs)} ciphers x {len(ms)} MACs, full={full}; interaction MS / within MS = {ssi/dfi/msw:.2f} (df {dfi}, {dfw})")
    print(f"   cell mean rel. residual of additive fit: sd {st.pstdev([r/mean[k] for r,k in zip(resid, mean)])*100:.1f}%; within-cell CV {math.sqrt(msw)/gm*100:.1f}% per sample, {math.sqrt(msw/nbar)/gm*100:.1f}% per cell mean")
    # Cross design around (refc, refm).
    if (refc, refm) in mean:
        pred, meas = [], []
        for c, m in itertools.product(cs, ms):
            if c == refc or m == refm or (c, m) not in mean: continue
            if (c, refm) not in mean or (refc, m) not in mean: continue
            p = mean[(c, refm)] + mean[(refc, m)] - mean[(refc, refm)]
            pred.append(p); meas.append(mean[(c, m)])
        ratios = [p/x for p, x in zip(pred, meas)]
        lr = [math.log(r) for r in ratios]
        mu, sd = st.mean(lr), st.stdev(lr)
        within5 = sum(abs(r-1) <= 0.05 for r in ratios)
        print(f"   cross design around {refc}+{refm}: {len(pred)} sums; sum/measured geo-mean {math.exp(mu):.3f}, sd of log {sd*100:.1f}%, within 5%: {within5}; spearman {spearman(pred, meas):.3f}")
        # Additive LS fit on all cells for comparison.
        lsr = [ (cm[c] + mm[m] - gm)/mean[(c, m)] for (c, m) in mean]
        print(f"   LS additive fit over all cells: fitted/measured sd {st.pstdev(lsr)*100:.1f}%")
