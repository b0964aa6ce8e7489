//! The remote commands work whatever the login shell on the server is: sshd runs them as
//! `$SHELL -c "<command>"`, so each shell here gets exactly that string.

use sshbench::measure::remote;
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// Login shells users have; all must be installed to run the tests (see README).
/// `busybox` is its `sh` with only busybox's own tools on the PATH, as on a router.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "tcsh", "csh", "fish", BUSYBOX];
const BUSYBOX: &str = "busybox";

/// `shell -c command` as sshd starts it, with a home of its own (fish writes its
/// settings and history under `$HOME` at every start) that holds, for busybox, the
/// folder of its tools; the home is to be kept while it runs.
fn shell_command(shell: &str, command: &str) -> (Command, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = if shell == BUSYBOX {
        let bin = sshbench::sandbox::find_on_path(BUSYBOX)
            .expect("busybox is needed for this test (apt-get install busybox)");
        let tools = home.path().join("bin");
        std::fs::create_dir(&tools).unwrap();
        let list = Command::new(&bin).arg("--list").output().unwrap();
        for tool in String::from_utf8_lossy(&list.stdout).lines() {
            std::os::unix::fs::symlink(&bin, tools.join(tool)).unwrap();
        }
        let mut cmd = Command::new(tools.join("sh"));
        cmd.env("PATH", &tools);
        cmd
    } else {
        Command::new(shell)
    };
    cmd.arg("-c").arg(command).env("HOME", home.path());
    for var in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"] {
        cmd.env_remove(var);
    }
    (cmd, home)
}

/// Run `command` as sshd would, feeding `input`, then (if any) `after` once the remote
/// side has printed its mark, as the client does after the ramp: exit code, stdout and
/// stderr.
fn run(shell: &str, command: &str, input: &[u8]) -> (i32, Vec<u8>, String) {
    run_paced(shell, command, input, &[])
}

fn run_paced(shell: &str, command: &str, input: &[u8], after: &[u8]) -> (i32, Vec<u8>, String) {
    let (mut cmd, _home) = shell_command(shell, command);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("{shell} is needed for this test (apt-get install zsh tcsh fish): {e}")
        });
    let mut stdin = child.stdin.take().unwrap();
    let (input, after) = (input.to_vec(), after.to_vec());
    let (marked, mark) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        if !after.is_empty() && mark.recv().is_ok() {
            let _ = stdin.write_all(&after);
        }
    });
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut e = String::new();
        stderr.read_to_string(&mut e).unwrap();
        e
    });
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().unwrap();
    let mut marked = Some(marked);
    let mut buf = [0u8; 64 << 10];
    loop {
        let n = stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        // The mark is among the first lines: look until it came (and only there).
        let mark = format!("{}\n", remote::MARK);
        let head = &out[..out.len().min(4096)];
        let seen = |_: &mut _| head.windows(mark.len()).any(|w| w == mark.as_bytes());
        if let Some(m) = marked.take_if(seen) {
            let _ = m.send(());
        }
    }
    drop(marked);
    writer.join().unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, out, errors.join().unwrap())
}

/// Both CPU probes came out on stderr, readable, with the shell's own CPU (no sshd
/// above a shell started here), and nothing else did.
fn assert_cpu_probes(shell: &str, stderr: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{shell}: {stderr:?}");
    for (line, marker) in lines.iter().zip([remote::CPU0, remote::CPU1]) {
        let p = remote::parse_cpu_probe(line, marker)
            .unwrap_or_else(|| panic!("{shell}: {marker} unreadable in {line:?}"));
        assert!(p.shell.is_some_and(|s| s >= 0.0), "{shell}: {line:?}");
        // Linux: the CPU set of the process the probe climbed to, counted from its
        // `Cpus_allowed_list`, and the online CPUs (no sshd here, so not parsed).
        if cfg!(target_os = "linux") {
            let f: Vec<&str> = line.split_whitespace().collect();
            let set: usize = f[10]
                .parse()
                .unwrap_or_else(|_| panic!("{shell}: {line:?}"));
            let online: usize = f[11]
                .parse()
                .unwrap_or_else(|_| panic!("{shell}: {line:?}"));
            assert!((1..=online.max(64)).contains(&set), "{shell}: {line:?}");
        }
    }
}

#[test]
fn connect_command_succeeds_in_every_shell() {
    for shell in SHELLS {
        let (code, _, _) = run(shell, &remote::connect_command(), b"");
        assert_eq!(code, 0, "{shell}");
    }
}

