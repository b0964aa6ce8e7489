//! A child's TCP connection, seen from this process: its socket borrowed through a
//! pidfd (Linux 5.6+, same user) and its kernel counters read with `TCP_INFO`. Elsewhere,
//! or where the kernel refuses, there is no socket and every figure is unknown.

/// Bytes and segments a socket has carried since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpCounters {
    pub bytes_out: u64,
    pub segs_out: u64,
    pub bytes_in: u64,
    pub segs_in: u64,
}

impl TcpCounters {
    /// What was carried between `self` and a later reading.
    pub fn until(&self, later: &TcpCounters) -> TcpCounters {
        TcpCounters {
            bytes_out: later.bytes_out.saturating_sub(self.bytes_out),
            segs_out: later.segs_out.saturating_sub(self.segs_out),
            bytes_in: later.bytes_in.saturating_sub(self.bytes_in),
            segs_in: later.segs_in.saturating_sub(self.segs_in),
        }
    }
}

/// A duplicate of another process's TCP socket: reading it never disturbs its owner.
pub struct PeerSocket {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
}

impl PeerSocket {
    /// The one TCP socket `pid` holds, if the OS lets this process borrow it; `None`
    /// for a process that holds none (ssh through a ProxyCommand talks to a pipe) or
    /// several.
    pub fn of_process(pid: u32) -> Option<PeerSocket> {
        imp::of_process(pid)
    }

    pub fn counters(&self) -> Option<TcpCounters> {
        imp::counters(self)
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{PeerSocket, TcpCounters};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// `struct tcp_info` (linux/tcp.h) up to `tcpi_bytes_sent` (Linux 4.19): the kernel
    /// fills what it has and says how much.
    #[repr(C)]
    #[derive(Default)]
    struct TcpInfo {
        head: [u8; 8],
        u32s_a: [u32; 24],
        pacing_rate: u64,
        max_pacing_rate: u64,
        bytes_acked: u64,
        bytes_received: u64,
        segs_out: u32,
        segs_in: u32,
        u32s_b: [u32; 4],
        delivery_rate: u64,
        busy_time: u64,
        rwnd_limited: u64,
        sndbuf_limited: u64,
        delivered: u32,
        delivered_ce: u32,
        bytes_sent: u64,
    }

    pub(super) fn of_process(pid: u32) -> Option<PeerSocket> {
        let pid = libc::pid_t::try_from(pid).ok()?;
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        // SAFETY: a non-negative return is a new fd this process owns.
        let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd as i32) })?;
        let mut found = None;
        for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
            let link = std::fs::read_link(entry.path()).ok()?;
            if !link.to_string_lossy().starts_with("socket:") {
                continue;
            }
            let Some(target) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            // SAFETY: pidfd_getfd duplicates the target's fd into this process or fails.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), target, 0) };
            if fd < 0 {
                continue;
            }
            // SAFETY: as above, a new fd of our own.
            let socket = PeerSocket {
                fd: unsafe { OwnedFd::from_raw_fd(fd as i32) },
            };
            if socket.counters().is_some() {
                if found.is_some() {
                    return None;
                }
                found = Some(socket);
            }
        }
        found
    }

    pub(super) fn counters(s: &PeerSocket) -> Option<TcpCounters> {
        let mut info = TcpInfo::default();
        let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
        // SAFETY: the buffer is `len` bytes of plain integers; the kernel writes at most
        // that and says how much.
        let rc = unsafe {
            libc::getsockopt(
                s.fd.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&raw mut info).cast(),
                &mut len,
            )
        };
        // A kernel older than 4.19 fills less: its counters are not all there.
        (rc == 0 && len as usize == std::mem::size_of::<TcpInfo>()).then_some(TcpCounters {
            bytes_out: info.bytes_sent,
            segs_out: info.segs_out.into(),
            bytes_in: info.bytes_received,
            segs_in: info.segs_in.into(),
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{PeerSocket, TcpCounters};

    pub(super) fn of_process(_pid: u32) -> Option<PeerSocket> {
        None
    }

    pub(super) fn counters(_s: &PeerSocket) -> Option<TcpCounters> {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn a_child_s_socket_is_found_and_counts_what_it_carries() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // A child that connects, writes 1000 bytes when told, and waits.
        let script = format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port}; read _; head -c 1000 /dev/zero >&3; read _"
        );
        let mut child = std::process::Command::new("bash")
            .args(["-c", &script])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        let socket = PeerSocket::of_process(child.id()).expect("its one TCP socket");
        let before = socket.counters().unwrap();
        let stdin = child.stdin.as_mut().unwrap();
        stdin.write_all(b"go\n").unwrap();
        let mut got = [0u8; 1000];
        peer.read_exact(&mut got).unwrap();
        let after = socket.counters().unwrap();
        let _ = child.kill();
        let _ = child.wait();
        let moved = before.until(&after);
        assert_eq!(moved.bytes_out, 1000);
        assert!(moved.segs_out >= 1, "{moved:?}");
        assert_eq!(moved.bytes_in, 0, "{moved:?}");
    }

    #[test]
    fn a_process_without_a_tcp_socket_has_none() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert!(PeerSocket::of_process(child.id()).is_none());
        let _ = child.kill();
        let _ = child.wait();
    }
}
