//! Fuzz the readers of ssh's `-v` lines and the `ssh -vv` offer: any text ssh (or a
//! server through it) could log must end in an answer, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    let lines: Vec<String> = String::from_utf8_lossy(data).lines().map(str::to_string).collect();
    let times: Vec<Duration> = (0..lines.len()).map(|i| Duration::from_millis(i as u64)).collect();
    let _ = sshbench::measure::sshlog::classify(&lines);
    let _ = sshbench::measure::sshlog::negotiated(&lines);
    let _ = sshbench::measure::sshlog::phases(&lines, &times, Duration::from_secs(1));
    let _ = sshbench::measure::sshlog::compression_factor(&lines);
    let _ = sshbench::offer::server::parse_ssh_vv(&lines, None);
});
