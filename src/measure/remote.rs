//! The commands sshbench runs on the server, written to work under any login shell.
//!
//! sshd hands the command string to the user's login shell (`$SHELL -c "..."`), which may
//! be sh, bash, zsh, csh/tcsh or fish. Every command is therefore either a single word
//! every shell understands (`exit 0`) or `sh -c '<script>'`, where the script contains no
//! single quote, backslash, `!` (csh history expansion happens even inside single quotes)
//! or newline. Everything else is POSIX sh plus `head -c` and `mktemp`, which every
//! Linux, BSD, macOS and busybox system has.

use crate::model::CpuWindow;
use std::time::Duration;

/// The line the remote side prints when the session is ready and the clock may start.
pub const READY: &str = "SSHBENCH-READY";

/// Size of the payload block the client uploads before a receive sample.
pub const RECEIVE_BLOCK: usize = 1 << 20;

/// Characters that would break the quoting in one of the supported login shells.
const FORBIDDEN: [char; 5] = ['\'', '\\', '!', '\n', '\r'];

/// Wrap a POSIX sh script so that any login shell passes it to `sh` unchanged.
pub fn sh(script: &str) -> String {
    assert!(
        !script.contains(FORBIDDEN),
        "remote script contains a character that is unsafe in some login shell: {script}"
    );
    format!("sh -c '{script}'")
}

/// A line from the server as it may be shown: control characters as `?`, at most
/// [`SAID_CHARS`] characters.
pub fn printable(line: &str) -> String {
    let mut chars = line.trim().chars();
    let mut out: String = (chars.by_ref().take(SAID_CHARS))
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

/// How much of a server's line an error message quotes.
pub const SAID_CHARS: usize = 160;

/// `connect`: the most trivial command, a builtin in every shell.
pub fn connect_command() -> String {
    "exit 0".to_string()
}

/// The line the remote side echoes for the client's `ping` line (one round trip).
pub const PONG: &str = "SSHBENCH-PONG";
/// The line the remote side prints once the ramp-up bytes have arrived.
pub const MARK: &str = "SSHBENCH-MARK";

/// The line of [`shell_start_command`].
pub const SHELL: &str = "SSHBENCH-SHELL";

/// Print how long the server's login shell ran before the command did (its start-up
/// files: a `~/.bashrc` that loads a version manager costs every connection tenths of
/// a second): `SSHBENCH-SHELL START UPTIME HZ`, the start in clock ticks since boot of
/// the process that sshd (or dropbear) started for the session and the uptime now, or
/// `SSHBENCH-SHELL -` where Linux's `/proc` is not there. A shell that ran the command
/// by exec keeps its own start time; one that forked is this shell's parent.
pub fn shell_start_command() -> String {
    sh(concat!(
        r#"s=$$; k=0; for i in 1 2 3 4; do read -r l 2>/dev/null < /proc/$s/stat || break; "#,
        r#"l=${l##*)}; set -- $l; p=$2; n=; read -r n 2>/dev/null < /proc/$p/comm; "#,
        r#"case $n in *sshd*|*dropbear*) k=1; break;; esac; s=$p; done; "#,
        r#"read -r up x 2>/dev/null < /proc/uptime; l=; [ $k = 1 ] && read -r l < /proc/$s/stat; "#,
        r#"l=${l##*)}; set -- $l; "#,
        r#"if [ -n "${20}" ] && [ -n "$up" ]; then echo SSHBENCH-SHELL ${20} $up "#,
        r#"$(getconf CLK_TCK 2>/dev/null || echo 100); else echo SSHBENCH-SHELL -; fi; "#,
        // The CPU, which decides how the server ranks ciphers: `SSHBENCH-HOST CPUS AES SHA
        // MODEL`, `-` for what is not told (Linux's cpuinfo; the BSDs' and macOS' sysctl).
        r#"c=$(getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || "#,
        r#"grep -c ^processor /proc/cpuinfo 2>/dev/null); "#,
        r#"a=-; h=-; m=; if [ -r /proc/cpuinfo ]; then "#,
        r#"m=$(grep -m1 -E "^(model name|Model|Hardware|cpu model)" /proc/cpuinfo | cut -d: -f2-); "#,
        r#"grep -qw aes /proc/cpuinfo && a=1 || a=0; "#,
        r#"grep -qwE "sha_ni|sha2" /proc/cpuinfo && h=1 || h=0; "#,
        r#"else m=$(sysctl -n machdep.cpu.brand_string 2>/dev/null || sysctl -n hw.model 2>/dev/null); fi; "#,
        r#"echo SSHBENCH-HOST ${c:--} $a $h $m"#
    ))
}

/// The server's CPU from [`shell_start_command`]'s last line; `None` where the line is
/// missing. Each figure is checked; the model is cut to one printable line of 100
/// characters at most.
pub fn parse_host(stdout: &str) -> Option<crate::model::fleet::ServerCpu> {
    let line = stdout.lines().find_map(|l| Some(l.split_once(HOST)?.1))?;
    let mut f = line.split_whitespace();
    let flag = |w: Option<&str>| match w {
        Some("1") => Some(true),
        Some("0") => Some(false),
        _ => None,
    };
    let cpus = f
        .next()
        .and_then(|c| c.parse::<u32>().ok())
        .filter(|&c| c > 0);
    let (aes, sha) = (flag(f.next()), flag(f.next()));
    let model: Vec<&str> = f.collect();
    let model = printable(&model.join(" "));
    Some(crate::model::fleet::ServerCpu {
        model: (!model.is_empty()).then(|| model.chars().take(100).collect()),
        cpus,
        aes,
        sha,
    })
}

/// Marks the line [`shell_start_command`] ends with: the server's CPU.
pub const HOST: &str = "SSHBENCH-HOST";

/// How long the login shell ran before the command, from [`shell_start_command`]'s
/// output (words a start-up file printed before it, with or without a newline, are
/// passed over); `None` unknown.
pub fn parse_shell_start(stdout: &str) -> Option<Duration> {
    let line = stdout.lines().find_map(|l| Some(l.split_once(SHELL)?.1))?;
    let mut f = line.split_whitespace();
    let start = figure(f.next()?)?;
    let (up, hz) = (figure(f.next()?)?, figure(f.next()?)?);
    let ran = up - start / hz;
    (hz > 0.0).then(|| Duration::try_from_secs_f64(ran.max(0.0)).ok())?
}

/// The largest figure a server's line may give (ticks, seconds, a quota): more, a
/// negative one, `inf` or `NaN` is a line not to be believed.
const MAX_FIGURE: f64 = 1e15;

/// A number a server printed, if it is a plausible one.
fn figure(v: &str) -> Option<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && (0.0..=MAX_FIGURE).contains(x))
}

