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

/// The helper programs an sshd from 9.8 on starts for each connection (`sshd-session`;
/// from 10.0 `sshd-auth` too), found beside a given `sshd` as its packages place them:
/// the same directory, `../lib/openssh` (Debian), `../libexec` (portable's default) or
/// `../libexec/openssh`. Each with the sshd_config option that names it; an sshd
/// otherwise runs the helpers compiled into it, which for one unpacked beside the
/// system's are the system's own.
pub(super) fn helpers_beside(sshd: &Path) -> Vec<(&'static str, PathBuf)> {
    let Some(dir) = sshd.parent() else {
        return Vec::new();
    };
    let prefix = dir.parent().unwrap_or(dir);
    let places = [
        dir.to_path_buf(),
        prefix.join("lib/openssh"),
        prefix.join("libexec"),
        prefix.join("libexec/openssh"),
    ];
    // Named as the server is: HPN-SSH's `hpnsshd` starts `hpnsshd-session`.
    let own = sshd.file_name().and_then(|n| n.to_str()).unwrap_or("sshd");
    [
        ("SshdSessionPath", "sshd-session"),
        ("SshdAuthPath", "sshd-auth"),
    ]
    .into_iter()
    .filter_map(|(option, name)| {
        let named = own.replacen("sshd", name, 1);
        let found = [named.as_str(), name]
            .into_iter()
            .flat_map(|n| places.iter().map(move |d| d.join(n)))
            .find(|p| is_executable(p));
        found.map(|p| (option, p))
    })
    .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Debian's layout (`usr/sbin/sshd`, `usr/lib/openssh/sshd-session`) and a build
    /// directory's (everything side by side); none beside an sshd without helpers.
    #[test]
    fn an_sshd_s_helpers_are_found_where_its_packages_put_them() {
        let tmp = tempfile::tempdir().unwrap();
        let exe = |p: &Path| {
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "#!/bin/sh\n").unwrap();
            fs::set_permissions(p, fs::Permissions::from_mode(0o755)).unwrap();
        };
        let debian = tmp.path().join("debian/usr");
        exe(&debian.join("sbin/sshd"));
        exe(&debian.join("lib/openssh/sshd-session"));
        exe(&debian.join("lib/openssh/sshd-auth"));
        let found = helpers_beside(&debian.join("sbin/sshd"));
        assert_eq!(
            found,
            [
                ("SshdSessionPath", debian.join("lib/openssh/sshd-session")),
                ("SshdAuthPath", debian.join("lib/openssh/sshd-auth")),
            ]
        );
        let build = tmp.path().join("build");
        exe(&build.join("sshd"));
        exe(&build.join("sshd-session"));
        let found = helpers_beside(&build.join("sshd"));
        assert_eq!(found, [("SshdSessionPath", build.join("sshd-session"))]);
        let old = tmp.path().join("old/sbin/sshd");
        exe(&old);
        assert!(helpers_beside(&old).is_empty());
        // HPN-SSH's, as its `make install` places them: prefixed like the server.
        let hpn = tmp.path().join("hpn");
        exe(&hpn.join("sbin/hpnsshd"));
        exe(&hpn.join("libexec/hpnsshd-session"));
        exe(&hpn.join("libexec/hpnsshd-auth"));
        let found = helpers_beside(&hpn.join("sbin/hpnsshd"));
        assert_eq!(
            found,
            [
                ("SshdSessionPath", hpn.join("libexec/hpnsshd-session")),
                ("SshdAuthPath", hpn.join("libexec/hpnsshd-auth")),
            ]
        );
    }
}
