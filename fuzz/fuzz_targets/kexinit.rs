//! Fuzz the server-offer parser: any byte stream a hostile server could send must end in
//! an offer or an error, never a panic, a hang or an unbounded allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(offer) = sshbench::offer::server::parse_stream(data) {
        // Everything derived from a parsed offer must be total too.
        let _ = offer.kexinit.lists();
        let _ = offer.kexinit.strict_kex();
    }
    let _ = sshbench::offer::server::parse_kexinit(data);
});
