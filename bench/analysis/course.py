"""Usage: course.py CIPHER [MAC|-] REPS [SLICES]

The time course of plain-ssh sends, as bench/run.sh's references make them: REPS
transfers of CIPHER (and MAC) to a sandbox of this tree's sshbench, ssh on the client's
CPUs, stdin a sparse file of zeros in /dev/shm whose offset (ssh's progress) is read
every 10 ms from the remote ready line on. Prints each transfer's rate in the slices
(seconds since the ready line, default 0,0.1,0.3,0.6,1,1.5,2,2.5,3,4), then the medians,
and the whole transfer's rate over its last three quarters' (a 4 s reference's ratio).
Build target/release/sshbench and target/release/examples/benchkit first."""
import os, statistics as st, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, 'target/release/sshbench')
KIT = os.path.join(ROOT, 'target/release/examples/benchkit')


def transfer(ssh, edges):
    """One send; (seconds, offset) every 10 ms from the ready line to the last edge."""
    path = f'/dev/shm/course.{os.getpid()}'
    with open(path, 'wb') as f:
        f.truncate(64 << 30)
    fd = os.open(path, os.O_RDONLY)
    os.unlink(path)
    p = subprocess.Popen(ssh + ["sh -c 'echo READY; exec wc -c'"], stdin=fd,
                         stdout=subprocess.PIPE, text=True)
    try:
        if p.stdout.readline().strip() != 'READY':
            sys.exit('no ready line')
        t0 = time.monotonic()
        points = [(0.0, os.lseek(fd, 0, os.SEEK_CUR))]
        while points[-1][0] < edges[-1]:
            time.sleep(0.01)
            points.append((time.monotonic() - t0, os.lseek(fd, 0, os.SEEK_CUR)))
        return points
    finally:
        p.kill()
        p.wait()
        os.close(fd)


def rate(points, a, b):
    (ta, ba) = next(q for q in points if q[0] >= a)
    (tb, bb) = next(q for q in points if q[0] >= b)
    return (bb - ba) / (tb - ta) / 1e6


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    cipher, mac, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    edges = [float(x) for x in (sys.argv[4] if len(sys.argv) > 4
                                else '0,0.1,0.3,0.6,1,1.5,2,2.5,3,4').split(',')]
    sb = subprocess.Popen([BIN, 'sandbox'], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    try:
        config = sb.stdout.readline().strip()
        cpus = subprocess.run([KIT, 'client-cpus'], capture_output=True,
                              text=True).stdout.strip()
        ssh = (['taskset', '-c', cpus] if cpus else []) + [
            'ssh', '-F', config, '-o', 'BatchMode=yes', '-T', '-c', cipher]
        ssh += ([] if mac == '-' else ['-m', mac]) + ['sshbench-sandbox']
        rows, wholes = [], []
        for _ in range(reps):
            points = transfer(ssh, edges)
            rows.append([rate(points, a, b) for a, b in zip(edges, edges[1:])])
            end = edges[-1]
            wholes.append(rate(points, 0, end) / rate(points, end / 4, end))
            print(' '.join(f'{x:7.0f}' for x in rows[-1]), flush=True)
    finally:
        sb.terminate()
        sb.wait()
    print('median ' + ' '.join(f'{st.median(c):7.0f}' for c in zip(*rows)))
    print('slices', edges)
    print(f'whole over the last three quarters: median {st.median(wholes):.3f}, '
          f'{min(wholes):.3f}-{max(wholes):.3f}')


if __name__ == '__main__':
    main()