/// Marks the server's CPU lines on stderr: `SSHBENCH-CPU0` before the measured part,
/// `SSHBENCH-CPU1` after it.
pub const CPU0: &str = "SSHBENCH-CPU0";
pub const CPU1: &str = "SSHBENCH-CPU1";

/// Shell code that defines `u MARKER`, which prints MARKER and the CPU time this session
/// has used so far:
/// `MARKER FOUND SSHD SHELL HZ QUOTA PERIOD PERIODS THROTTLED WAITED SET ONLINE RUN OWN`
/// (WAITED and RUN: the sshd's run-queue delay and time on a CPU in ns from
/// `/proc/PID/schedstat`, or `-`; OWN: the clock ticks of SSHD that are its own, not its
/// finished children's, or `-`, so that RUN can stand in for them to the nanosecond; SET:
/// how many CPUs its `Cpus_allowed_list` names, or `-`; ONLINE: the machine's online
/// CPUs from `getconf`, else from Linux's `/sys/devices/system/cpu/online` (busybox has
/// no `getconf`), or `-`). It climbs from the shell to the sshd (or dropbear) process
/// serving the session (at most three levels; FOUND is 1 when it got there), then
/// reports that process's CPU and this shell's (with its finished children: `wc`, `cat`,
/// `head`), as clock ticks from /proc on Linux or as `ps -o time=` elsewhere, or `-`.
/// QUOTA and PERIOD are the session's Linux cgroup CPU limit (v1 `cpu.cfs_quota_us` and
/// `cpu.cfs_period_us`, or v2 `cpu.max`), `-` or `-1`/`max` when there is none: a
/// throttled sshd never shows 100% of a core, so its limit tells what saturated means,
/// and PERIODS and THROTTLED (from that cgroup's `cpu.stat`) say how often the quota
/// actually stopped it.
/// Only the session's own processes count, never anything else on the machine (in the
/// sandbox the client shares the machine). Where /proc exists, `u` starts no process
/// (shell builtins and variables only): it runs between the ramp and the measured window
/// and again at the end of every sample.
const CPU_PROBE: &str = concat!(
    r#"s=$PPID; k=0; for i in 1 2 3 4; do "#,
    r#"n=; read -r n 2>/dev/null < /proc/$s/comm || n=$(ps -o comm= -p $s 2>/dev/null); "#,
    r#"case $n in *sshd*|*dropbear*) k=1; break;; esac; "#,
    r#"p=$(ps -o ppid= -p $s 2>/dev/null | tr -d " "); [ "${p:-0}" -gt 0 ] 2>/dev/null || break; s=$p; done; "#,
    r#"t() { if read -r l 2>/dev/null < /proc/$1/stat; then l=${l##*)}; set -- $l; "#,
    r#"C=$((${12}+${13}+${14}+${15})); O=$((${12}+${13})); "#,
    r#"else O=-; C=$(ps -o time= -p $1 2>/dev/null | tr -d " "); "#,
    r#"C=${C:--}; fi; }; hz=$(getconf CLK_TCK 2>/dev/null || echo 100); "#,
    r#"m() { N=0; IFS=,; for x in $1; do case $x in *-*) N=$((N+${x#*-}-${x%-*}+1));; "#,
    r#"*) N=$((N+1));; esac; done; unset IFS; }; "#,
    r#"o=$(getconf _NPROCESSORS_ONLN 2>/dev/null); [ -n "$o" ] || { "#,
    r#"read -r b 2>/dev/null < /sys/devices/system/cpu/online && m "$b" && o=$N; }; "#,
    r#"N=-; [ -r /proc/$s/status ] && while read -r a b; do case $a in "#,
    r#"Cpus_allowed_list:) m "$b";; esac; done < /proc/$s/status; "#,
    r#"q=- r=- d=; [ -r /proc/self/cgroup ] && while IFS=: read a b c; do "#,
    r#"case $b in cpu|cpu,*|*,cpu|*,cpu,*) [ -r /sys/fs/cgroup/$b$c/cpu.cfs_quota_us ] && "#,
    r#"d=/sys/fs/cgroup/$b$c && read q < $d/cpu.cfs_quota_us && read r < $d/cpu.cfs_period_us;; "#,
    r#""") [ -r /sys/fs/cgroup$c/cpu.max ] && d=/sys/fs/cgroup$c && read q r < $d/cpu.max;; esac; "#,
    r#"done < /proc/self/cgroup; "#,
    r#"w() { P=- T=-; [ -n "$d" ] && [ -r $d/cpu.stat ] && while read a b; do "#,
    r#"case $a in nr_periods) P=$b;; nr_throttled) T=$b;; esac; done < $d/cpu.stat; }; "#,
    r#"u() { t $s; A=$C; B=$O; t $$; w; W=- R=-; "#,
    r#"[ -r /proc/$s/schedstat ] && read -r R W y < /proc/$s/schedstat; "#,
    r#"echo $1 $k $A $C $hz $q $r $P $T $W $N ${o:--} $R $B; }"#
);

