//! The sandbox path's own ceiling: one raw TCP stream along the way the ssh connections
//! take (loopback, or the lab's shaped namespace link and delay relay), from the calling
//! thread to a sink on the server's CPUs. What SSH moves over the same path can be set
//! against it.

use super::Sandbox;
use super::relay::Relay;
use crate::sys::affinity;
use anyhow::{Context, Result, anyhow};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the stream runs on plain loopback, and through a lab's link (TCP needs a
/// few round trips, and a shaped link's queue, before it is steady).
const LOOPBACK_TIME: Duration = Duration::from_millis(300);
const LAB_TIME: Duration = Duration::from_secs(2);
/// The first third of the stream is not counted: it is TCP's start.
const UNCOUNTED: f64 = 1.0 / 3.0;
/// How long the sink waits for the connection, and for each read.
const WAIT: Duration = Duration::from_secs(5);
const CHUNK: usize = 1 << 20;

impl Sandbox {
    /// Bytes per second one TCP stream moves along the sandbox's path, as the far end
    /// receives them past the stream's start.
    pub fn tcp_rate(&self) -> Result<f64> {
        let (tx, rx) = mpsc::channel();
        let (host, cpus) = (self.host.clone(), self.server_cpus.clone());
        let netns = self.netns.as_ref().map(|n| n.name.clone());
        let time = if self.netns.is_some() || self.relay.is_some() {
            LAB_TIME
        } else {
            LOOPBACK_TIME
        };
        let sink = crate::sys::proc::spawn_named("sb-tcp-sink", move || {
            sink(&host, netns.as_deref(), cpus, time, &tx)
        });
        let port = rx
            .recv_timeout(WAIT)
            .map_err(|_| anyhow!("the TCP sink did not start"))?;
        // Through the delay lab, a relay of its own with the same delay.
        let relay = match &self.relay {
            Some(r) => Some(Relay::start((self.host.clone(), port), r.rtt())?),
            None => None,
        };
        let to = match &relay {
            Some(r) => ("127.0.0.1".to_string(), r.port()),
            None => (self.host.clone(), port),
        };
        let written = feed(&to, time);
        let rate = sink.join().map_err(|_| anyhow!("the TCP sink panicked"))?;
        written?;
        rate
    }
}

/// Write zeros to `to` for `time`, then close.
fn feed(to: &(String, u16), time: Duration) -> Result<()> {
    let mut s = TcpStream::connect((to.0.as_str(), to.1)).context("connecting to the TCP sink")?;
    let buf = vec![0u8; CHUNK];
    let start = Instant::now();
    while start.elapsed() < time {
        s.write_all(&buf).context("writing to the TCP sink")?;
    }
    s.shutdown(Shutdown::Write)?;
    Ok(())
}

/// Listen where sshd does (in the lab's namespace, on the server's CPUs), say the port,
/// take one connection and drain it; the rate past its uncounted start.
fn sink(
    host: &str,
    netns: Option<&str>,
    cpus: Option<Vec<usize>>,
    time: Duration,
    port: &mpsc::Sender<u16>,
) -> Result<f64> {
    if let Some(ns) = netns {
        super::lab::enter_netns(ns)?;
    }
    if let Some(c) = cpus {
        affinity::pin_thread(&c)?;
    }
    let listener = TcpListener::bind((host, 0))?;
    let _ = port.send(listener.local_addr()?.port());
    let mut s = accept(&listener)?;
    s.set_read_timeout(Some(WAIT))?;
    let mut buf = vec![0u8; CHUNK];
    let (mut total, mut first, mut counted) = (0u64, None::<Instant>, None::<(Instant, u64)>);
    let settle = time.mul_f64(UNCOUNTED);
    loop {
        let n = s.read(&mut buf).context("reading the TCP stream")?;
        let now = Instant::now();
        if n == 0 {
            let (at, from) = counted.ok_or_else(|| anyhow!("the TCP stream was too short"))?;
            let t = now.duration_since(at).as_secs_f64();
            return Ok((total - from) as f64 / t.max(1e-6));
        }
        total += n as u64;
        let t0 = *first.get_or_insert(now);
        if counted.is_none() && now.duration_since(t0) >= settle {
            counted = Some((now, total));
        }
    }
}

/// The one connection, waited for boundedly.
fn accept(listener: &TcpListener) -> Result<TcpStream> {
    listener.set_nonblocking(true)?;
    let deadline = Instant::now() + WAIT;
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                return Ok(s);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(e).context("waiting for the TCP stream"),
        }
    }
}
