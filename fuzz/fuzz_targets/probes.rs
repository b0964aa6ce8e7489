//! Fuzz the readers of what the remote probes print and of `ssh -G`: a hostile login's
//! numbers must be believed or refused, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = sshbench::measure::remote::parse_cpu_probe(line, sshbench::measure::remote::CPU0);
    }
    let _ = sshbench::measure::remote::parse_shell_start(&text);
    let _ = sshbench::destination::parse_ssh_g(&text);
});