/// Print the session's CPU line (see [`CPU_PROBE`]) with `marker` on stdout: run over a
/// workload's connection before and after the tool, it finds that connection's sshd,
/// whose CPU then includes the finished sessions of the tool's server side.
pub fn cpu_probe_command(marker: &str) -> String {
    sh(&format!("{CPU_PROBE}; u {marker}"))
}

/// `send`: announce readiness; answer one `ping` line (the client measures the round
/// trip); swallow the first `ramp` bytes, note the session's CPU and say so; then count
/// every further byte until EOF and note the CPU again. The client pauses after the ramp
/// bytes until it sees the mark, so even a `head` that reads through stdio buffers cannot
/// take more than `ramp` bytes.
pub fn send_command(ramp: u64) -> String {
    sh(&format!(
        "{CPU_PROBE}; echo {READY}; read x; echo {PONG}; head -c {ramp} > /dev/null && u {CPU0} >&2 && echo {MARK}; wc -c; u {CPU1} >&2"
    ))
}

/// `send` that ssh reads from a file (nothing feeds it, so nothing can wait for a reply):
/// announce readiness, swallow the first `ramp` bytes and say so, count the rest until
/// EOF. The session's CPU is noted at the mark by a background job, so the stream never
/// waits for the probe (a `ps` or two off Linux), and again after the count: it covers
/// the steady window, not the session's start and the ramp. A `head` that reads through
/// stdio buffers (BSD, busybox) may take up to [`HEAD_AHEAD`] more than `ramp`; the
/// count is short by as much, and counts exactly the bytes after the mark.
pub fn send_file_command(ramp: u64) -> String {
    sh(&format!(
        "{CPU_PROBE}; echo {READY}; head -c {ramp} > /dev/null && echo {MARK} && {{ u {CPU0} >&2 & }}; wc -c; wait; u {CPU1} >&2"
    ))
}

