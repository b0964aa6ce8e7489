//! Reading a small text file the user named (a hosts file, an algorithm list) with a
//! limit: `/dev/zero` or a huge file by mistake is refused after `limit` bytes instead of
//! filling memory while Ctrl-C goes unheard.

use anyhow::{Context, Result, bail};
use std::io::Read;
use std::path::Path;

/// The text of `path`, at most `limit` bytes; `what` names it in errors.
pub fn read_limited(path: &Path, limit: u64, what: &str) -> Result<String> {
    let name = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("reading {what} {name}"))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {what} {name}"))?;
    if bytes.len() as u64 > limit {
        bail!(
            "{what} {name} is over {} KiB; is it the right file?",
            limit / 1024
        );
    }
    String::from_utf8(bytes).with_context(|| format!("{what} {name} is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_its_limit() {
        let e = read_limited(Path::new("/dev/zero"), 4096, "the list").unwrap_err();
        assert!(format!("{e:#}").contains("over 4 KiB"), "{e:#}");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("l");
        std::fs::write(&f, "a\nb\n").unwrap();
        assert_eq!(read_limited(&f, 4096, "the list").unwrap(), "a\nb\n");
    }
}
