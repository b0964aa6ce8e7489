//! What a person sees in a real terminal (tmux, 80 and 100 columns): every view of a
//! stored run fits, no row of a table is folded over lines, and a table that left
//! columns out names them. tmux's capture joins the lines the terminal folded (`-J`), so
//! a line wider than the terminal shows as one long line here.

use crate::common;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use unicode_width::UnicodeWidthStr;

/// A private tmux server (its own socket) with one window of the given width.
struct Terminal {
    socket: std::path::PathBuf,
}

impl Terminal {
    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.socket);
        c
    }

    /// What `command` prints in a window `width` columns wide, lines the terminal
    /// folded joined again.
    fn run(dir: &Path, width: u16, command: &str) -> String {
        // A server of its own per command: one just killed may still hold its socket.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = Terminal {
            socket: dir.join(format!("tmux-{n}")),
        };
        const END: &str = "__sshbench_test_end__";
        let script = format!("{command}; echo {END} $?; sleep 600");
        let started = t
            .tmux()
            .args(["-f", "/dev/null", "new-session", "-d", "-x"])
            .arg(width.to_string())
            .args(["-y", "1000", "sh", "-c", &script])
            .status()
            .expect("tmux (Debian: apt-get install tmux)");
        assert!(started.success(), "tmux new-session failed");
        let deadline = Instant::now() + Duration::from_secs(120);
        let text = loop {
            let out = t
                .tmux()
                .args(["capture-pane", "-p", "-J", "-S", "-", "-E", "-"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            if text.contains(END) {
                break text;
            }
            assert!(
                Instant::now() < deadline,
                "{command}: no end in 120 s:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        let _ = t.tmux().arg("kill-server").status();
        let (said, end) = text.split_once(END).unwrap();
        assert_eq!(
            end.split_whitespace().next(),
            Some("0"),
            "{command}:\n{said}"
        );
        said.trim_end().to_string()
    }
}

/// The lines wider than `width`, with their widths.
fn too_wide(text: &str, width: usize) -> Vec<(usize, &str)> {
    (text.lines())
        .map(|l| (l.width(), l))
        .filter(|(w, _)| *w > width)
        .collect()
}

fn piped(args: &[&str]) -> String {
    let out = common::sshbench().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_view_of_a_stored_run_fits_80_and_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let db = db.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_sshbench");
    let home = dir.path().display();
    // Every command in the same private home (the sandbox's keys, the data directory).
    let sb = format!("HOME={home} {bin}");
    for (seed, width) in [(1, 80), (2, 100)] {
        // The run's answer: mock measurements of every suite the client has.
        let run = format!("{sb} run localhost --mock-transport --seed {seed} --db {db} -q");
        let answer = Terminal::run(dir.path(), width, &run);
        assert!(answer.contains("Recommended ~/.ssh/config"), "{answer}");
        assert_eq!(
            too_wide(&answer, width.into()),
            [] as [(usize, &str); 0],
            "{answer}"
        );
    }
    let stored = format!("--db {db}");
    let views = [
        format!("show --top all {stored}"),
        format!("show --mode send {stored}"),
        format!("summary {stored}"),
        format!("compare run:1 run:2 {stored}"),
        format!("runs {stored}"),
        // What the client and the local sandbox's sshd offer.
        "algos".to_string(),
    ];
    for width in [80u16, 100] {
        for view in &views {
            let text = Terminal::run(dir.path(), width, &format!("{sb} {view}"));
            assert_eq!(
                too_wide(&text, width.into()),
                [] as [(usize, &str); 0],
                "{view} at {width} columns:\n{text}"
            );
            assert!(!text.contains("This table needs"), "{view}:\n{text}");
        }
        // Which columns went is said; the long forms are the pipe's.
        let show = Terminal::run(dir.path(), width, &format!("{sb} show --top all --db {db}"));
        let dropped = format!("Left out to fit {width} columns:");
        assert!(show.contains(&dropped), "{show}");
        let words = common::words(&show);
        let said: Vec<&str> = words.split(&dropped).skip(1).collect();
        assert!(
            said.iter().all(|l| l.contains("(--wide shows them)")),
            "{show}"
        );
        if width == 80 {
            // A transfer's time per 8 MB says again what its MB/s says.
            assert!(
                said.iter()
                    .any(|l| l.starts_with(" Stopped, Time (s/8 MB),")),
                "{show}"
            );
        }
        let row = |l: &&str| l.starts_with(" built-in") && l.contains("aes256-gcm");
        let aes = show.lines().find(row).expect("aes256-gcm's row");
        assert!(!aes.contains('@'), "{show}");
        let whole = piped(&["show", "--top", "all", "--db", db]);
        assert!(
            whole.contains("@openssh.com") && !whole.contains("Left out"),
            "{whole}"
        );
    }
}

/// `recommend` keeps every setting whole, however wide (ssh_config has no continuation
/// lines, and a cut list would put the client's own defaults back): only its comments
/// wrap.
#[test]
fn recommend_wraps_its_comments_and_never_cuts_a_setting() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let db = db.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_sshbench");
    let seeded = [
        "run",
        "localhost",
        "--mock-transport",
        "--seed",
        "1",
        "-q",
        "--db",
        db,
    ];
    piped(&seeded);
    let whole = piped(&["recommend", "--db", db]);
    let settings: Vec<&str> = (whole.lines())
        .filter(|l| !l.trim_start().starts_with('#') && l.contains(' '))
        .collect();
    assert!(settings.iter().any(|l| l.width() > 80), "{whole}");
    let home = dir.path().display();
    for width in [80u16, 100] {
        let command = format!("HOME={home} {bin} recommend --db {db}");
        let text = Terminal::run(dir.path(), width, &command);
        for (_, line) in too_wide(&text, width.into()) {
            assert!(
                settings.contains(&line),
                "cut or not a setting: {line}\n{text}"
            );
        }
        for s in &settings {
            assert!(
                text.lines().any(|l| l == *s),
                "{s} is not whole in:\n{text}"
            );
        }
    }
}