/// How far past `-c` a `head` that reads through stdio may read.
pub const HEAD_AHEAD: u64 = 64 << 10;

/// 4-block files in a receive's file in memory ([`receive_command`]) when `streams`
/// sessions receive at once: 16 (64 MiB) for one; a batch shares those 64 MiB of the
/// server's memory, and from under two copies each streams its 4-block file.
pub fn memory_copies(streams: u32) -> u32 {
    16 / streams.max(1)
}

/// `receive`: store the uploaded block (read until EOF) in a private temp file, make a
/// 4-block file of it and, where `/dev/shm` is a writable directory (memory, no disk)
/// and `copies` is 2 or more, one of `copies` 4-block files (64 MiB for a lone session,
/// [`memory_copies`]), note the session's CPU, announce readiness, stream exactly
/// `bytes` bytes, note the CPU again. A 4 MiB source stays in a large server's CPU cache, where
/// a user's files do not: AES-GCM receive read 8% fast from it (bench/results/notebook.md, "A
/// receive's source and the server's cache"); a bigger file in `$TMPDIR` would cost the
/// server's disk. The big file is unlinked once the shell holds it open, and read
/// through the shell's `/proc/$$/fd/3`, which on Linux opens it anew each time (an
/// offset of its own; whether a shell passes fd 3 on to `cat` does not matter): a
/// session killed by SIGKILL, which runs no trap, leaves no 64 MiB of memory behind.
/// The bytes come from `cat` alone, straight into sshd: whole copies of the big file,
/// about 128 MiB per `cat` (fewer processes per byte), then of the 4-block file, then
/// `head -c` of the remainder only, because `head -c` copies 8 KiB at a time and costs
/// the server's core a third of a fast cipher's rate ("Fast receive"). Temp files are
/// removed on exit and on signals, by a function that quotes their names when it runs
/// (a `$TMPDIR` with spaces removes nothing else). (The names are ones the CPU probe does
/// not use: it sets `k`, `n`, `r`, `s` and others.)
pub fn receive_command(bytes: u64, copies: u32) -> String {
    let memory = if copies >= 2 {
        let names = vec!["\"$g\""; copies as usize].join(" ");
        format!(
            "if [ -d /dev/shm ] && [ -w /dev/shm ] && h=$(mktemp /dev/shm/sshbench.XXXXXX 2>/dev/null); then \
             if cat {names} > \"$h\" 2>/dev/null && exec 3< \"$h\"; then \
             if [ -r /proc/$$/fd/3 ]; then src=/proc/$$/fd/3; ssz=$((gsz * {copies})); else exec 3<&-; fi; fi; \
             rm -f \"$h\"; fi; "
        )
    } else {
        String::new()
    };
    sh(&format!(
        "f=$(mktemp \"${{TMPDIR:-/tmp}}/sshbench.XXXXXX\") || exit 97; g=\"$f.4\"; \
         h=; sbclean() {{ rm -f \"$f\" \"$g\" ${{h:+\"$h\"}}; }}; trap sbclean 0; trap \"exit 1\" 1 2 13 15; \
         cat > \"$f\" || exit 97; cat \"$f\" \"$f\" \"$f\" \"$f\" > \"$g\" || exit 97; \
         set -- $(wc -c < \"$g\"); gsz=$1; [ \"$gsz\" -gt 0 ] || exit 97; src=$g; ssz=$gsz; \
         {memory}whole=$(({bytes} / ssz)); rest=$(({bytes} % ssz)); parts=$((rest / gsz)); rest=$((rest % gsz)); \
         per=$((134217728 / ssz)); [ $per -gt 0 ] || per=1; \
         set --; j=0; while [ $j -lt $per ]; do set -- \"$@\" \"$src\"; j=$((j + 1)); done; \
         {CPU_PROBE}; u {CPU0} >&2; \
         echo {READY}; while [ $whole -ge $per ]; do cat \"$@\" || exit 1; whole=$((whole - per)); done; \
         set --; while [ $whole -gt 0 ]; do set -- \"$@\" \"$src\"; whole=$((whole - 1)); done; \
         while [ $parts -gt 0 ]; do set -- \"$@\" \"$g\"; parts=$((parts - 1)); done; \
         [ $# -eq 0 ] || cat \"$@\" || exit 1; [ $rest -eq 0 ] || head -c $rest \"$g\" || exit 1; \
         u {CPU1} >&2"
    ))
}

