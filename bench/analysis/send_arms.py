"""Usage: send_arms.py CIPHER BLOCKS

bench/run.sh's accuracy sequence for one AEAD suite's send, with plain-ssh sends beside
each sshbench run and the CPU each side spends per byte. A block: both directions'
references (benchkit, 4 s; the send one timed from the ready line, with the CPU of the
client's ssh and of the session's sshd from /proc/PID/schedstat), an sshbench run of the
suite (`--mode send,receive --rounds 6`, its own sandbox), then on the references'
sandbox plain 4 s sends timed as sshbench times a window (from the server's mark after
an 8 MiB ramp to the count), once over a control master and once directly. Per block,
each against the mean of the references on either side, and sshbench against the direct
plain send; pooled with 95% intervals (Student's t on the logarithms). Linux; needs
sqlite3 and taskset; build target/release/sshbench and target/release/examples/benchkit
first."""
import math, os, subprocess, sys, time

from sequence import HOST, KIT, pooled, run_suite, sandbox

# The session's sshd (the shell's parent) and its CPU, then the mark and the count.
MARKED = ("sh -c 'head -c {ramp} > /dev/null; read -r a b c < /proc/$PPID/schedstat; "
          "echo $a MARK; wc -c; read -r a b c < /proc/$PPID/schedstat; echo $a'")
READY = ("sh -c 'read -r a b c < /proc/$PPID/schedstat; echo $a READY; wc -c; "
         "read -r a b c < /proc/$PPID/schedstat; echo $a'")


def ran(pid):
    """Seconds process `pid` has run."""
    with open(f'/proc/{pid}/schedstat') as f:
        return int(f.read().split()[0]) / 1e9


class Bench:
    def __init__(self, cipher, config, work):
        cpus = subprocess.run([KIT, 'client-cpus'], capture_output=True,
                              text=True).stdout.strip()
        self.pin = ['taskset', '-c', cpus] if cpus else []
        self.ssh = self.pin + ['ssh', '-F', config, '-o', 'BatchMode=yes', '-T', '-c', cipher]
        self.cipher, self.config, self.work = cipher, config, work

    def send(self, script, size, master=False):
        """One plain send of `size` zeros: MB/s from the server's first line to its
        count, and both sides' CPU ns per byte over that time."""
        path = os.path.join('/dev/shm', f'send_arms.{os.getpid()}')
        with open(path, 'wb') as f:
            f.truncate(size)
        fd = os.open(path, os.O_RDONLY)
        os.unlink(path)
        ssh = list(self.ssh)
        if master:
            ssh += ['-S', os.path.join(self.work, 'm')]
            subprocess.run(ssh + ['-M', '-f', '-N', HOST], check=True)
            said = subprocess.run(ssh + ['-O', 'check', HOST], capture_output=True,
                                  text=True).stderr
            crypto = int(said.split('pid=')[1].split(')')[0])
        p = subprocess.Popen(ssh + [HOST, script], stdin=fd, stdout=subprocess.PIPE, text=True)
        try:
            server0 = int(p.stdout.readline().split()[0]) / 1e9
            t0 = time.monotonic()
            client = crypto if master else p.pid
            client0 = ran(client)
            n = int(p.stdout.readline())
            t1 = time.monotonic()
            client1 = ran(client)
            server1 = int(p.stdout.readline()) / 1e9
        finally:
            p.wait()
            os.close(fd)
            if master:
                subprocess.run(ssh + ['-O', 'exit', HOST], stderr=subprocess.DEVNULL)
        return {'rate': n / (t1 - t0) / 1e6, 'server ns/B': (server1 - server0) / n * 1e9,
                'client ns/B': (client1 - client0) / n * 1e9}

    def references(self, block):
        """Both directions' references, send first in even blocks as bench/run.sh has
        them: the send's figures."""
        order = ['send', 'receive'] if block % 2 == 0 else ['receive', 'send']
        for mode in order:
            if mode == 'send':
                sent = self.send(READY, 6 << 30)
            else:
                subprocess.run(self.pin + [
                    KIT, 'reference', '--config', self.config, '--host', HOST,
                    '--cipher', self.cipher, '--mac', '-', '--mode', 'receive', '--bytes',
                    str(16 << 30), '--seconds', '4'], capture_output=True, check=True)
        return sent

    def sshbench(self, block):
        """An sshbench run of the suite: its send windows' figures."""
        db = run_suite(self.work, block, self.cipher)
        q = ("select sum(window_bytes) / sum(window_s) / 1e6, "
             "sum(server_sshd_cpu_s) / sum(server_cpu_bytes) * 1e9, "
             "sum(client_window_cpu_s) / sum(window_bytes) * 1e9 from samples "
             "where mode = 'send' and round > 0 and outcome = 'ok'")
        out = subprocess.run(['sqlite3', db, q], capture_output=True, text=True,
                             check=True).stdout.strip().split('|')
        return dict(zip(['rate', 'server ns/B', 'client ns/B'], map(float, out)))


def main():
    if len(sys.argv) != 3 or int(sys.argv[2]) < 2:
        sys.exit(__doc__)
    cipher, blocks = sys.argv[1], int(sys.argv[2])
    arms = {'sshbench': [], 'plain 4 s, master, marked': [], 'plain 4 s, marked': []}
    refs = []
    with sandbox('send_arms.') as (config, work):
        bench = Bench(cipher, config, work)
        marked = MARKED.format(ramp=8 << 20)
        refs.append(bench.references(0))
        for block in range(1, blocks + 1):
            arms['sshbench'].append(bench.sshbench(block))
            arms['plain 4 s, master, marked'].append(
                bench.send(marked, (8 << 20) + (6 << 30), master=True))
            arms['plain 4 s, marked'].append(bench.send(marked, (8 << 20) + (6 << 30)))
            refs.append(bench.references(block))
            print(f'block {block}: ' + ', '.join(
                f"{a} {v[-1]['rate']:.0f}" for a, v in arms.items()) +
                f", references {refs[-2]['rate']:.0f} {refs[-1]['rate']:.0f} MB/s", flush=True)
    for arm, figures in arms.items():
        for key in ['rate', 'server ns/B', 'client ns/B']:
            pooled(f'{arm}, {key} / references', width=52, logs=[
                math.log(f[key] / ((refs[b][key] + refs[b + 1][key]) / 2))
                for b, f in enumerate(figures)])
    direct = arms['plain 4 s, marked']
    pooled('sshbench / plain 4 s, marked', width=52, logs=[
        math.log(f['rate'] / d['rate']) for f, d in zip(arms['sshbench'], direct)])


if __name__ == '__main__':
    main()
