"""Usage: sequence.py CIPHER BLOCKS

bench/run.sh's accuracy sequence for one suite's send, with a control: references on a
sandbox of their own (benchkit, 4 s, send and receive in turn, on the client's CPUs), then
an sshbench run of the suite (`--mode send,receive --rounds 6`, its own sandbox), then
plain-ssh sessions of that run's send ramps and windows (a control master each, a
server-side mark after the ramp, the count at the end) on the references' sandbox, then
references again. Per block, sshbench's figure and the plain sessions' mean against the
mean of the whole send references on either side; pooled with 95% intervals (Student's
t on the logarithms; two blocks at least). Needs sqlite3; build target/release/sshbench and
target/release/examples/benchkit first."""
import contextlib, os, subprocess, sys, time, statistics as st, math, tempfile, shutil
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, 'target/release/sshbench')
KIT = os.path.join(ROOT, 'target/release/examples/benchkit')
# Student's t (two-sided 95%) by degrees of freedom; 2.0 past the table.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145}
HOST = 'sshbench-sandbox'


class Bench:
    """The references' sandbox and what every step needs to reach it."""

    def __init__(self, cipher, sandbox_config, work):
        cpus = subprocess.run([KIT, 'client-cpus'], capture_output=True,
                              text=True).stdout.strip()
        self.pin = ['taskset', '-c', cpus] if cpus else []
        self.cipher, self.config, self.work = cipher, sandbox_config, work

    def reference(self, mode):
        """One 4 s benchkit reference: its whole rate, MB/s."""
        out = subprocess.run(self.pin + [
            KIT, 'reference', '--config', self.config, '--host', HOST, '--cipher',
            self.cipher, '--mac', '-', '--mode', mode, '--bytes', str(16 << 30),
            '--seconds', '4'], capture_output=True, text=True, check=True).stdout.split()
        moved, total = map(float, out[:2])
        return moved / total / 1e6

    def references(self, block):
        """Both directions' references, in turn first as bench/run.sh has them: send's."""
        order = ['send', 'receive'] if block % 2 == 0 else ['receive', 'send']
        return {m: self.reference(m) for m in order}['send']

    def sshbench(self, block):
        """An sshbench run of the suite: its send figure and its samples' (window, ramp)."""
        db = run_suite(self.work, block, self.cipher)
        out = subprocess.run([KIT, 'suites', '--db', db, '--run', '1', '--mode', 'send'],
                             capture_output=True, text=True).stdout
        rows = subprocess.run(['sqlite3', db, "select window_bytes, bytes - window_bytes "
                               "from samples where mode = 'send' and round > 0 "
                               "and outcome = 'ok'"],
                              capture_output=True, text=True).stdout
        shapes = [tuple(map(int, line.split('|'))) for line in rows.split()]
        return float(out.split('\t')[1]) / 1e6, shapes

    def plain(self, shapes):
        """Plain sessions of those shapes, each over a control master of its own: their
        mean rate from the server's mark to its count, MB/s."""
        rates = []
        for window, ramp in shapes:
            path = f'/dev/shm/sequence.{os.getpid()}'
            with open(path, 'wb') as f:
                f.truncate(ramp + window)
            fd = os.open(path, os.O_RDONLY)
            os.unlink(path)
            ssh = self.pin + ['ssh', '-F', self.config, '-o', 'BatchMode=yes', '-T', '-c',
                              self.cipher, '-S', os.path.join(self.work, 'm')]
            subprocess.run(ssh + ['-M', '-f', '-N', HOST], check=True)
            p = subprocess.Popen(ssh + [HOST, f"sh -c 'head -c {ramp} > /dev/null && "
                                        "echo MARK; wc -c'"],
                                 stdin=fd, stdout=subprocess.PIPE, text=True)
            if p.stdout.readline().strip() != 'MARK':
                sys.exit('no mark')
            t0 = time.monotonic()
            n = int(p.stdout.readline())
            rates.append(n / (time.monotonic() - t0) / 1e6)
            p.wait()
            os.close(fd)
            subprocess.run(ssh + ['-O', 'exit', HOST], stderr=subprocess.DEVNULL)
        return st.mean(rates)


def run_suite(work, block, cipher):
    """An sshbench run of one cipher's suite as the bench's accuracy blocks run it
    (`--mode send,receive --rounds 6`, its own sandbox); the path of its database."""
    db = os.path.join(work, f'r{block}.sqlite')
    subprocess.run([BIN, 'run', '-q', '--db', db, '--mode', 'send,receive',
                    '--rounds', '6', '--ciphers', cipher],
                   env=dict(os.environ, XDG_DATA_HOME=work),
                   stdout=subprocess.DEVNULL, check=True)
    return db


def pooled(name, logs, width=0):
    """Print the logarithms' mean as a ratio with its 95% interval, `name` padded to
    `width`."""
    m = st.mean(logs)
    h = T975.get(len(logs) - 1, 2.0) * st.stdev(logs) / math.sqrt(len(logs))
    print(f'{name.ljust(width)} {math.exp(m):.3f} ({math.exp(m - h):.3f}-'
          f'{math.exp(m + h):.3f}), n = {len(logs)}')


@contextlib.contextmanager
def sandbox(prefix):
    """A work dir and a sandbox of this tree's sshbench for the references: (its ssh
    config, the dir), both gone afterwards."""
    work = tempfile.mkdtemp(prefix=prefix)
    sb = subprocess.Popen([BIN, 'sandbox'], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    try:
        yield sb.stdout.readline().strip(), work
    finally:
        sb.terminate()
        sb.wait()
        shutil.rmtree(work)


def main():
    if len(sys.argv) != 3 or int(sys.argv[2]) < 2:
        sys.exit(__doc__)
    cipher, blocks = sys.argv[1], int(sys.argv[2])
    ours, plains = [], []
    with sandbox('sequence.') as (config, work):
        bench = Bench(cipher, config, work)
        before = bench.references(0)
        for block in range(1, blocks + 1):
            o, shapes = bench.sshbench(block)
            p = bench.plain(shapes)
            after = bench.references(block)
            r = (before + after) / 2
            ours.append(math.log(o / r))
            plains.append(math.log(p / r))
            print(f'block {block}: sshbench {o:7.1f} plain-shape {p:7.1f} refs {before:7.1f} '
                  f'{after:7.1f}: {o / r:.3f} {p / r:.3f}', flush=True)
            before = after
    pooled('sshbench/ref', ours)
    pooled('plain-shape/ref', plains)


if __name__ == '__main__':
    main()
