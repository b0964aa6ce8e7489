//! A deterministic transport for CLI tests: fixed figures derived from the suite's names.
//!
//! It lets tests of planning, tables and exit codes run without ssh and produce the
//! same output every time. Everything that can run for real is tested for real.

use super::Transport;
use crate::model::exec::prints;
use crate::model::typing::KEYS_PER_BURST;
use crate::model::{
    CpuTimes, ExecVia, FailureKind, KeyPlace, KeystrokeTiming, Mode, Negotiated, Outcome, Phases,
    Problem, Sample, SampleRequest, TypedKey, Typing, TypingWire, WireSpan,
};
use crate::sys::cancel::Cancel;
use std::time::Duration;

/// Figures: every name contributes a fixed cost; a cipher named in `refuse` is refused.
#[derive(Debug, Default)]
pub struct Mock {
    pub refuse: Vec<String>,
    /// How long each sample takes (none: at once), for tests of what happens meanwhile.
    pub pace: Duration,
}

/// A stable per-name cost in microseconds (FNV-1a, so no std hasher randomness).
fn cost(name: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    1_000 + h % 9_000
}

impl Transport for Mock {
    fn fork(&self) -> Option<Box<dyn Transport + Send>> {
        Some(Box::new(Mock {
            refuse: self.refuse.clone(),
            pace: self.pace,
        }))
    }

    fn measure(&mut self, req: &SampleRequest, cancel: &Cancel) -> Sample {
        let s = &req.suite;
        let names = [&s.kex, &s.hostkey, &s.cipher, &s.mac];
        let total: u64 = names.iter().filter_map(|n| n.as_deref()).map(cost).sum();
        let mut sample = Sample {
            wall: Duration::from_micros(50_000 + total),
            client_cpu: Some(CpuTimes {
                user: Duration::from_micros(total / 2),
                system: Duration::from_micros(total / 4),
            }),
            negotiated: Some(Box::new(Negotiated {
                kex: s.kex.clone(),
                hostkey: s.hostkey.clone(),
                cipher_cs: s.cipher.clone(),
                cipher_sc: s.cipher.clone(),
                mac_cs: s.mac.clone(),
                mac_sc: s.mac.clone(),
                ..Negotiated::default()
            })),
            ..Sample::new(s.clone(), req.mode, Outcome::Success)
        };
        let end = std::time::Instant::now() + self.pace;
        while !cancel.is_cancelled() && std::time::Instant::now() < end {
            std::thread::sleep((end - std::time::Instant::now()).min(Duration::from_millis(20)));
        }
        if cancel.is_cancelled() {
            sample.outcome = Outcome::failed(FailureKind::Cancelled, Problem::Interrupted);
        } else if s.cipher.as_ref().is_some_and(|c| self.refuse.contains(c)) {
            sample.outcome = Outcome::refused("no matching cipher found (mock)".into());
        } else {
            match req.mode {
                Mode::Echo => echo(&mut sample, req, total),
                Mode::Typing => {
                    let typed = typing(req.suite.keystrokes);
                    sample.echoes = typed.keys.iter().map(|k| k.echo_s).collect();
                    sample.typing = Some(Box::new(typed));
                    sample.bytes = req.bytes;
                }
                Mode::Exec => exec(&mut sample, req),
                Mode::X11 => x11(&mut sample, req),
                Mode::Connect => {}
                _ => transfer(&mut sample, req, total),
            }
        }
        sample
    }
}

/// Round trips of `cost / 100` µs, the i-th a little slower (a spread to rank); beside a
/// reference, the reference's own fixed cost, a little slower each keystroke.
fn echo(sample: &mut Sample, req: &SampleRequest, total: u64) {
    let timed = req.bytes - req.ramp.min(req.bytes);
    sample.echoes = (0..timed)
        .map(|i| (total as f64 / 100.0 + (i % 10) as f64) * 1e-6)
        .collect();
    if let Some(r) = &req.reference {
        let names = [&r.kex, &r.hostkey, &r.cipher, &r.mac];
        let cost: u64 = names.iter().filter_map(|n| n.as_deref()).map(cost).sum();
        sample.echoes_ref = (0..timed)
            .map(|i| (cost as f64 / 100.0 + (i % 7) as f64) * 1e-6)
            .collect();
    }
    sample.bytes = req.bytes;
}

