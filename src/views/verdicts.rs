//! The verdicts of `analysis` in words: a window- or link-bound transfer, a path's
//! ceiling, and what parallel streams did against one.

use crate::analysis::ceiling::PathCeiling;
use crate::analysis::streams::{HELPS, StreamsFigure};
use crate::analysis::{Bound, PathWindow};
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

/// The most an HPN-SSH receiver opens its window to towards a stock OpenSSH sender:
/// HPN-SSH grows it with the receiver's TCP buffer, capped at 15 MiB when the other
/// end is not HPN-SSH.
const HPN_WINDOW: u64 = 15 << 20;

/// What an HPN-SSH receiver would allow over this round trip.
fn hpn_allows(w: PathWindow) -> String {
    let at_most = HPN_WINDOW as f64 / (w.rtt + w.handling);
    format!(
        "an HPN-SSH receiver, whose window follows its TCP receive buffer up to 15 MiB \
         towards a stock OpenSSH sender, would allow up to {:.1} MB/s at this round trip",
        at_most / 1e6
    )
}

/// The sentence for the best suite of a transfer mode that is window- or link-bound
/// (`rate` in bytes per second); `None` for the other verdicts.
pub fn window_bound(mode: Mode, bound: Bound, w: PathWindow, rate: f64) -> Option<String> {
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
        Bound::Window if w.grows => Some(window_not_grown(mode, w, rate)),
        Bound::Window => {
            let fix = match (mode, w.bytes < SMALL_WINDOW) {
                (Mode::Send, true) => {
                    "a larger server window (Dropbear: start it with -W 2097152)".to_string()
                }
                // Only dbclient's window is this small on a client.
                (_, true) => "a larger window for this client (dbclient -W 2097152; its \
                              most is 10 MB)"
                    .to_string(),
                _ => hpn_allows(w),
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

/// An HPN-SSH receiver that moved what its starting window allows: its window did not
/// follow a TCP receive buffer that did not grow.
fn window_not_grown(mode: Mode, w: PathWindow, rate: f64) -> String {
    let whose = match mode {
        Mode::Send => "the HPN-SSH server's",
        _ => "this HPN-SSH client's",
    };
    format!(
        "{mode} is window-bound: {whose} channel window starts at {} and \
         follows its TCP receive buffer (up to 15 MiB towards a stock OpenSSH sender), yet \
         it moved {:.1} MB/s, what {} per {:.2} ms round trip allows: the buffer did not \
         grow. The kernel sizes it from the round trip it sees: raise the maximum of \
         net.ipv4.tcp_rmem (Linux) and mind that behind a relay or proxy, as in the delay \
         lab, it sees a shorter round trip than the path's; parallel streams would help \
         meanwhile.",
        size(w.bytes),
        rate / 1e6,
        size(w.bytes),
        w.rtt * 1e3,
    )
}

/// One sentence on a path's ceiling (`label` names its suite): the figure, which suite
/// set it, and the raw TCP stream's.
pub fn ceiling(c: &PathCeiling, label: &str) -> String {
    let mb = |r: f64| r / 1e6;
    let head = if c.reached {
        format!(
            "{} path: {:.1} MB/s ({label}) with neither CPU saturated, the most one connection carried",
            c.mode,
            mb(c.rate)
        )
    } else {
        let why = match (c.bound, c.spare_slower) {
            (Some(b @ (Bound::Client | Bound::Server | Bound::Both)), false) => {
                format!("limited by {}; no suite had CPU to spare", bound_label(b))
            }
            (Some(b @ (Bound::Client | Bound::Server | Bound::Both)), true) => {
                format!(
                    "limited by {}; those with CPU to spare moved less",
                    bound_label(b)
                )
            }
            (Some(Bound::Rekeying), _) => "limited by its rekeys".to_string(),
            (_, true) => "its CPUs unknown; those with CPU to spare moved less".to_string(),
            (_, false) => "no suite was known to have CPU to spare".to_string(),
        };
        format!(
            "{} path: at least {:.1} MB/s ({label}; {why}), so its own ceiling may be higher",
            c.mode,
            mb(c.rate)
        )
    };
    let proxy = if c.via_proxy {
        " It runs through a jump host or proxy: that hop's connection is part of the \
         path, and the jump host's CPU is not counted."
    } else {
        ""
    };
    match c.tcp {
        Some(t) => format!(
            "{head}; one raw TCP stream along it moved {:.1} MB/s.{proxy}",
            mb(t)
        ),
        None => format!("{head}.{proxy}"),
    }
}

/// One sentence on a parallel batch: its numbers and what they mean.
pub fn streams(f: &StreamsFigure) -> String {
    let mut s = format!(
        "{} parallel {} streams of {} moved {:.1} MB/s",
        f.streams,
        f.mode,
        f.suite.cipher.as_deref().unwrap_or("the default cipher"),
        f.mean / 1e6
    );
    if let Some(ci) = f.ci95 {
        s.push_str(&format!(" (±{:.1})", ci / 1e6));
    }
    match (f.gain(), f.single) {
        (Some(g), Some(one)) if g >= HELPS => s.push_str(&format!(
            ", {g:.1}× one stream's {:.1}: parallel transfers would help (one connection waits on its window or a core, not on the link).",
            one / 1e6
        )),
        (Some(g), Some(one)) => s.push_str(&format!(
            ", {g:.2}× one stream's {:.1}: parallel transfers would not help (the path is full).",
            one / 1e6
        )),
        _ => s.push('.'),
    }
    s
}

/// What limits a transfer, as a table cell and in sentences.
pub fn bound_label(b: Bound) -> &'static str {
    match b {
        Bound::Client => "client CPU",
        Bound::Server => "server CPU",
        Bound::Both => "client and server CPU",
        Bound::Network => "network/window",
        Bound::Window => "window",
        Bound::Link => "network",
        Bound::Rekeying => "rekeying",
        Bound::Unknown => "?",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Suite;

    #[test]
    fn a_small_server_window_names_dropbear_s_flag() {
        let w = PathWindow {
            bytes: 24576,
            rtt: 0.00026,
            handling: 0.00034,
            grows: false,
        };
        let s = window_bound(Mode::Send, Bound::Window, w, 41e6).unwrap();
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
            grows: false,
        };
        let s = window_bound(Mode::Receive, Bound::Window, w, 40e6).unwrap();
        assert!(
            s.contains(
                "this client's 2 MiB channel window per 50.00 ms round trip allows 41.1 MB/s"
            ),
            "{s}"
        );
        assert!(
            s.contains("an HPN-SSH receiver, whose window follows its TCP receive buffer up to 15 MiB towards a stock OpenSSH sender, would allow up to 308.4 MB/s at this round trip"),
            "{s}"
        );
        let grows = PathWindow { grows: true, ..w };
        let hpn = window_bound(Mode::Receive, Bound::Window, grows, 40e6).unwrap();
        assert!(
            hpn.starts_with(
                "receive is window-bound: this HPN-SSH client's channel window starts at 2 MiB"
            ),
            "{hpn}"
        );
        assert!(
            hpn.contains("it moved 40.0 MB/s, what 2 MiB per 50.00 ms round trip allows: the buffer did not grow"),
            "{hpn}"
        );
        let server = window_bound(Mode::Send, Bound::Window, grows, 40e6).unwrap();
        assert!(
            server.starts_with("send is window-bound: the HPN-SSH server's channel window"),
            "{server}"
        );
        let link = window_bound(Mode::Send, Bound::Link, w, 2e6).unwrap();
        assert!(link.starts_with("send is network-bound"), "{link}");
        assert_eq!(window_bound(Mode::Send, Bound::Client, w, 1.0), None);
    }

    fn ceiling_of(mode: Mode, rate: f64, reached: bool, bound: Option<Bound>) -> PathCeiling {
        PathCeiling {
            mode,
            rate,
            suite: Suite::default(),
            reached,
            spare_slower: false,
            bound,
            tcp: None,
            via_proxy: false,
        }
    }

    #[test]
    fn a_ceiling_says_whether_the_path_or_a_cpu_stopped_it() {
        let reached = PathCeiling {
            tcp: Some(4e9),
            ..ceiling_of(Mode::Send, 500e6, true, None)
        };
        assert_eq!(
            ceiling(&reached, "aes128-gcm"),
            "send path: 500.0 MB/s (aes128-gcm) with neither CPU saturated, the most one connection carried; one raw TCP stream along it moved 4000.0 MB/s."
        );
        let both = PathCeiling {
            tcp: Some(4e9),
            ..ceiling_of(Mode::Receive, 800e6, false, Some(Bound::Both))
        };
        assert_eq!(
            ceiling(&both, "x"),
            "receive path: at least 800.0 MB/s (x; limited by client and server CPU; no suite had CPU to spare), so its own ceiling may be higher; one raw TCP stream along it moved 4000.0 MB/s."
        );
        let unknown = ceiling_of(Mode::Receive, 800e6, false, None);
        assert_eq!(
            ceiling(&unknown, "x"),
            "receive path: at least 800.0 MB/s (x; no suite was known to have CPU to spare), so its own ceiling may be higher."
        );
        let spare = PathCeiling {
            spare_slower: true,
            ..ceiling_of(Mode::Send, 900e6, false, Some(Bound::Client))
        };
        assert_eq!(
            ceiling(&spare, "x"),
            "send path: at least 900.0 MB/s (x; limited by client CPU; those with CPU to spare moved less), so its own ceiling may be higher."
        );
        let proxy = PathCeiling {
            via_proxy: true,
            ..ceiling_of(Mode::Send, 150e6, true, None)
        };
        assert_eq!(
            ceiling(&proxy, "x"),
            "send path: 150.0 MB/s (x) with neither CPU saturated, the most one connection \
             carried. It runs through a jump host or proxy: that hop's connection is part of \
             the path, and the jump host's CPU is not counted."
        );
    }

    #[test]
    fn parallel_streams_say_whether_they_help() {
        let f = StreamsFigure {
            mode: Mode::Send,
            suite: Suite::default(),
            streams: 2,
            mean: 60e6,
            ci95: Some(1e6),
            batches: 2,
            single: Some(30e6),
        };
        let helps = streams(&f);
        assert!(helps.contains("parallel transfers would help"), "{helps}");
        assert!(
            helps.starts_with(
                "2 parallel send streams of the default cipher moved 60.0 MB/s (±1.0)"
            ),
            "{helps}"
        );
        let full = streams(&StreamsFigure {
            single: Some(55e6),
            ..f
        });
        assert!(full.contains("would not help"), "{full}");
    }
}
