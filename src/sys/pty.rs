//! Whether a process of this user, not root, can hand a pseudo-terminal to a session as
//! sshd does: sshd gives the terminal to the login's user and the `tty` group, and a
//! `chown` to that group needs root unless new terminals already belong to it (devpts
//! mounted with `gid=5`). A private sshd run by an ordinary user can then give no
//! terminal, and its sessions that ask for one end at once.

/// Whether new terminals can be handed over here; `true` for root, and where it cannot
/// be told (not Linux).
pub fn terminals_handed_over() -> bool {
    imp::terminals_handed_over()
}

#[cfg(target_os = "linux")]
mod imp {
    use std::ffi::CStr;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    pub(super) fn terminals_handed_over() -> bool {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            return true;
        }
        // SAFETY: getgrnam returns a pointer into static storage or null; only its gid
        // is read, at once.
        let tty = unsafe { libc::getgrnam(c"tty".as_ptr()) };
        if tty.is_null() {
            // sshd then keeps the user's own group: no chown to another.
            return true;
        }
        // SAFETY: as above, not null.
        let tty_gid = unsafe { (*tty).gr_gid };
        new_terminal_group().is_none_or(|gid| gid == tty_gid)
    }

    /// The group a terminal this process opens gets; `None` when none can be opened.
    fn new_terminal_group() -> Option<libc::gid_t> {
        // SAFETY: posix_openpt returns a new fd or -1.
        let fd = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY) };
        // SAFETY: a non-negative return is an fd this process owns.
        let master = (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })?;
        let mut name = [0 as libc::c_char; 128];
        // SAFETY: the buffer is 128 bytes and ptsname_r writes at most that.
        let named = unsafe { libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) };
        if named != 0 {
            return None;
        }
        // SAFETY: ptsname_r wrote a NUL-terminated path into the buffer.
        let path = unsafe { CStr::from_ptr(name.as_ptr()) };
        let meta = std::fs::metadata(path.to_str().ok()?).ok()?;
        Some(std::os::unix::fs::MetadataExt::gid(&meta))
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn terminals_handed_over() -> bool {
        true
    }
}
