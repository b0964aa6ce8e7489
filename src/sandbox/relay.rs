//! The delay lab's link: a userspace TCP relay on 127.0.0.1 that holds every byte for
//! half the added round trip in each direction before passing it on (this kernel, like
//! many, has no `sch_netem`). It buffers what is in flight, as a long link does, up to a
//! bound; its own accuracy and ceiling are in bench/results/notebook.md ("Delay relay").

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes read at a time, and chunks held per direction (64 MiB in flight at most).
const CHUNK: usize = 64 * 1024;
const IN_FLIGHT: usize = 1024;

/// A running relay; dropping it stops accepting and closes every relayed connection.
pub struct Relay {
    port: u16,
    rtt: Duration,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

/// Read from `from` and queue each chunk with the instant it may leave.
fn read_side(mut from: TcpStream, tx: SyncSender<(Instant, Vec<u8>)>, half: Duration) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if tx.send((Instant::now() + half, buf[..n].to_vec())).is_err() {
                    return;
                }
            }
        }
    }
}

/// Write each queued chunk to `to` once its time has come; at the end of the stream,
/// pass the end on (half-close), as TCP would.
fn write_side(mut to: TcpStream, rx: Receiver<(Instant, Vec<u8>)>, stop: Arc<AtomicBool>) {
    while let Ok((due, bytes)) = rx.recv() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        if to.write_all(&bytes).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Relay one direction: `from` → `to`, each byte `half` late.
fn direction(from: TcpStream, to: TcpStream, half: Duration, stop: &Arc<AtomicBool>) {
    let (tx, rx) = mpsc::sync_channel(IN_FLIGHT);
    let stop = Arc::clone(stop);
    std::thread::spawn(move || write_side(to, rx, stop));
    std::thread::spawn(move || read_side(from, tx, half));
}

fn relay_one(client: TcpStream, server: (String, u16), half: Duration, stop: &Arc<AtomicBool>) {
    let Ok(upstream) = TcpStream::connect((server.0.as_str(), server.1)) else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (Ok(c2), Ok(u2)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    direction(client, upstream, half, stop);
    direction(u2, c2, half, stop);
}

impl Relay {
    /// Listen on a free 127.0.0.1 port and relay to `server`, adding `rtt` to every
    /// round trip.
    pub fn start(server: (String, u16), rtt: Duration) -> std::io::Result<Relay> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let half = rtt / 2;
        let accept = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        relay_one(client, server.clone(), half, &flag);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(Relay {
            port,
            rtt,
            stop,
            accept: Some(accept),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The round trip it adds.
    pub fn rtt(&self) -> Duration {
        self.rtt
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on loopback: what the relay's far end sees comes straight back.
    fn echo_server() -> u16 {
        let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut r = s.try_clone().unwrap();
                    let mut w = s;
                    let _ = std::io::copy(&mut r, &mut w);
                });
            }
        });
        port
    }

    #[test]
    fn a_round_trip_takes_the_added_delay_and_bytes_arrive_intact() {
        let relay = Relay::start(
            ("127.0.0.1".into(), echo_server()),
            Duration::from_millis(40),
        )
        .unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", relay.port())).unwrap();
        s.set_nodelay(true).unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let start = Instant::now();
        s.write_all(&data[..1]).unwrap();
        let mut one = [0u8; 1];
        s.read_exact(&mut one).unwrap();
        let rtt = start.elapsed();
        assert!(rtt >= Duration::from_millis(40), "{rtt:?}");
        let mut w = s.try_clone().unwrap();
        let sent = data.clone();
        let writer = std::thread::spawn(move || w.write_all(&sent).unwrap());
        let mut back = vec![0u8; data.len()];
        s.read_exact(&mut back).unwrap();
        writer.join().unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn dropping_it_stops_listening() {
        let relay = Relay::start(
            ("127.0.0.1".into(), echo_server()),
            Duration::from_millis(2),
        )
        .unwrap();
        let port = relay.port();
        drop(relay);
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
