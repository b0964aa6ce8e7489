//! What a window- or link-bound transfer means, in one sentence with its numbers and
//! what would help: the channel window over the round trip caps one channel whatever
//! the cipher.

use super::{Bound, PathWindow};
use crate::model::Mode;

/// A window below this is a small one worth naming (Dropbear's default is 24 KiB;
/// OpenSSH's 2 MiB).
const SMALL_WINDOW: u64 = 1 << 20;

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// The sentence for the best suite of a transfer mode that is window- or link-bound
/// (`rate` in bytes per second); `None` for the other verdicts.
pub fn sentence(mode: Mode, bound: Bound, w: PathWindow, rate: f64) -> Option<String> {
    let (whose, who) = match mode {
        Mode::Send => ("the server's", "the server"),
        _ => ("this client's", "this client"),
    };
    // The receiver's time to take a window in is named only where it moves the cap. It
    // may overlap the round trip (a receiver that extends the window before it is used
    // up), so the cap is given as the range between the two.
    let (handling, allows) = if w.handling >= w.rtt * 0.1 {
        let alone = w.bytes as f64 / w.rtt;
        (
            format!(" ({:.2} ms more for {who} to take it in)", w.handling * 1e3),
            format!("{:.1}-{:.1}", w.cap() / 1e6, alone / 1e6),
        )
    } else {
        (String::new(), format!("{:.1}", w.cap() / 1e6))
    };
    let cap = format!(
        "{whose} {} channel window per {:.2} ms round trip{handling} allows {allows} MB/s",
        size(w.bytes),
        w.rtt * 1e3,
    );
    match bound {
        Bound::Window => {
            let fix = if mode == Mode::Send && w.bytes < SMALL_WINDOW {
                "a larger server window (Dropbear: start it with -W 2097152)"
            } else {
                "larger windows (HPN-SSH on both ends)"
            };
            Some(format!(
                "{mode} is window-bound: {cap} and it moved {:.1}; the cipher does not matter here, {fix} or parallel streams would help.",
                rate / 1e6
            ))
        }
        Bound::Link => Some(format!(
            "{mode} is network-bound: {cap}, but the link moved {:.1}; neither the cipher nor a larger window would help.",
            rate / 1e6
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_server_window_names_dropbear_s_flag() {
        let w = PathWindow {
            bytes: 24576,
            rtt: 0.00026,
            handling: 0.00034,
        };
        let s = sentence(Mode::Send, Bound::Window, w, 41e6).unwrap();
        assert_eq!(
            s,
            "send is window-bound: the server's 24 KiB channel window per 0.26 ms round trip (0.34 ms more for the server to take it in) allows 41.0-94.5 MB/s and it moved 41.0; the cipher does not matter here, a larger server window (Dropbear: start it with -W 2097152) or parallel streams would help."
        );
    }

    #[test]
    fn a_far_link_names_larger_windows_and_a_slow_one_the_link() {
        let w = PathWindow {
            bytes: 2 << 20,
            rtt: 0.05,
            handling: 0.001,
        };
        let s = sentence(Mode::Receive, Bound::Window, w, 40e6).unwrap();
        assert!(
            s.contains(
                "this client's 2 MiB channel window per 50.00 ms round trip allows 41.1 MB/s"
            ),
            "{s}"
        );
        assert!(s.contains("HPN-SSH"), "{s}");
        let link = sentence(Mode::Send, Bound::Link, w, 2e6).unwrap();
        assert!(link.starts_with("send is network-bound"), "{link}");
        assert_eq!(sentence(Mode::Send, Bound::Client, w, 1.0), None);
    }
}