/// `echo`: announce readiness, then copy stdin to stdout until EOF. `cat` writes what
/// each read returns at once (it does not buffer output), so every keystroke comes
/// straight back through the session.
pub fn echo_command() -> String {
    sh(&format!("echo {READY}; exec cat"))
}

/// `typing`, in a terminal: no line discipline between the keys and the program (raw,
/// no local echo), then echo `keys` bytes one read and one write each (`dd bs=1`: a
/// byte comes back as soon as it is read) and end the session.
pub fn typing_command(keys: u64) -> String {
    sh(&format!(
        "stty raw -echo && echo {READY} && exec dd bs=1 count={keys} 2>/dev/null"
    ))
}

/// What a `SSHBENCH-CPU0`/`CPU1` line says: seconds of CPU of the session's sshd
/// process and of the shell (with its children), each if known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuProbe {
    pub sshd: Option<f64>,
    pub shell: Option<f64>,
    /// The CPU limit in cores, when a cgroup quota applies.
    pub limit: Option<f64>,
    /// The quota's scheduling periods so far, and how many of them were throttled.
    pub periods: Option<(u64, u64)>,
    /// Seconds the sshd has waited for a CPU so far (Linux `/proc/PID/schedstat`).
    pub waited: Option<f64>,
    /// The CPUs the sshd (and so its session) may run on: its affinity set, at most the
    /// online CPUs.
    pub cores: Option<f64>,
}

/// The session's CPU between two probes over an interval in which `bytes` moved: the
/// sshd and the shell together, the sshd as the busiest, and the quota's throttling.
pub fn cpu_between(
    a: &CpuProbe,
    b: &CpuProbe,
    interval: Duration,
    bytes: u64,
) -> Option<CpuWindow> {
    let sshd = b.sshd? - a.sshd?;
    let shell = match (a.shell, b.shell) {
        (Some(x), Some(y)) => y - x,
        _ => 0.0,
    };
    Some(CpuWindow {
        seconds: (sshd + shell).max(0.0),
        peak: sshd.max(0.0),
        limit: b.limit,
        throttled: match (a.periods, b.periods) {
            (Some((p0, t0)), Some((p1, t1))) if p1 > p0 => {
                Some(t1.saturating_sub(t0) as f64 / (p1 - p0) as f64)
            }
            _ => None,
        },
        waited: b.waited.zip(a.waited).map(|(y, x)| (y - x).max(0.0)),
        cores: b.cores,
        feeder: None,
        interval,
        bytes,
    })
}

