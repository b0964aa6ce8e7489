//! TLS for the PostgreSQL store, with libpq's meanings of `sslmode` and `sslrootcert` in
//! the URL: `prefer` (the default: encrypted whenever the server offers it and its TLS
//! works) and `require` encrypt without checking who answers, `verify-ca` checks the
//! server's certificate against the CA certificates in `sslrootcert` (default
//! `~/.postgresql/root.crt`), `verify-full` checks its name as well, and `disable` never
//! encrypts; `PGSSLMODE` and `PGSSLROOTCERT` stand in for what the URL leaves out. The
//! driver knows only three of those values and no `sslrootcert`, so both come out of the
//! URL before it reads the rest.

use anyhow::{Context, Result, bail};
use native_tls::{Certificate, TlsConnector};
use postgres::config::SslMode;
use postgres_native_tls::MakeTlsConnector;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The TLS a URL asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    pub mode: Mode,
    /// `sslrootcert`, as given.
    pub root: Option<PathBuf>,
}

const MODES: &str = "disable, prefer, require, verify-ca or verify-full";

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }
}

fn mode(value: &str) -> Result<Mode> {
    Ok(match value {
        "disable" => Mode::Disable,
        "prefer" => Mode::Prefer,
        "require" => Mode::Require,
        "verify-ca" => Mode::VerifyCa,
        "verify-full" => Mode::VerifyFull,
        "allow" => bail!("sslmode=allow is not supported (it tries without TLS first): {MODES}"),
        other => bail!("sslmode={other}: not a mode; one of {MODES}"),
    })
}

/// Take `sslmode` and `sslrootcert` out of `url`'s query: the URL the driver reads, and
/// the TLS asked for. What the URL does not say comes from libpq's variables,
/// `PGSSLMODE` and `PGSSLROOTCERT` (through `env`), then `prefer`: someone who set
/// `PGSSLMODE=verify-full` for all their clients gets it here too.
pub fn split(url: &str, env: impl Fn(&str) -> Option<String>) -> Result<(String, Tls)> {
    let (plain, mode_given, root) = take_tls(url)?;
    let mode = match (mode_given, env("PGSSLMODE")) {
        (Some(m), _) => m,
        (None, Some(v)) => mode(&v).context("PGSSLMODE")?,
        (None, None) => Mode::Prefer,
    };
    let root = root.or_else(|| env("PGSSLROOTCERT").map(PathBuf::from));
    Ok((plain, Tls { mode, root }))
}

/// The URL without `sslmode` and `sslrootcert`, and their values.
fn take_tls(url: &str) -> Result<(String, Option<Mode>, Option<PathBuf>)> {
    let (mut mode_given, mut root) = (None, None);
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), None, None));
    };
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = || {
            percent_encoding::percent_decode_str(value)
                .decode_utf8()
                .with_context(|| format!("{key} in the database URL: not UTF-8"))
        };
        match key {
            "sslmode" => mode_given = Some(mode(&value()?)?),
            "sslrootcert" => root = Some(PathBuf::from(value()?.as_ref())),
            _ => kept.push(pair),
        }
    }
    let url = match kept.is_empty() {
        true => base.to_string(),
        false => format!("{base}?{}", kept.join("&")),
    };
    Ok((url, mode_given, root))
}

impl Tls {
    /// Whether the driver tries TLS, and whether it must get it.
    pub fn ssl_mode(&self) -> SslMode {
        match self.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }

    /// Whether the server's certificate is checked against a CA: the verify modes, and
    /// `require` given a `sslrootcert` (as libpq does).
    fn verifies(&self) -> bool {
        match self.mode {
            Mode::VerifyCa | Mode::VerifyFull => true,
            Mode::Require => self.root.is_some(),
            Mode::Disable | Mode::Prefer => false,
        }
    }

    /// Whether a failed connection is tried again without TLS: under `prefer`, when
    /// the TLS handshake itself failed (as libpq does).
    pub fn falls_back(&self, e: &anyhow::Error) -> bool {
        self.mode == Mode::Prefer && format!("{e:#}").contains("error performing TLS handshake")
    }

    /// The connector for these options.
    pub fn connector(&self) -> Result<MakeTlsConnector> {
        let mut builder = TlsConnector::builder();
        if self.verifies() {
            builder.disable_built_in_roots(true);
            for cert in self.roots()? {
                builder.add_root_certificate(cert);
            }
            builder.danger_accept_invalid_hostnames(self.mode != Mode::VerifyFull);
        } else {
            // libpq's `prefer` and `require`: encrypted, whoever answers.
            builder.danger_accept_invalid_certs(true);
        }
        let connector = builder.build().context("setting up TLS")?;
        Ok(MakeTlsConnector::new(connector))
    }

    /// The CA certificates of `sslrootcert`, or of `~/.postgresql/root.crt` without it.
    fn roots(&self) -> Result<Vec<Certificate>> {
        let path = match &self.root {
            Some(p) => p.clone(),
            None => directories::BaseDirs::new()
                .map(|d| d.home_dir().join(".postgresql/root.crt"))
                .filter(|p| p.exists())
                .with_context(|| {
                    format!(
                        "sslmode={} checks the server's certificate against a CA's: give \
                         the CA's certificate as sslrootcert=PATH in the URL (or put it in \
                         ~/.postgresql/root.crt)",
                        self.mode.name()
                    )
                })?,
        };
        let pem =
            std::fs::read(&path).with_context(|| format!("sslrootcert {}", path.display()))?;
        let certs = Certificate::stack_from_pem(&pem)
            .with_context(|| format!("sslrootcert {}: not PEM certificates", path.display()))?;
        if certs.is_empty() {
            bail!("sslrootcert {}: no certificate in it", path.display());
        }
        Ok(certs)
    }
}