/// The login shell's start-up probe runs under every shell and says it found no sshd
/// here (the tests' shells are not a session's), then tells this machine's CPU, the same
/// whichever shell ran it.
#[test]
fn shell_start_command_answers_in_every_shell() {
    let cpu = |out: &str| remote::parse_host(out);
    let (_, by_sh, _) = run("sh", &remote::shell_start_command(), b"");
    let by_sh = cpu(&String::from_utf8_lossy(&by_sh)).expect("the CPU line");
    assert!(by_sh.cpus.is_some(), "{by_sh:?}");
    for shell in SHELLS {
        let (code, out, stderr) = run(shell, &remote::shell_start_command(), b"");
        let out = String::from_utf8_lossy(&out);
        assert_eq!(code, 0, "{shell}: {stderr}");
        let first = out.lines().next().unwrap_or_default();
        assert_eq!(first, format!("{} -", remote::SHELL), "{shell}: {stderr}");
        assert_eq!(remote::parse_shell_start(&out), None, "{shell}");
        assert_eq!(cpu(&out).as_ref(), Some(&by_sh), "{shell}: {out}");
    }
}

#[test]
fn send_command_counts_bytes_in_every_shell() {
    // The client writes the ramp, waits for the mark, then writes the rest: a `head`
    // that reads ahead through stdio (busybox's) finds nothing more to take.
    let mut data = b"ping\n".to_vec();
    data.extend(vec![7u8; 1000]);
    let rest = vec![7u8; 122_457];
    for shell in SHELLS {
        let (code, out, stderr) = run_paced(shell, &remote::send_command(1000), &data, &rest);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..3],
            [remote::READY, remote::PONG, remote::MARK],
            "{shell}: {text:?}"
        );
        // The ramp bytes are swallowed; wc counts the rest.
        assert_eq!(lines[3].trim(), "122457", "{shell}: {text:?}");
        assert_eq!(code, 0, "{shell}");
        assert_cpu_probes(shell, &stderr);
    }
}

#[test]
fn send_file_command_counts_bytes_after_the_ramp_in_every_shell() {
    // What ssh reads from a file arrives at once, with no pause at the ramp.
    let data = vec![0u8; 123_457];
    for shell in SHELLS {
        let (code, out, stderr) = run(shell, &remote::send_file_command(1000), &data);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..2],
            [remote::READY, remote::MARK],
            "{shell}: {text:?}"
        );
        // Busybox's `head` reads ahead through stdio: the count is short by at most
        // HEAD_AHEAD, which the judge allows a send from a file.
        let n: u64 = lines[2].trim().parse().unwrap();
        let ahead = if shell == &BUSYBOX {
            remote::HEAD_AHEAD
        } else {
            0
        };
        assert!(
            (122_457 - ahead..=122_457).contains(&n),
            "{shell}: {text:?}"
        );
        assert_eq!(code, 0, "{shell}");
        assert_cpu_probes(shell, &stderr);
    }
}

#[test]
fn receive_command_streams_exactly_the_size_in_every_shell() {
    let block: Vec<u8> = (0..remote::RECEIVE_BLOCK)
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    let file = 4 * remote::RECEIVE_BLOCK as u64; // the remote side's 4-block file
    // Less than one file; whole files only; files and a remainder; more than one `cat`
    // of 32 files, and a remainder.
    // A lone session's file in memory (16 copies of the 4-block file), a batch's share
    // (4 copies: 16 MiB, 8 of them per `cat`), none.
    let cases = [
        (99, 16),
        (2 * file, 16),
        (5 * remote::RECEIVE_BLOCK as u64 + 99, 16),
        (33 * file + 5, 16),
        (33 * file + 5, 4),
        (2 * file + 99, 1),
    ];
    for (shell, (size, copies)) in SHELLS.iter().flat_map(|sh| cases.map(|c| (sh, c))) {
        let command = remote::receive_command(size, copies);
        let (code, out, stderr) = run(shell, &command, &block);
        let ready = format!("{}\n", remote::READY);
        assert!(out.starts_with(ready.as_bytes()), "{shell}");
        let data = &out[ready.len()..];
        assert_eq!(data.len() as u64, size, "{shell}, {size} bytes");
        assert!(
            data.chunks(block.len()).all(|c| block.starts_with(c)),
            "{shell}: payload differs"
        );
        assert_eq!(code, 0, "{shell}");
        assert_cpu_probes(shell, &stderr);
    }
}

