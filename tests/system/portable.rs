//! The paths taken where Linux's `/dev/shm` is not to be had (macOS, the BSDs, a
//! container without it), taken here: the binary runs in a mount namespace of the test's
//! own whose `/dev/shm` is read-only (root, as on CI; the machine's own stays as it was).
//! There a receive's ssh writes into a pipe that sshbench drains, a send reads its zeros
//! from the temp directory, and the server streams from its smaller file.

use crate::common;

use sshbench::model::Mode;
use sshbench::model::RunStatus;
use sshbench::store::Store;
use std::process::Command;

#[test]
fn without_a_writable_dev_shm_receives_drain_a_pipe_and_every_figure_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let rounds = 2;
    // The mount must hold, and /dev/shm must refuse a file, or the test proves nothing.
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg(
            "mount -t tmpfs -o ro,size=64k none /dev/shm || exit 90; \
             ( : > /dev/shm/probe ) 2>/dev/null && exit 91; exec \"$@\"",
        )
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_sshbench"))
        .args(["run", "-q", "--db"])
        .arg(&db)
        .args(["--mode", "send,receive", "--sample-time", "100ms"])
        .args(["--rounds", &rounds.to_string(), "--ciphers", "aes128-ctr"])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com"])
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    common::assert_success(&out, ("run without a writable /dev/shm", out.status));
    let store = Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs[0].status, RunStatus::Complete);
    let (_, samples) = store.select(&Default::default()).unwrap();
    for mode in [Mode::Send, Mode::Receive] {
        let counted: Vec<_> = samples
            .iter()
            .filter(|s| s.sample.mode == mode && s.round > 0)
            .map(|s| &s.sample)
            .collect();
        assert_eq!(counted.len(), rounds, "{mode:?}");
        for s in counted {
            assert!(s.outcome.is_success(), "{s:#?}");
            // Every byte arrived and was counted; the rate comes from a steady window
            // after the ramp, and the client's CPU over it was read.
            let w = s.window.expect("a steady window");
            assert!(w.bytes > 0 && w.bytes < s.bytes, "{s:#?}");
            assert!(s.throughput().is_some_and(|r| r > 1e6), "{s:#?}");
            assert!(s.client_window_cpu.is_some(), "{s:#?}");
        }
    }
}
