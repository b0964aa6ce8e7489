"""Usage: sequence.py CIPHER BLOCKS

bench/run.sh's accuracy sequence for one suite's send, with a control: references on a
sandbox of their own (benchkit, 4 s, send and receive in turn, on the client's CPUs), then
an sshbench run of the suite (`--mode send,receive --rounds 6`, its own sandbox), then
plain-ssh sessions of that run's send ramps and windows (a control master each, a
server-side mark after the ramp, the count at the end) on the references' sandbox, then
references again. Per block, sshbench's figure and the plain sessions' mean against the
mean of the whole send references on either side; pooled with 95% intervals (Student's
t on the logarithms). Needs sqlite3; build target/release/sshbench and
target/release/examples/benchkit first."""
import os, subprocess, sys, time, statistics as st, math, tempfile, shutil
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, 'target/release/sshbench')
KIT = os.path.join(ROOT, 'target/release/examples/benchkit')
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
if len(sys.argv) != 3:
    sys.exit(__doc__)
cipher, blocks = sys.argv[1], int(sys.argv[2])
cpus = subprocess.run([KIT, 'client-cpus'], capture_output=True, text=True).stdout.strip()
pin = (['taskset', '-c', cpus] if cpus else [])
tmp = tempfile.mkdtemp(); env = dict(os.environ, XDG_DATA_HOME=tmp)
sb = subprocess.Popen([BIN, 'sandbox'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
config = sb.stdout.readline().strip()
def ref(mode):
    out = subprocess.run(pin + [KIT, 'reference', '--config', config, '--host', 'sshbench-sandbox', '--cipher', cipher, '--mac', '-',
                                '--mode', mode, '--bytes', str(16 << 30), '--seconds', '4'], capture_output=True, text=True, check=True).stdout.split()
    moved, total, steady, sb_ = map(float, out)
    return moved / total / 1e6
def refs(i):
    order = ['send', 'receive'] if i % 2 == 0 else ['receive', 'send']
    return {m: ref(m) for m in order}['send']
def ours(i):
    db = f'{tmp}/r{i}.sqlite'
    subprocess.run([BIN, 'run', '-q', '--db', db, '--mode', 'send,receive', '--rounds', '6', '--ciphers', cipher], env=env, stdout=subprocess.DEVNULL, check=True)
    out = subprocess.run([KIT, 'suites', '--db', db, '--run', '1', '--mode', 'send'], capture_output=True, text=True).stdout
    w = subprocess.run(['sqlite3', db, "select window_bytes, bytes-window_bytes from samples where mode='send' and round>0 and outcome='ok'"], capture_output=True, text=True).stdout
    return float(out.split('\t')[1]) / 1e6, [tuple(map(int, l.split('|'))) for l in w.split()]
def plain(shapes):
    rates = []
    for wb, ramp in shapes:
        path = f'/dev/shm/seq.{os.getpid()}'
        with open(path, 'wb') as f: f.truncate(ramp + wb)
        fd = os.open(path, os.O_RDONLY); os.unlink(path)
        base = pin + ['ssh', '-F', config, '-o', 'BatchMode=yes', '-T', '-c', cipher, '-S', f'{tmp}/m']
        subprocess.run(base + ['-M', '-f', '-N', 'sshbench-sandbox'], check=True)
        p = subprocess.Popen(base + ['sshbench-sandbox', f"sh -c 'head -c {ramp} > /dev/null && echo MARK; wc -c'"], stdin=fd, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == 'MARK'; t0 = time.monotonic()
        n = int(p.stdout.readline()); t = time.monotonic() - t0
        p.wait(); os.close(fd)
        subprocess.run(base + ['-O', 'exit', 'sshbench-sandbox'], stderr=subprocess.DEVNULL)
        rates.append(n / t / 1e6)
    return st.mean(rates)
a_r, b_r = [], []
try:
    before = refs(0)
    for i in range(1, blocks + 1):
        o, shapes = ours(i); p = plain(shapes); after = refs(i)
        r = (before + after) / 2
        a_r.append(math.log(o / r)); b_r.append(math.log(p / r))
        print(f'block {i}: sshbench {o:7.1f} plain-shape {p:7.1f} refs {before:7.1f} {after:7.1f}: {o/r:.3f} {p/r:.3f}', flush=True)
        before = after
finally:
    sb.terminate(); sb.wait(); shutil.rmtree(tmp)
for name, v in [('sshbench/ref', a_r), ('plain-shape/ref', b_r)]:
    m = st.mean(v); h = T975.get(len(v) - 1, 2.0) * st.stdev(v) / math.sqrt(len(v))
    print(f'{name} {math.exp(m):.3f} ({math.exp(m-h):.3f}-{math.exp(m+h):.3f}), n = {len(v)}')