/// Commands of 50 ms each on fresh connections (and their key exchange's fixed cost), 2 ms
/// over a master whose start took 50; those with output 10% longer.
fn exec(sample: &mut Sample, req: &SampleRequest) {
    let kex = req.suite.kex.as_deref().map_or(0, cost) as f64 * 1e-6;
    let (each, master) = match req.suite.exec {
        Some(ExecVia::Master) => (0.002, true),
        _ => (0.050 + kex, false),
    };
    sample.echoes = (0..req.bytes)
        .map(|i| each * if prints(i) { 1.1 } else { 1.0 })
        .collect();
    sample.phases = master.then_some(Phases {
        tcp: 0.001,
        version: 0.002,
        kex: 0.012,
        auth: 0.015,
        session: 0.020,
    });
    sample.bytes = req.bytes;
}

/// Five X clients of 2 ms each, 120 ms more with the keystroke clock on; a bulk one of
/// 40 ms for 3 MB, 10 ms more compressed.
fn x11(sample: &mut Sample, req: &SampleRequest) {
    let clock = req.suite.keystrokes.is_some_and(|k| !k.is_off());
    let each = if clock { 0.122 } else { 0.002 };
    sample.echoes = (0..5).map(|i| each + f64::from(i) * 1e-4).collect();
    let bulk = if req.suite.compression.is_some() {
        50
    } else {
        40
    };
    sample.transfer = Some(Duration::from_millis(bulk));
    sample.bytes = 3_148_907;
}

/// 1 ms per MiB per 1000 µs of cost: slower names, lower throughput. A time-bounded send
/// moves what fits into its time after the ramp.
fn transfer(sample: &mut Sample, req: &SampleRequest, total: u64) {
    let bytes = match (req.mode, req.until) {
        (Mode::Send, Some(until)) => {
            let rest = (until.as_micros() as u64 / total).max(1) << 20;
            (req.ramp + rest).min(req.bytes)
        }
        _ => req.bytes,
    };
    let micros = (bytes / (1 << 20)).max(1) * total;
    sample.transfer = Some(Duration::from_micros(micros));
    sample.wall += Duration::from_micros(micros);
    sample.bytes = bytes;
}

/// A typing sample's keys in the real pattern's places: 0.4 ms each, and where a clock
/// holds keys back, half its interval more for those within the chaff period and about
/// fifty chaff packets a second in the pause after them.
fn typing(clock: Option<KeystrokeTiming>) -> Typing {
    let interval_ms = match clock {
        Some(KeystrokeTiming::Yes) => 20,
        Some(KeystrokeTiming::Interval(ms)) => u64::from(ms),
        Some(KeystrokeTiming::No) | None => 0,
    };
    let pauses = [None, Some(0.8), Some(3.5)];
    let mut keys = Vec::new();
    for (burst, pause) in pauses.into_iter().enumerate() {
        for position in 0..KEYS_PER_BURST as u8 {
            let idle_s = if position == 0 { pause } else { Some(0.08) };
            let mut key = TypedKey {
                idle_s,
                position,
                echo_s: (400 + 10 * u64::from(position) + burst as u64) as f64 * 1e-6,
            };
            if interval_ms > 0 && key.place() != KeyPlace::AfterLongPause {
                key.echo_s += (interval_ms as f64 / 2.0 + f64::from(position) / 4.0) * 1e-3;
            }
            keys.push(key);
        }
    }
    let span = |seconds: f64, packets: u64| WireSpan {
        seconds,
        bytes_out: packets * 36,
        packets_out: packets,
        bytes_in: packets * 36,
        packets_in: packets,
    };
    let chaff = 2000u64.checked_div(interval_ms).unwrap_or(0);
    Typing {
        keys,
        wire: Some(TypingWire {
            typing: span(2.0, 24 + chaff),
            idle: span(3.5, chaff),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Suite;

    #[test]
    fn same_request_same_figures() {
        let req = SampleRequest {
            suite: Suite {
                cipher: Some("aes128-ctr".into()),
                ..Suite::default()
            },
            mode: Mode::Send,
            bytes: 8 << 20,
            ramp: 0,
            timeout: Duration::from_secs(1),
            until: None,
            together: None,
            reference: None,
        };
        let a = Mock::default().measure(&req, &Cancel::new());
        let b = Mock::default().measure(&req, &Cancel::new());
        assert_eq!(a.transfer, b.transfer);
        assert!(a.throughput().unwrap() > 0.0);
    }

    #[test]
    fn refuses_listed_ciphers() {
        let mut mock = Mock {
            refuse: vec!["3des-cbc".into()],
            ..Mock::default()
        };
        let req = SampleRequest {
            suite: Suite {
                cipher: Some("3des-cbc".into()),
                ..Suite::default()
            },
            mode: Mode::Connect,
            bytes: 0,
            ramp: 0,
            timeout: Duration::from_secs(1),
            until: None,
            together: None,
            reference: None,
        };
        assert_eq!(
            mock.measure(&req, &Cancel::new()).outcome.label(),
            "refused"
        );
    }
}