/// Parse `FOUND SSHD SHELL HZ` after the marker. Ticks are divided by HZ; `ps` times
/// (`M:SS.cc`, `HH:MM:SS`, `D-HH:MM:SS`) are converted; `-` is unknown. When the sshd
/// process was not found, its figure is unknown whatever was printed.
pub fn parse_cpu_probe(line: &str, marker: &str) -> Option<CpuProbe> {
    let rest = line.trim().strip_prefix(marker)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let (found, sshd, shell, hz) = match f[..] {
        [a, b, c, d, ..] => (a, b, c, d),
        _ => return None,
    };
    let limit = match (
        f.get(4).and_then(|q| figure(q)),
        f.get(5).and_then(|p| figure(p)),
    ) {
        (Some(q), Some(p)) if q > 0.0 && p > 0.0 => Some(q / p),
        _ => None,
    };
    let hz: f64 = figure(hz).filter(|h| *h > 0.0)?;
    let secs = |v: &str| -> Option<f64> {
        if let Ok(ticks) = v.parse::<u64>() {
            return Some(ticks as f64 / hz);
        }
        let (days, clock) = match v.split_once('-') {
            Some((d, c)) => (figure(d)?, c),
            None => (0.0, v),
        };
        let parts: Vec<f64> = clock.split(':').map(figure).collect::<Option<_>>()?;
        let s = match parts[..] {
            [m, s] => m * 60.0 + s,
            [h, m, s] => h * 3600.0 + m * 60.0 + s,
            _ => return None,
        };
        Some(days * 86400.0 + s)
    };
    let periods = match (
        f.get(6).and_then(|v| v.parse().ok()),
        f.get(7).and_then(|v| v.parse().ok()),
    ) {
        (Some(p), Some(t)) => Some((p, t)),
        _ => None,
    };
    // The sshd's own ticks as its run time, to the nanosecond; its children's stay.
    let precise = || -> Option<f64> {
        let (all, own): (u64, u64) = (sshd.parse().ok()?, f.get(12)?.parse().ok()?);
        let run: u64 = f.get(11)?.parse().ok()?;
        Some(all.checked_sub(own)? as f64 / hz + run as f64 / 1e9)
    };
    Some(CpuProbe {
        sshd: (found == "1")
            .then(|| precise().or_else(|| secs(sshd)))
            .flatten(),
        shell: secs(shell),
        limit,
        periods,
        waited: (found == "1")
            .then(|| f.get(8)?.parse::<u64>().ok())
            .flatten()
            .map(|ns| ns as f64 / 1e9),
        cores: cores(found, f.get(9), f.get(10)),
    })
}