/// `e` with what to look at when TLS refused the server's certificate: OpenSSL's words
/// name the check, not the option behind it.
pub fn explain(e: anyhow::Error) -> anyhow::Error {
    if format!("{e:#}").contains("certificate verify failed") {
        e.context(
            "the server's certificate was refused: is the CA that signed it in sslrootcert \
             (or PGSSLROOTCERT, ~/.postgresql/root.crt), and with verify-full, is it issued \
             for the host name in the URL?",
        )
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls(mode: Mode, root: Option<&str>) -> Tls {
        Tls {
            mode,
            root: root.map(PathBuf::from),
        }
    }

    /// `split` with no libpq variables set.
    fn split(url: &str) -> Result<(String, Tls)> {
        super::split(url, |_| None)
    }

    #[test]
    fn the_tls_options_leave_the_url_and_the_rest_stays() {
        let base = "postgres://me:pw@db.lan:5433/sshbench";
        assert_eq!(split(base).unwrap(), (base.into(), tls(Mode::Prefer, None)));
        let (url, t) = split(&format!(
            "{base}?connect_timeout=5&sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20certs.pem&application_name=x"
        ))
        .unwrap();
        assert_eq!(url, format!("{base}?connect_timeout=5&application_name=x"));
        assert_eq!(t, tls(Mode::VerifyFull, Some("/etc/ca certs.pem")));
        let (url, t) = split(&format!("{base}?sslmode=disable")).unwrap();
        assert_eq!((url.as_str(), t), (base, tls(Mode::Disable, None)));
        for (m, want) in [("require", Mode::Require), ("verify-ca", Mode::VerifyCa)] {
            assert_eq!(split(&format!("{base}?sslmode={m}")).unwrap().1.mode, want);
        }
    }

    #[test]
    fn libpq_variables_count_where_the_url_is_silent() {
        let env = |k: &str| match k {
            "PGSSLMODE" => Some("verify-full".to_string()),
            "PGSSLROOTCERT" => Some("/etc/ca.pem".to_string()),
            _ => None,
        };
        let from_env = super::split("postgres://h/d", env).unwrap().1;
        assert_eq!(from_env, tls(Mode::VerifyFull, Some("/etc/ca.pem")));
        let url = "postgres://h/d?sslmode=require&sslrootcert=mine.pem";
        let from_url = super::split(url, env).unwrap().1;
        assert_eq!(from_url, tls(Mode::Require, Some("mine.pem")));
        let bad = |k: &str| (k == "PGSSLMODE").then(|| "on".to_string());
        let e = super::split("postgres://h/d", bad).unwrap_err();
        assert!(
            format!("{e:#}").contains("PGSSLMODE: sslmode=on: not a mode"),
            "{e:#}"
        );
    }

    #[test]
    fn unknown_or_unsupported_modes_are_refused_by_name() {
        let e = split("postgres://h/d?sslmode=verify_full").unwrap_err();
        assert!(
            format!("{e:#}").contains("sslmode=verify_full: not a mode"),
            "{e:#}"
        );
        let e = split("postgres://h/d?sslmode=allow").unwrap_err();
        assert!(format!("{e:#}").contains("not supported"), "{e:#}");
    }

    #[test]
    fn what_the_driver_is_told_and_what_is_checked() {
        assert_eq!(tls(Mode::Disable, None).ssl_mode(), SslMode::Disable);
        assert_eq!(tls(Mode::Prefer, Some("ca")).ssl_mode(), SslMode::Prefer);
        for m in [Mode::Require, Mode::VerifyCa, Mode::VerifyFull] {
            assert_eq!(tls(m, None).ssl_mode(), SslMode::Require);
        }
        assert!(!tls(Mode::Prefer, Some("ca")).verifies());
        assert!(!tls(Mode::Require, None).verifies());
        assert!(tls(Mode::Require, Some("ca")).verifies());
        assert!(tls(Mode::VerifyCa, None).verifies());
    }

    #[test]
    fn only_prefer_falls_back_and_only_from_a_failed_handshake() {
        let handshake = anyhow::anyhow!("error performing TLS handshake").context("connecting");
        let other = anyhow::anyhow!("db error: FATAL: password authentication failed");
        assert!(tls(Mode::Prefer, None).falls_back(&handshake));
        assert!(!tls(Mode::Prefer, None).falls_back(&other));
        for m in [
            Mode::Require,
            Mode::VerifyCa,
            Mode::VerifyFull,
            Mode::Disable,
        ] {
            assert!(!tls(m, None).falls_back(&handshake));
        }
    }

    #[test]
    fn a_root_file_that_holds_no_certificate_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("root.crt");
        std::fs::write(&file, "not a certificate\n").unwrap();
        let t = tls(Mode::VerifyFull, file.to_str());
        let e = t.connector().err().expect("refused");
        assert!(format!("{e:#}").contains("root.crt"), "{e:#}");
        let t = tls(Mode::VerifyCa, dir.path().join("absent.pem").to_str());
        let e = t.connector().err().expect("refused");
        assert!(format!("{e:#}").contains("absent.pem"), "{e:#}");
    }
}
