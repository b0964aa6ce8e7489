//! The server's side of a recommendation: what its software takes. OpenSSH's sshd (and
//! anything unknown) reads algorithm lists from `sshd_config`; Dropbear's are fixed when
//! it is built (`localoptions.h`), tinysshd's are its own: telling their admins to edit
//! an `sshd_config` would send them looking for a file that does nothing.

use crate::offer::server::parse_banner;
use serde::Serialize;

/// The server software, as far as it decides where algorithms are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerSoftware {
    /// `sshd_config` (OpenSSH, and what the banner does not name).
    #[default]
    Sshd,
    Dropbear,
    Tinyssh,
}

/// Why the server block's HostKeyAlgorithms is a comment.
const SERVER_HELD: &str = "HostKeyAlgorithms left as a comment: the server would stop offering \
     the key types it leaves out, and clients that know the server by one of them would be refused";

impl ServerSoftware {
    /// From the server's banner (`SSH-2.0-dropbear_2022.83`); `None` reads as sshd.
    pub fn from_banner(banner: Option<&str>) -> Self {
        let product = banner.and_then(|b| parse_banner(b).ok()).map(|v| v.product);
        match product.unwrap_or_default().to_ascii_lowercase().as_str() {
            "dropbear" => ServerSoftware::Dropbear,
            p if p.starts_with("tinyssh") => ServerSoftware::Tinyssh,
            _ => ServerSoftware::Sshd,
        }
    }

    pub fn is_sshd(&self) -> bool {
        *self == ServerSoftware::Sshd
    }

    /// The server's block: `sshd_config` lines of `lines` (keyword, names), or what the
    /// software takes instead.
    pub fn block(self, lines: &[(&str, String)]) -> String {
        match self {
            ServerSoftware::Sshd => {
                let mut out = String::from("# /etc/ssh/sshd_config (for the server's admin)\n");
                for (keyword, names) in lines {
                    // Restricting the host keys it offers gains nothing measurable and
                    // refuses every client that knows the server by a type left out.
                    let held = (*keyword == "HostKeyAlgorithms").then_some(SERVER_HELD);
                    let hash = super::hold_mark(&mut out, "", held);
                    out.push_str(&format!("{hash}{keyword} {names}\n"));
                }
                out
            }
            ServerSoftware::Dropbear => {
                "# The server is Dropbear: its algorithms are chosen when it \
                 is built (localoptions.h),\n# not in a file it reads; the block above is all \
                 the clients need.\n"
                    .to_string()
            }
            ServerSoftware::Tinyssh => "# The server is tinysshd: it offers a fixed set of \
                 algorithms, nothing to set on its side;\n# the block above is all the clients \
                 need.\n"
                .to_string(),
        }
    }

    /// How the server's admin could offer `names` for `keyword`.
    pub fn offer_fix(self, keyword: &str, names: &str) -> String {
        match self {
            ServerSoftware::Sshd => {
                format!(
                    "the server's admin can offer a recommended one (sshd_config: `{keyword} {names}`)"
                )
            }
            ServerSoftware::Dropbear => format!(
                "a Dropbear built with a recommended one ({names}; localoptions.h) or a newer \
                 release would offer it"
            ),
            ServerSoftware::Tinyssh => {
                format!("tinysshd's set is fixed: the recommended ones ({names}) are not in it")
            }
        }
    }

    /// What would close the Terrapin exposure on the server's side.
    pub fn strict_kex_fix(self) -> &'static str {
        match self {
            ServerSoftware::Sshd => {
                "a server with strict KEX (OpenSSH 9.6 or later, or its distribution's fix) \
                 removes that exposure"
            }
            ServerSoftware::Dropbear => "a Dropbear release with strict KEX removes that exposure",
            ServerSoftware::Tinyssh => "a tinysshd release with strict KEX removes that exposure",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_names_the_software() {
        let of = |b| ServerSoftware::from_banner(Some(b));
        assert_eq!(of("SSH-2.0-dropbear_2022.83"), ServerSoftware::Dropbear);
        assert_eq!(of("SSH-2.0-dropbear"), ServerSoftware::Dropbear);
        assert_eq!(of("SSH-2.0-tinysshd_20230101"), ServerSoftware::Tinyssh);
        assert_eq!(of("SSH-2.0-tinyssh_20230101"), ServerSoftware::Tinyssh);
        assert_eq!(of("SSH-2.0-OpenSSH_9.2p1 Debian-2"), ServerSoftware::Sshd);
        assert_eq!(of("SSH-2.0-ROSSSH"), ServerSoftware::Sshd);
        assert_eq!(ServerSoftware::from_banner(None), ServerSoftware::Sshd);
    }

    #[test]
    fn the_server_s_host_key_list_is_a_comment() {
        let lines = [("HostKeyAlgorithms", "ssh-ed25519".to_string())];
        let block = ServerSoftware::Sshd.block(&lines);
        assert!(
            block.ends_with(&format!(
                "# {SERVER_HELD}\n# HostKeyAlgorithms ssh-ed25519\n"
            )),
            "{block}"
        );
    }

    #[test]
    fn only_sshd_is_told_of_sshd_config() {
        let lines = [("Ciphers", "aes128-ctr".to_string())];
        assert_eq!(
            ServerSoftware::Sshd.block(&lines),
            "# /etc/ssh/sshd_config (for the server's admin)\nCiphers aes128-ctr\n"
        );
        for other in [ServerSoftware::Dropbear, ServerSoftware::Tinyssh] {
            let block = other.block(&lines);
            assert!(
                !block.contains("sshd_config") && !block.contains("Ciphers"),
                "{block}"
            );
            assert!(
                !other
                    .offer_fix("Ciphers", "aes128-ctr")
                    .contains("sshd_config")
            );
        }
    }
}
