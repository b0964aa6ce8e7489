//! The HTML report: rendered from a database, loaded in headless Chromium (Debian's
//! `chromium`), checked for console errors, non-empty charts and escaped server names.

use crate::common;

use crate::common::SampleBuilder;
use sshbench::model::RunStatus;
use sshbench::model::{AlgoLists, Mode, Suite};
use sshbench::plan::PlanItem;
use sshbench::store::{NewRun, Store};
use sshbench::sys::machine::Machine;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const HOSTILE: &str = "<script>alert('pwned')</script>";

/// A database shaped like a full sandbox run: `ciphers` × `macs` suites in both transfer
/// directions and for echo (AEAD ciphers once) and `kexes` × 8 connect suites, 3 rounds + warm-up.
fn full_db(path: &Path, ciphers: &[&str], macs: usize, kexes: usize) {
    let store = Store::open(path).unwrap();
    let mut items = Vec::new();
    for mode in [Mode::Send, Mode::Receive, Mode::Echo] {
        for c in ciphers {
            let aead = c.contains("gcm") || c.contains("poly1305");
            for m in 0..if aead { 1 } else { macs } {
                items.push(PlanItem {
                    mode,
                    suite: Suite {
                        cipher: Some(c.to_string()),
                        mac: (!aead).then(|| {
                            if m == 0 {
                                "hmac-sha2-256-etm@openssh.com".to_string()
                            } else {
                                format!("hmac-test{m}")
                            }
                        }),
                        ..Suite::default()
                    },
                });
            }
        }
    }
    for k in 0..kexes {
        for h in 0..8 {
            items.push(PlanItem {
                mode: Mode::Connect,
                suite: Suite {
                    kex: Some(if k == 0 {
                        "curve25519-sha256".into()
                    } else {
                        format!("kex-test{k}")
                    }),
                    hostkey: Some(if h == 0 {
                        "ssh-ed25519".into()
                    } else {
                        format!("hostkey-test{h}")
                    }),
                    ..Suite::default()
                },
            });
        }
    }
    let id = store
        .create_run(&NewRun {
            destination: "local sandbox",
            target: &common::TARGET,
            resolved: None,
            client_version: "OpenSSH_9.2p1",
            server_version: Some(&format!("SSH-2.0-{HOSTILE}")),
            server_strict_kex: None,
            machine: &Machine::default(),
            options: &common::OPTIONS,
            plan: &items,
            seed: 1,
            client_defaults: &AlgoLists::new(),
        })
        .unwrap();
    store.begin_bulk().unwrap();
    for round in 0..4u32 {
        for (i, item) in items.iter().enumerate() {
            let t =
                Duration::from_micros(50_000 + (i as u64 * 7919 + round as u64 * 3571) % 40_000);
            store
                .add_sample(
                    id,
                    i,
                    round,
                    &SampleBuilder::new(item.mode, &item.suite)
                        .wall(t + Duration::from_millis(100))
                        .transfer(100_000_000, 50_000_000, t)
                        .client_cpu(t, t / 3)
                        .echoes(if item.mode == Mode::Echo {
                            (0..200)
                                .map(|k| t.as_secs_f64() / 500.0 * (1.0 + (k % 13) as f64 / 10.0))
                                .collect()
                        } else {
                            Vec::new()
                        })
                        .build(),
                )
                .unwrap();
        }
    }
    store.end_bulk().unwrap();
    store.set_status(id, RunStatus::Complete).unwrap();
}

fn report(db: &Path, out: &Path, extra: &[&str]) {
    let o = common::sshbench()
        .args(["report", "--db"])
        .arg(db)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn chromium() -> PathBuf {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("headless Chromium is needed for this test (apt-get install chromium)")
}

fn headless(profile: &Path) -> Command {
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    // Chromium writes under $HOME too (~/.config/chromium, ~/.cache/dconf).
    .env("HOME", profile);
    for var in ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"] {
        c.env_remove(var);
    }
    c
}

#[test]
fn report_loads_in_chromium_with_charts_and_no_console_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    full_db(
        &db,
        // A hostile name never gets as far as an algorithm's column (the store refuses
        // it: tests/security.rs); the banner is the hostile text here.
        &[
            "aes128-gcm@openssh.com",
            "aes128-ctr",
            "aes256-ctr",
            "3des-cbc",
        ],
        4,
        3,
    );
    let html = dir.path().join("report.html");
    let pngs = dir.path().join("png");
    report(&db, &html, &["--png", pngs.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();

    // Self-contained: nothing is fetched.
    for fetch in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!page.contains(fetch), "{fetch} in the page");
    }
    // The hostile banner is text, everywhere.
    assert!(!page.contains("<script>alert"), "unescaped hostile name");
    assert!(
        page.contains("&lt;script&gt;alert("),
        "the hostile name is shown as text"
    );
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own sorting script"
    );
    // The client's CPU per GB is over the measured windows, as the rates are.
    assert!(page.contains("Client CPU seconds per GB, send (median over the measured windows)"));
    // Why the transfers are as fast as they are, as `summary` says it.
    let why = page.split("<ul id=\"why\">").nth(1).expect("a why section");
    let why = why.split("</ul>").next().unwrap();
    for mode in ["send", "receive"] {
        assert!(
            why.contains(&format!("<li>{mode} path: at least ")),
            "{why}"
        );
    }

    // Chromium renders it: DOM after scripts, console messages, a screenshot.
    let profile = dir.path().join("profile");
    let dom = headless(&profile)
        .arg("--dump-dom")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    let console: Vec<&str> = std::str::from_utf8(&dom.stderr)
        .unwrap_or("")
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "console output: {console:?}");
    let charts = dom_text.matches("class=\"chart\"").count();
    assert_eq!(
        charts, 10,
        "connect, bars + CPU + heat map for send and receive, bars + percentiles + heat map for echo"
    );
    assert!(
        dom_text.matches("<rect").count() > 100,
        "the charts have bars"
    );
    assert!(
        !dom_text.contains("<script>alert"),
        "nothing injected into the DOM"
    );

    let shot = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("sshbench-report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let st = headless(&profile)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,2400")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let img = resvg::tiny_skia::Pixmap::load_png(&shot).expect("a PNG screenshot");
    let inked = img
        .pixels()
        .iter()
        .filter(|p| p.red() < 200 || p.green() < 200 || p.blue() < 200)
        .count();
    assert!(
        inked > 20_000,
        "the screenshot is nearly blank ({inked} dark pixels)"
    );
    println!("screenshot: {}", shot.display());

    // --png wrote every chart.
    let written = std::fs::read_dir(&pngs).unwrap().count();
    assert_eq!(written, 10);
}

#[test]
fn a_full_sized_report_stays_under_2_mb() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    // The sandbox's shape here: 10 ciphers (3 AEAD) × 16 MACs, 12 kex × 8 host keys.
    let ciphers = [
        "aes128-gcm@openssh.com",
        "aes256-gcm@openssh.com",
        "chacha20-poly1305@openssh.com",
        "aes128-ctr",
        "aes192-ctr",
        "aes256-ctr",
        "aes128-cbc",
        "aes192-cbc",
        "aes256-cbc",
        "3des-cbc",
    ];
    full_db(&db, &ciphers, 16, 12);
    let html = dir.path().join("report.html");
    report(&db, &html, &[]);
    let size = std::fs::metadata(&html).unwrap().len();
    assert!(size < 2 << 20, "{size} bytes");
}
