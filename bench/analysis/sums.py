"""Usage: sums.py DB (a --pairs run).

The cross design's sums against the pairs measured, from a --pairs run: per suite the
mean over all rounds; sums in seconds (connect, echo ratio) or seconds per byte."""
import sqlite3, sys, math, struct, statistics as st, itertools
db = sqlite3.connect(sys.argv[1])
def fig(mode, wb, ws, wall, e, r):
    if mode == 'echo':
        a = st.median(struct.unpack('<%df' % (len(e)//4), e)); b = st.median(struct.unpack('<%df' % (len(r)//4), r)) if r else 1
        return a / b
    return wall if mode == 'connect' else ws / wb
def rank(v):
    o = sorted(range(len(v)), key=lambda i: v[i]); r = [0]*len(v)
    for k, i in enumerate(o): r[i] = k
    return r
def spearman(a, b):
    ra, rb = rank(a), rank(b); n = len(a)
    return 1 - 6 * sum((x - y)**2 for x, y in zip(ra, rb)) / (n * (n*n - 1))
for mode, (ka, kb, ra, rb) in {'connect': ('kex', 'hostkey', 'curve25519-sha256', 'ssh-ed25519'),
                               'send': ('cipher', 'mac', 'aes128-ctr', 'hmac-sha2-256-etm@openssh.com'),
                               'receive': ('cipher', 'mac', 'aes128-ctr', 'hmac-sha2-256-etm@openssh.com'),
                               'echo': ('cipher', 'mac', 'aes128-ctr', 'hmac-sha2-256-etm@openssh.com')}.items():
    cells = {}
    for a, b, wb, ws, wall, e, r in db.execute(f"select {ka}, {kb}, window_bytes, window_s, wall_s, echoes, echoes_ref from samples where mode='{mode}' and round>0 and outcome='ok' and {kb} is not null"):
        cells.setdefault((a, b), []).append(fig(mode, wb, ws, wall, e, r))
    mean = {k: st.mean(v) for k, v in cells.items()}
    As = sorted({a for a, _ in mean}); Bs = sorted({b for _, b in mean})
    pred, meas = [], []
    for a, b in itertools.product(As, Bs):
        if a == ra or b == rb or (a, b) not in mean: continue
        pred.append(mean[(a, rb)] + mean[(ra, b)] - mean[(ra, rb)]); meas.append(mean[(a, b)])
    if len(pred) < 2: continue  # the mode was not measured in pairs
    lr = [math.log(p / m) for p, m in zip(pred, meas)]
    mu, sd = st.mean(lr), st.stdev(lr); half = 2.0 * sd / math.sqrt(len(lr))
    within = sum(abs(x) <= math.log(1.05) for x in lr)
    # The figure as reported: a rate for transfers (a sum's seconds per byte inverted).
    print(f"{mode}: {len(pred)} sums; sum/measured {math.exp(mu):.3f} ({math.exp(mu-half):.3f}-{math.exp(mu+half):.3f}), sd {sd*100:.1f}%, {within} within 5%; Spearman {spearman(pred, meas):.3f}")