/// The sshd's CPU set: how many CPUs its affinity names, at most the online ones (an
/// affinity mask may name CPUs that are not there).
fn cores(found: &str, set: Option<&&str>, online: Option<&&str>) -> Option<f64> {
    let set: u32 = set.and_then(|v| v.parse().ok()).filter(|n| *n > 0)?;
    let online: Option<u32> = online.and_then(|v| v.parse().ok()).filter(|n| *n > 0);
    (found == "1").then(|| f64::from(online.map_or(set, |o| set.min(o))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_shell_s_start_is_read_past_what_it_printed() {
        let ms = |d: Option<Duration>| d.map(|d| d.as_millis());
        // Started at 2295473 ticks (100 a second), the command ran at 22954.84 s.
        let said = "Welcome to the NAS\nSSHBENCH-SHELL 2295473 22954.84 100\n";
        assert_eq!(ms(parse_shell_start(said)), Some(110));
        let unterminated = said.replacen('\n', "", 1);
        assert_eq!(ms(parse_shell_start(&unterminated)), Some(110));
        assert_eq!(
            ms(parse_shell_start("SSHBENCH-SHELL 1000 10.00 100")),
            Some(0)
        );
        // No /proc, or nothing printed at all: unknown.
        assert_eq!(parse_shell_start("SSHBENCH-SHELL -"), None);
        assert_eq!(parse_shell_start(""), None);
        assert_eq!(parse_shell_start("SSHBENCH-SHELL 1 x 100"), None);
        // A hostile login's numbers are not believed, never a panic.
        for hostile in [
            "0 1e300 100",
            "0 inf 100",
            "0 NaN 100",
            "0 5 0",
            "-1e300 5 1e-300",
        ] {
            let line = format!("SSHBENCH-SHELL {hostile}");
            assert_eq!(parse_shell_start(&line), None, "{hostile}");
        }
        // Every shell passes the command to sh unchanged (no character it would alter).
        assert!(shell_start_command().starts_with("sh -c '"));
    }

    /// The login's last line tells this machine's CPU as `sys::machine` reads it, run by
    /// sh here; hostile lines give `None` or checked parts.
    #[test]
    fn the_login_tells_the_server_s_cpu() {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(shell_start_command())
            .output()
            .unwrap();
        let cpu = parse_host(&String::from_utf8_lossy(&out.stdout)).unwrap();
        let here = crate::sys::machine::this_machine();
        assert_eq!(
            cpu.model.as_deref(),
            here.cpu_model.as_deref().map(str::trim)
        );
        assert_eq!(
            cpu.cpus.map(|c| c as usize),
            crate::sys::machine::online_cpus()
        );
        #[cfg(target_os = "linux")]
        assert_eq!((cpu.aes, cpu.sha), (here.aes, here.sha));
        let evil = "SSHBENCH-HOST 0 7 1 \x1b[31mred\x1b[0m";
        let cpu = parse_host(evil).unwrap();
        assert_eq!((cpu.cpus, cpu.aes, cpu.sha), (None, None, Some(true)));
        assert!(!cpu.model.unwrap().contains('\x1b'));
        assert_eq!(parse_host("nothing"), None);
        let long = format!("SSHBENCH-HOST 4 1 1 {}", "x".repeat(500));
        assert!(parse_host(&long).unwrap().model.unwrap().chars().count() <= 100);
    }

    /// A `$TMPDIR` with a space: the script's clean-up removes its own files and nothing
    /// that the split name would have named (`.../a` beside `.../a b`).
    #[test]
    fn the_receive_script_cleans_up_only_its_own_files() {
        use std::io::{Read, Write};
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("a b");
        std::fs::create_dir(&tmp).unwrap();
        let decoy = dir.path().join("a");
        std::fs::write(&decoy, "keep").unwrap();
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(receive_command(10_000, 1))
            .env("TMPDIR", &tmp)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let block = vec![7u8; RECEIVE_BLOCK];
        child.stdin.take().unwrap().write_all(&block).unwrap();
        let mut out = Vec::new();
        child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
        assert!(child.wait().unwrap().success());
        let ready = format!("{READY}\n");
        assert!(out.starts_with(ready.as_bytes()));
        assert_eq!(out.len() - ready.len(), 10_000);
        assert_eq!(std::fs::read_to_string(&decoy).unwrap(), "keep");
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    }

    #[test]
    fn a_cpu_probe_with_impossible_numbers_is_unknown() {
        for hostile in [
            "1 inf 5 100",
            "1 5 5 NaN",
            "1 1e300 5 100 1e300 100000",
            "1 1-inf:00 5 100",
        ] {
            let p = parse_cpu_probe(&format!("{CPU0} {hostile}"), CPU0);
            let known = p.map(|p| (p.sshd, p.shell, p.limit));
            assert!(
                known.is_none_or(|(a, b, c)| [a, b, c]
                    .iter()
                    .flatten()
                    .all(|x| x.is_finite() && *x < 1e15)),
                "{hostile}: {known:?}"
            );
        }
    }

    #[test]
    fn a_server_s_line_is_quoted_printable_and_short() {
        assert_eq!(printable("  sftp only\u{1b}[2J "), "sftp only?[2J");
        let long = "x".repeat(SAID_CHARS + 5);
        assert_eq!(printable(&long), format!("{}…", "x".repeat(SAID_CHARS)));
    }

    #[test]
    fn cpu_probe_lines() {
        let p = parse_cpu_probe("SSHBENCH-CPU0 1 250 12 100 - -", CPU0).unwrap();
        assert_eq!(
            p,
            CpuProbe {
                sshd: Some(2.5),
                shell: Some(0.12),
                limit: None,
                periods: None,
                waited: None,
                cores: None
            }
        );
        // BSD/macOS ps times.
        let p = parse_cpu_probe("SSHBENCH-CPU1 1 1:02.50 0:00.05 128", CPU1).unwrap();
        assert_eq!(
            p,
            CpuProbe {
                sshd: Some(62.5),
                shell: Some(0.05),
                limit: None,
                periods: None,
                waited: None,
                cores: None
            }
        );
        let p = parse_cpu_probe("SSHBENCH-CPU1 1 1-00:00:01 - 100 -1 100000", CPU1).unwrap();
        assert_eq!(
            p,
            CpuProbe {
                sshd: Some(86401.0),
                shell: None,
                limit: None,
                periods: None,
                waited: None,
                cores: None
            }
        );
        // Linux's run time stands in for the sshd's own ticks (240 of 250: 10 are its
        // finished children's), to the nanosecond.
        let line = "SSHBENCH-CPU1 1 250 12 100 - - - - 5000 2 2 2345678901 240";
        let sshd = parse_cpu_probe(line, CPU1).unwrap().sshd.unwrap();
        assert!((sshd - (0.1 + 2.345678901)).abs() < 1e-9, "{sshd}");
        for ticks_only in [
            "SSHBENCH-CPU1 1 250 12 100 - - - - - 2 2 - -",
            "SSHBENCH-CPU1 1 250 12 100 - - - - 5000 2 2 2345678901 -",
            "SSHBENCH-CPU1 1 250 12 100 - - - - 5000 2 2 2345678901 260",
        ] {
            let p = parse_cpu_probe(ticks_only, CPU1).unwrap();
            assert_eq!(p.sshd, Some(2.5), "{ticks_only}");
        }
        let lost = "SSHBENCH-CPU1 0 250 12 100 - - - - 5000 2 2 2345678901 240";
        assert_eq!(parse_cpu_probe(lost, CPU1).unwrap().sshd, None);
        // A cgroup quota of a quarter core (v1), and v2's `max`.
        let p = parse_cpu_probe("SSHBENCH-CPU1 1 5 5 100 25000 100000 40 31", CPU1).unwrap();
        assert_eq!((p.limit, p.periods), (Some(0.25), Some((40, 31))));
        // The sshd's run-queue delay (ns), where /proc has schedstat.
        let p = parse_cpu_probe("SSHBENCH-CPU1 1 5 5 100 - - - - 250000000", CPU1).unwrap();
        assert_eq!(p.waited, Some(0.25));
        let p = parse_cpu_probe("SSHBENCH-CPU1 0 5 5 100 - - - - 250000000", CPU1).unwrap();
        assert_eq!(p.waited, None, "not the sshd's");
        // Its CPU set: one CPU of two; a mask naming more CPUs than are online.
        let p = parse_cpu_probe("SSHBENCH-CPU1 1 5 5 100 - - - - - 1 2", CPU1).unwrap();
        assert_eq!(p.cores, Some(1.0));
        let p = parse_cpu_probe("SSHBENCH-CPU1 1 5 5 100 - - - - - 64 2", CPU1).unwrap();
        assert_eq!(p.cores, Some(2.0));
        let p = parse_cpu_probe("SSHBENCH-CPU1 1 5 5 100 - - - - - - 2", CPU1).unwrap();
        assert_eq!(p.cores, None);
        assert_eq!(
            parse_cpu_probe("SSHBENCH-CPU1 1 5 5 100 max 100000", CPU1)
                .unwrap()
                .limit,
            None
        );
        // The sshd process was not found: its figure is not trusted.
        let p = parse_cpu_probe("SSHBENCH-CPU0 0 5 5 100", CPU0).unwrap();
        assert_eq!(p.sshd, None);
        assert_eq!(parse_cpu_probe("SSHBENCH-CPU0 garbage", CPU0), None);
        assert_eq!(parse_cpu_probe("SSHBENCH-CPU0 1 1 1 0", CPU0), None);
    }

    #[test]
    fn concurrent_receives_share_one_sessions_memory() {
        let copies: Vec<u32> = [0, 1, 2, 4, 8, 9, 16].map(memory_copies).into();
        assert_eq!(copies, [16, 16, 8, 4, 2, 1, 1]);
        // From under two copies, no file in memory at all.
        assert!(receive_command(5, 2).contains("/dev/shm"));
        assert!(!receive_command(5, 1).contains("/dev/shm"));
    }

    #[test]
    fn commands_are_safe_for_every_shell() {
        for cmd in [
            connect_command(),
            send_command(5),
            send_file_command(5),
            receive_command(123, 16),
            receive_command(123, 1),
            echo_command(),
        ] {
            let inner = cmd.trim_start_matches("sh -c '").trim_end_matches('\'');
            assert!(!inner.contains(FORBIDDEN), "{cmd}");
        }
    }

    #[test]
    #[should_panic(expected = "unsafe in some login shell")]
    fn sh_rejects_history_expansion() {
        sh("echo hi!");
    }
}
