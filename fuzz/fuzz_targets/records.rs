//! Fuzz the decoders of records a database row holds (notes, a sample's problem, a fleet
//! host's): any row must decode or be refused, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = sshbench::model::Note::decode_all(&text);
    let _ = sshbench::model::Problem::decode(&text);
    let _ = sshbench::model::HostProblem::decode(&text);
});
