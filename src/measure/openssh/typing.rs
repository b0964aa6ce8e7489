//! Typing in a terminal: keys written to `ssh -tt` on a person's schedule, whatever their
//! echoes do (a typist does not wait for them), each echo matched to its key by order,
//! and the client's socket counters read between the bursts.
//!
//! The pattern (bench/results/notebook.md, "Typing in a terminal"): three bursts of
//! [`KEYS_PER_BURST`] keys 40-120 ms apart, drawn at random per sample (a fixed gap at a
//! multiple of the client's 20 ms clock would always meet the same phase of it): the
//! first at the session's start, the second after a pause within the 1-3 s the client
//! sends chaff after a key, the third after a pause past any chaff period.

use super::streams::{StdoutReport, wait_ready};
use crate::model::typing::{KEYS_PER_BURST, TYPED_KEYS};
use crate::model::{Problem, TypedKey, Typing, TypingWire, WireSpan};
use crate::sys::proc;
use crate::sys::tcpinfo::{PeerSocket, TcpCounters};
use std::io::{BufReader, Read, Write};
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The pauses before the second and the third burst.
const PAUSES: [Duration; 2] = [Duration::from_millis(800), Duration::from_millis(3500)];
const GAP_MS: std::ops::Range<u64> = 40..121;

/// One key as it was typed.
struct Typed {
    at: Instant,
    idle_s: Option<f64>,
    position: u8,
}

/// What the writer keeps while it types.
struct Typist {
    echoes: mpsc::Receiver<(u8, Instant)>,
    typed: Vec<Typed>,
    keys: Vec<TypedKey>,
    socket: Option<PeerSocket>,
}

impl Typist {
    /// Type one burst on its schedule, then wait for its echoes; the wire it took.
    fn burst(&mut self, stdin: &mut impl Write, rng: &mut fastrand::Rng) -> Result<Span, Problem> {
        let start = (Instant::now(), self.counters());
        let mut at = start.0;
        for position in 0..KEYS_PER_BURST {
            if position > 0 {
                at += Duration::from_millis(rng.u64(GAP_MS));
                std::thread::sleep(at.saturating_duration_since(Instant::now()));
            }
            let i = self.typed.len() as u64;
            let now = Instant::now();
            stdin.write_all(&[key(i)]).map_err(|e| Problem::Pipe {
                error: e.to_string(),
            })?;
            let idle_s = (self.typed.last()).map(|t| now.duration_since(t.at).as_secs_f64());
            self.typed.push(Typed {
                at: now,
                idle_s,
                position: position as u8,
            });
        }
        while self.keys.len() < self.typed.len() {
            self.echo()?;
        }
        Ok(Span::between(start, (Instant::now(), self.counters())))
    }

    /// The next echo, matched to the next key waiting for one.
    fn echo(&mut self) -> Result<(), Problem> {
        let i = self.keys.len();
        let (got, when) = (self.echoes.recv()).map_err(|_| Problem::KeysEnded {
            at: i as u64,
            total: TYPED_KEYS,
        })?;
        let typed = &self.typed[i];
        let sent = key(i as u64);
        if got != sent {
            return Err(Problem::KeyGarbled {
                at: i as u64,
                sent,
                got,
            });
        }
        self.keys.push(TypedKey {
            idle_s: typed.idle_s,
            position: typed.position,
            echo_s: when.duration_since(typed.at).as_secs_f64(),
        });
        Ok(())
    }

    fn counters(&self) -> Option<TcpCounters> {
        self.socket.as_ref()?.counters()
    }
}

/// The key typed `i`-th: letters in turn, so that an echo out of order shows.
fn key(i: u64) -> u8 {
    b'a' + (i % 26) as u8
}

/// A stretch of time and what the socket carried over it, if it tells.
struct Span {
    seconds: f64,
    moved: Option<TcpCounters>,
}

impl Span {
    fn between(a: (Instant, Option<TcpCounters>), b: (Instant, Option<TcpCounters>)) -> Span {
        Span {
            seconds: b.0.duration_since(a.0).as_secs_f64(),
            moved: a.1.zip(b.1).map(|(x, y)| x.until(&y)),
        }
    }
}

