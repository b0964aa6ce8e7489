//! The documents by audience keep their shape: a README a user reads in one screen
//! first (what sshbench answers and the two commands), short; BENCHMARKS.md the current
//! figures, not the notebook; every command the README shows exists.

use std::process::Command;

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn the_readme_s_first_screen_shows_the_answer_and_the_two_commands() {
    let readme = read("README.md");
    assert!(
        readme.lines().count() <= 200,
        "README.md: {} lines",
        readme.lines().count()
    );
    let screen: Vec<&str> = readme.lines().take(50).collect();
    let screen = screen.join("\n");
    for needed in [
        "cargo run --release -- run",
        "cargo test",
        // A run's answer: its modes and the config block it ends with.
        "send     ",
        "receive  ",
        "Recommended ~/.ssh/config",
    ] {
        assert!(
            screen.contains(needed),
            "not in the first 50 lines: {needed}"
        );
    }
    assert!(!readme.contains("ANSWER"), "the answer is a placeholder");
}

#[test]
fn benchmarks_md_keeps_current_figures_only() {
    let n = read("BENCHMARKS.md").lines().count();
    assert!(n <= 300, "BENCHMARKS.md: {n} lines");
}

/// Every `sshbench SUBCOMMAND` the README shows is one the binary has.
#[test]
fn the_readme_s_commands_exist() {
    let readme = read("README.md");
    let mut seen = 0;
    for line in readme.lines().filter(|l| l.starts_with("sshbench ")) {
        let sub = line.split_whitespace().nth(1).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_sshbench"))
            .args([sub, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success(), "sshbench {sub}: {line}");
        seen += 1;
    }
    assert!(seen >= 8, "{seen} commands");
}
