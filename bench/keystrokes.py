#!/usr/bin/env python3
"""What ObscureKeystrokeTiming does to typing in a terminal (issue "Interactive work").

Starts `sshbench sandbox` (with DELAY added, if given), then for each variant of the
option runs `SSH -tt -o ObscureKeystrokeTiming=V sandbox 'stty raw -echo; cat'` on a
pseudo-terminal and types as a person does: bursts of KEYS keys 40-120 ms apart (drawn
from a fixed seed: a metronome at a multiple of the 20 ms clock would always land at one
phase of it), each burst after a pause
(alternately SHORT_PAUSE_S, within the 1-3 s the client keeps sending chaff after the last
key, and LONG_PAUSE_S, past it). Each key's echo is timed (write to the echo's read).
Prints, per variant, the median and 90th percentile of the keys by position in the burst
(first, later) and by the pause before the burst.

Usage: bench/keystrokes.py SSH [SSHBENCH] [ROUNDS] [DELAY]
"""
import os
import pty
import random
import select
import statistics
import subprocess
import sys
import time

KEYS, GAP_MS = 8, (40, 120)
SHORT_PAUSE_S, LONG_PAUSE_S = 0.5, 4.0
VARIANTS = ["yes", "no", "interval:40"]


def sandbox(sshbench, delay):
    extra = ["--delay", delay] if delay else []
    p = subprocess.Popen([sshbench, "sandbox", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p, p.stdout.readline().strip()


def wait_for(fd, want, deadline):
    got = b""
    while want not in got:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no {want!r} after {got!r}")
        got += os.read(fd, 4096)
    return time.monotonic()


def session(ssh, config, variant, rounds):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(ssh, [ssh, "-tt", "-F", config, "-o", f"ObscureKeystrokeTiming={variant}",
                       "sshbench-sandbox", "stty raw -echo; echo READY; exec cat"])
    wait_for(fd, b"READY", time.monotonic() + 15)
    time.sleep(0.3)
    out = []  # (pause before the burst, position in it, seconds to the echo)
    gaps = random.Random(7)
    for r in range(rounds):
        for pause in (LONG_PAUSE_S, SHORT_PAUSE_S):
            time.sleep(pause)
            at = time.monotonic()
            for k in range(KEYS):
                at += gaps.uniform(*GAP_MS) / 1000 if k else 0
                time.sleep(max(0.0, at - time.monotonic()))
                key = bytes([ord("a") + k])
                sent = time.monotonic()
                os.write(fd, key)
                out.append((pause, k, wait_for(fd, key, sent + 5) - sent))
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return out


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    ssh = sys.argv[1]
    sshbench = sys.argv[2] if len(sys.argv) > 2 else "target/release/sshbench"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    sb, config = sandbox(sshbench, sys.argv[4] if len(sys.argv) > 4 else None)
    try:
        for v in VARIANTS:
            got = session(ssh, config, v, rounds)
            for pause in (LONG_PAUSE_S, SHORT_PAUSE_S):
                for name, pick in (("first", lambda k: k == 0), ("later", lambda k: k > 0)):
                    ms = [t * 1e3 for p, k, t in got if p == pause and pick(k)]
                    print(f"{v:12} after {pause:3.1f} s  {name:5} key: n={len(ms):3}  "
                          f"p50 {statistics.median(ms):6.2f} ms  p90 {pct(ms, 0.9):6.2f} ms  "
                          f"max {max(ms):6.2f} ms")
    finally:
        sb.terminate()
        sb.wait()


if __name__ == "__main__":
    main()