/// Spans added up: the bursts' time and traffic together.
fn wire(spans: &[Span]) -> Option<WireSpan> {
    let mut w = WireSpan::default();
    for s in spans {
        let m = s.moved?;
        w.seconds += s.seconds;
        w.bytes_out += m.bytes_out;
        w.packets_out += m.segs_out;
        w.bytes_in += m.bytes_in;
        w.packets_in += m.segs_in;
    }
    Some(w)
}

/// After the ready line, type the three bursts and their pauses; every echo is checked.
/// The remote side ends the session after the last key.
pub(super) fn typing_session(child: &mut Child) -> mpsc::Receiver<StdoutReport> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout piped");
    let mut stdin = child.stdin.take().expect("stdin piped");
    let pid = child.id();
    proc::spawn_named("sb-typing", move || {
        let mut r = BufReader::new(stdout);
        let mut report = StdoutReport::default();
        if wait_ready(&mut r, &mut report) {
            let (echo_tx, echoes) = mpsc::channel();
            let reader = proc::spawn_named("sb-typed", move || read_echoes(r, echo_tx));
            let mut typist = Typist {
                echoes,
                typed: Vec::new(),
                keys: Vec::new(),
                socket: PeerSocket::of_process(pid),
            };
            match type_all(&mut typist, &mut stdin) {
                Ok(wire) => {
                    report.end_at = Some(Instant::now());
                    report.echoes = typist.keys.iter().map(|k| k.echo_s).collect();
                    report.typing = Some(Typing {
                        keys: typist.keys,
                        wire,
                    });
                }
                Err(e) => report.error = Some(e),
            }
            drop(stdin);
            drop(typist.echoes);
            if let Ok(extra) = reader.join()
                && extra > 0
                && report.error.is_none()
            {
                report.error = Some(Problem::AfterEcho { bytes: extra });
            }
        }
        let _ = tx.send(report);
    });
    rx
}

/// The bursts and pauses: the wire while typing (the bursts) and in the long pause.
fn type_all(t: &mut Typist, stdin: &mut impl Write) -> Result<Option<TypingWire>, Problem> {
    let mut rng = fastrand::Rng::new();
    let mut typing = vec![t.burst(stdin, &mut rng)?];
    let mut idle = None;
    for pause in PAUSES {
        let start = (Instant::now(), t.counters());
        std::thread::sleep(pause);
        idle = Some(Span::between(start, (Instant::now(), t.counters())));
        typing.push(t.burst(stdin, &mut rng)?);
    }
    // The last pause is past any chaff period: what the client sends after typing.
    Ok(wire(&typing)
        .zip(idle.and_then(|s| wire(&[s])))
        .map(|(typing, idle)| TypingWire { typing, idle }))
}

/// Hand each byte the session echoes to the typist as it comes; once every key's echo
/// is in, count what else arrives until the session ends.
fn read_echoes(mut r: impl Read, tx: mpsc::Sender<(u8, Instant)>) -> u64 {
    let mut byte = [0u8; 1];
    for _ in 0..TYPED_KEYS {
        match r.read(&mut byte) {
            Ok(1) => {
                if tx.send((byte[0], Instant::now())).is_err() {
                    return 0;
                }
            }
            _ => return 0,
        }
    }
    drop(tx);
    std::io::copy(&mut r, &mut std::io::sink()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_letters_in_turn() {
        assert_eq!(key(0), b'a');
        assert_eq!(key(25), b'z');
        assert_eq!(key(26), b'a');
        assert_eq!(TYPED_KEYS, KEYS_PER_BURST * (PAUSES.len() as u64 + 1));
    }

    #[test]
    fn spans_add_up_only_when_every_one_was_counted() {
        let t0 = Instant::now();
        let c = |bytes_out, segs_out| TcpCounters {
            bytes_out,
            segs_out,
            bytes_in: 2 * bytes_out,
            segs_in: segs_out,
        };
        let a = Span::between(
            (t0, Some(c(0, 0))),
            (t0 + Duration::from_secs(1), Some(c(100, 4))),
        );
        let b = Span::between(
            (t0, Some(c(100, 4))),
            (t0 + Duration::from_secs(2), Some(c(160, 7))),
        );
        let w = wire(&[a, b]).unwrap();
        assert_eq!(
            (w.seconds, w.bytes_out, w.packets_out, w.bytes_in),
            (3.0, 160, 7, 320)
        );
        let blind = Span::between((t0, None), (t0, Some(c(1, 1))));
        assert!(wire(&[blind]).is_none());
    }
}
