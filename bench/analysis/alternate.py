"""Usage: alternate.py DB (runs 1, 3, 5: --connections sample; 2, 4, 6: suite).

Alternating runs, a connection per sample (odd runs) and per suite (even runs): per
suite and mode the ratio of the two ways' means, pooled (geometric mean, 95% t interval
over suites), for the figure and for the CPU per GB of each side."""
import sqlite3, sys, math, statistics as st, struct
from scipy.stats import t as tdist
db = sqlite3.connect(sys.argv[1])
way = {r: ('sample' if r % 2 else 'suite') for (r,) in db.execute("select id from runs")}
def val(mode, row):
    wb, ws, e, r, ccpu, scpu, sbytes = row
    if mode == 'echo':
        return st.median(struct.unpack('<%df' % (len(e)//4), e)), None, None
    c = ccpu / wb * 1e9 if ccpu is not None else None
    s = scpu / sbytes * 1e9 if scpu is not None and sbytes else None
    return wb / ws, c, s
for mode in ('send', 'receive', 'echo'):
    data = {}
    for run, c, m, *row in db.execute(f"select run_id, cipher, coalesce(mac,'-'), window_bytes, window_s, echoes, echoes_ref, client_window_cpu_s, server_cpu_s, server_cpu_bytes from samples where mode='{mode}' and round>0 and outcome='ok'"):
        f, cc, sc = val(mode, row)
        d = data.setdefault((c, m), {'sample': [[], [], []], 'suite': [[], [], []]})[way[run]]
        d[0].append(f); cc is not None and d[1].append(cc); sc is not None and d[2].append(sc)
    for k, name in ((0, 'figure'), (1, 'client CPU/GB'), (2, 'server CPU/GB')):
        lr = [math.log(st.mean(v['suite'][k]) / st.mean(v['sample'][k])) for v in data.values() if v['suite'][k] and v['sample'][k]]
        if len(lr) < 2: continue
        mu, sd = st.mean(lr), st.stdev(lr); h = tdist.ppf(.975, len(lr)-1) * sd / math.sqrt(len(lr))
        print(f"{mode} {name}: per suite / per sample {math.exp(mu):.3f} ({math.exp(mu-h):.3f}-{math.exp(mu+h):.3f}), {len(lr)} suites")
