//! The password a PostgreSQL URL leaves out, found where libpq looks for it: the
//! `PGPASSWORD` variable, then the password file (`PGPASSFILE`, else `~/.pgpass`), so a
//! team's password need not stand on a command line (where `ps` shows it) or in a shell's
//! history. As libpq does, a password file that its group or others may read is not
//! read; the connection error then says why.

use postgres::Config;
use postgres::config::Host;
use std::path::{Path, PathBuf};

/// What [`fill`] did, for the connection error should the server refuse.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The password file, with a group or others able to read it, left unread.
    pub unsafe_file: Option<PathBuf>,
}

impl Found {
    /// A hint for an error: why the password file was not used.
    pub fn hint(&self) -> Option<String> {
        let file = self.unsafe_file.as_ref()?;
        Some(format!(
            "the password file {} was not read: its group or others may read it \
             (`chmod 600 {}`)",
            file.display(),
            file.display()
        ))
    }
}

/// Give `config` a password where it has none: `PGPASSWORD`, else the password file's
/// first line for this host, port, database and user (through `env`).
pub fn fill(config: &mut Config, env: impl Fn(&str) -> Option<String>) -> Found {
    if config.get_password().is_some() {
        return Found::default();
    }
    if let Some(pw) = env("PGPASSWORD").filter(|p| !p.is_empty()) {
        config.password(pw);
        return Found::default();
    }
    let Some(file) = env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().join(".pgpass")))
    else {
        return Found::default();
    };
    if !file.is_file() {
        return Found::default();
    }
    if !private(&file) {
        return Found {
            unsafe_file: Some(file),
        };
    }
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    if let Some(pw) = lookup(&text, &Wanted::of(config)) {
        config.password(pw);
    }
    Found::default()
}

/// Only its owner may read or write `file`: a file others can read holds no secret.
fn private(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.permissions().mode() & 0o077 == 0)
}

/// The connection a password is looked up for, as libpq names it.
struct Wanted {
    host: String,
    port: String,
    database: String,
    user: String,
}

impl Wanted {
    fn of(config: &Config) -> Wanted {
        let user = config.get_user().unwrap_or_default().to_string();
        Wanted {
            // A Unix socket is `localhost` to the password file.
            host: match config.get_hosts().first() {
                Some(Host::Tcp(name)) => name.clone(),
                _ => "localhost".into(),
            },
            port: config
                .get_ports()
                .first()
                .copied()
                .unwrap_or(5432)
                .to_string(),
            database: config
                .get_dbname()
                .map_or_else(|| user.clone(), str::to_string),
            user,
        }
    }
}

/// The password of the first line of a password file that matches `w`: five fields
/// split at `:`, `\` escaping the next character, `*` matching anything (but the
/// password); blank lines and `#` comments skipped.
fn lookup(text: &str, w: &Wanted) -> Option<String> {
    text.lines().find_map(|line| {
        if line.trim().is_empty() || line.starts_with('#') {
            return None;
        }
        let fields = split_fields(line);
        let [host, port, db, user, password] = fields.as_slice() else {
            return None;
        };
        let matches = |field: &str, value: &str| field == "*" || field == value;
        (matches(host, &w.host)
            && matches(port, &w.port)
            && matches(db, &w.database)
            && matches(user, &w.user))
        .then(|| password.clone())
    })
}

/// A line's fields: split at unescaped colons, the escapes removed (the last field
/// keeps any further colons, as libpq's password does).
fn split_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field) = (Vec::new(), String::new());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(host: &str, port: u16, db: &str, user: &str) -> Wanted {
        Wanted {
            host: host.into(),
            port: port.to_string(),
            database: db.into(),
            user: user.into(),
        }
    }

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let text = "# the team's database\n\
                    \n\
                    db.example:5432:other:bench:wrong\n\
                    db.example:*:sshbench:bench:s3cr\\:et:x\n\
                    *:*:*:*:fallback\n";
        let w = wanted("db.example", 5433, "sshbench", "bench");
        assert_eq!(lookup(text, &w).as_deref(), Some("s3cr:et:x"));
        let elsewhere = wanted("127.0.0.1", 5432, "sshbench", "bench");
        assert_eq!(lookup(text, &elsewhere).as_deref(), Some("fallback"));
        assert_eq!(lookup("db.example:5432:x:y\n", &w), None);
    }

    #[test]
    fn escapes_keep_colons_and_backslashes_in_names() {
        assert_eq!(
            split_fields(r"a\:b:5432:d\\b:u:p\:w"),
            ["a:b", "5432", r"d\b", "u", "p:w"]
        );
    }

    #[test]
    fn pgpassword_comes_first_and_the_url_before_both() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:from-file\n").unwrap();
        let mut config: Config = "postgres://bench@db/sshbench".parse().unwrap();
        let env = |vars: &'static [(&'static str, &'static str)]| {
            let path = file.display().to_string();
            move |k: &str| {
                (k == "PGPASSFILE").then(|| path.clone()).or_else(|| {
                    vars.iter()
                        .find(|(n, _)| *n == k)
                        .map(|(_, v)| v.to_string())
                })
            }
        };
        fill(&mut config, env(&[("PGPASSWORD", "from-env")]));
        assert_eq!(config.get_password(), Some(&b"from-env"[..]));
        let mut given: Config = "postgres://bench:given@db/sshbench".parse().unwrap();
        fill(&mut given, env(&[("PGPASSWORD", "from-env")]));
        assert_eq!(given.get_password(), Some(&b"given"[..]));
        // Readable by others: not read, and said so.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut open: Config = "postgres://bench@db/sshbench".parse().unwrap();
        let found = fill(&mut open, env(&[]));
        assert_eq!(open.get_password(), None);
        assert!(found.hint().unwrap().contains("chmod 600"), "{found:?}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut private: Config = "postgres://bench@db/sshbench".parse().unwrap();
        assert_eq!(fill(&mut private, env(&[])), Found::default());
        assert_eq!(private.get_password(), Some(&b"from-file"[..]));
    }
}