/// Where `/dev/shm` is memory, a receive streams from a 64 MiB file there (bigger than a
/// server's cache, as a user's files are), which has no name left once it streams: a
/// session killed mid-stream (no trap runs on SIGKILL) leaves nothing in `/dev/shm`. One
/// of four concurrent streams makes a quarter of that file.
#[cfg(target_os = "linux")]
#[test]
fn a_receive_streams_from_a_big_file_in_memory_that_a_kill_leaves_nowhere() {
    let block = vec![5u8; remote::RECEIVE_BLOCK];
    for (streams, kill) in [(1, false), (1, true), (4, false)] {
        let tmp = tempfile::tempdir().unwrap();
        let copies = remote::memory_copies(streams);
        let command = remote::receive_command(200 << 20, copies);
        let (mut cmd, _home) = shell_command("sh", &command);
        let mut child = (cmd.env("TMPDIR", tmp.path()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&block).unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut ready = vec![0u8; remote::READY.len() + 1];
        stdout.read_exact(&mut ready).unwrap();
        // Unread, the pipe fills and the `cat` under the shell waits with its file open.
        let (name, fd) = (0..200)
            .find_map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(10));
                open_by_children(child.id())
                    .into_iter()
                    .find(|(name, _)| name.starts_with("/dev/shm/sshbench."))
            })
            .expect("a cat streaming from /dev/shm");
        assert!(name.ends_with(" (deleted)"), "{name}");
        let named = std::path::PathBuf::from(name.trim_end_matches(" (deleted)"));
        assert!(!named.exists(), "{named:?}");
        let expected = u64::from(copies) * 4 * remote::RECEIVE_BLOCK as u64;
        assert_eq!(std::fs::metadata(&fd).unwrap().len(), expected, "{streams}");
        if kill {
            let tree = descendants(child.id());
            for pid in std::iter::once(child.id()).chain(tree) {
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            let _ = child.wait();
            continue;
        }
        let mut rest = Vec::new();
        stdout.read_to_end(&mut rest).unwrap();
        assert_eq!(rest.len() as u64, 200 << 20);
        assert!(child.wait().unwrap().success());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}

/// The processes under `pid`.
#[cfg(target_os = "linux")]
fn descendants(pid: u32) -> Vec<u32> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
    let children: Vec<u32> = (children.unwrap_or_default().split_whitespace())
        .filter_map(|c| c.parse().ok())
        .collect();
    let below = children
        .iter()
        .flat_map(|&c| descendants(c))
        .collect::<Vec<_>>();
    children.into_iter().chain(below).collect()
}

/// The files the descendants of process `pid` have open: what each link names, and
/// the link (which opens the file even when it has no name left).
#[cfg(target_os = "linux")]
fn open_by_children(pid: u32) -> Vec<(String, std::path::PathBuf)> {
    (descendants(pid).into_iter())
        .filter_map(|c| std::fs::read_dir(format!("/proc/{c}/fd")).ok())
        .flatten()
        .filter_map(|fd| {
            let fd = fd.ok()?.path();
            Some((
                std::fs::read_link(&fd).ok()?.to_string_lossy().into_owned(),
                fd,
            ))
        })
        .collect()
}

#[test]
fn echo_command_returns_each_keystroke_at_once_in_every_shell() {
    for shell in SHELLS {
        let (mut cmd, _home) = shell_command(shell, &remote::echo_command());
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // A command that buffered its output would block the reads below forever.
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if done_rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .is_err()
            {
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        });
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut ready = vec![0u8; remote::READY.len() + 1];
        stdout.read_exact(&mut ready).unwrap();
        assert_eq!(ready, format!("{}\n", remote::READY).as_bytes(), "{shell}");
        for key in b"hello, world" {
            stdin.write_all(&[*key]).unwrap();
            let mut back = [0u8];
            stdout
                .read_exact(&mut back)
                .unwrap_or_else(|e| panic!("{shell}: no echo of {:?}: {e}", *key as char));
            assert_eq!(back[0], *key, "{shell}");
        }
        drop(stdin);
        let mut rest = Vec::new();
        stdout.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "{shell}: {rest:?}");
        assert_eq!(child.wait().unwrap().code(), Some(0), "{shell}");
        let _ = done_tx.send(());
        watchdog.join().unwrap();
    }
}

/// A session whose ancestors end at PID 1 within the probe's climb (an orphaned process
/// tree): the probe stops at PID 1 instead of reading a process 0 that does not exist.
#[cfg(target_os = "linux")]
#[test]
fn cpu_probe_stops_at_the_first_process() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("probe");
    // `setsid -f` leaves the outer sh a child of PID 1: sh -> sh -> PID 1 -> 0.
    let script = format!(
        "{} > {} 2>&1",
        remote::cpu_probe_command(remote::CPU0),
        out.display()
    );
    let status = Command::new("setsid")
        .args(["-f", "sh", "-c", &script])
        .status()
        .expect("setsid (util-linux)");
    assert!(status.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let line = loop {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        if text.ends_with('\n') || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let p = remote::parse_cpu_probe(line.trim(), remote::CPU0)
        .unwrap_or_else(|| panic!("unreadable: {line:?}"));
    assert!(p.shell.is_some_and(|s| s >= 0.0), "{line:?}");
    let f: Vec<&str> = line.split_whitespace().collect();
    assert!(f[2] != "-" && f[10] != "-", "climbed past PID 1: {line:?}");
}
