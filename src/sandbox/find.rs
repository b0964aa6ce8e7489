//! Finding the OpenSSH server and ssh-keygen binaries.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where sshd is looked for after `PATH` (Linux distributions, BSD base and pkgsrc,
/// Homebrew, MacPorts).
const SSHD_PLACES: &[&str] = &[
    "/usr/sbin/sshd",
    "/usr/local/sbin/sshd",
    "/usr/libexec/sshd",
    "/usr/pkg/sbin/sshd",
    "/opt/homebrew/sbin/sshd",
    "/opt/local/sbin/sshd",
    "/sbin/sshd",
];

pub(super) const INSTALL_HINT: &str = "install the OpenSSH server: Debian/Ubuntu `apt-get install openssh-server`, \
     Fedora `dnf install openssh-server`, Arch `pacman -S openssh`, FreeBSD/OpenBSD/NetBSD and \
     macOS ship /usr/sbin/sshd (or `pkg install openssh-portable`, `brew install openssh`)";

/// Find sshd on PATH, then in the usual places.
pub fn find_sshd() -> Option<PathBuf> {
    find_on_path("sshd").or_else(|| {
        SSHD_PLACES
            .iter()
            .map(PathBuf::from)
            .find(|p| is_executable(p))
    })
}

pub(super) fn find_keygen(sshd: &Path) -> Option<PathBuf> {
    find_on_path("ssh-keygen").or_else(|| {
        // A source install keeps ssh-keygen in ../bin next to sbin/sshd.
        let sibling = sshd.parent()?.parent()?.join("bin/ssh-keygen");
        is_executable(&sibling).then_some(sibling)
    })
}

/// Find an executable by name on `PATH`, as an absolute path.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_absolute() && is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
