//! The secrets sshbench's environment may hold (`SSHBENCH_DB`, a database URL with its
//! password; libpq's `PG*` variables, `PGPASSWORD` among them), taken out of the
//! environment at start so that no child (ssh, a ProxyCommand, rsync, the sandbox's
//! sshd) inherits them, and kept here for the store to read.

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::OnceLock;

static TAKEN: OnceLock<HashMap<String, String>> = OnceLock::new();

/// Whether a variable's name is one of the secrets.
fn secret(name: &str) -> bool {
    name == "SSHBENCH_DB" || name.starts_with("PG")
}

/// Take every secret out of the environment (after the command line has read
/// `SSHBENCH_DB`). Call once, at the start of `main`, before any thread exists.
pub fn take() {
    let names: Vec<OsString> = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| k.to_str().is_some_and(secret))
        .collect();
    let mut taken = HashMap::new();
    for name in names {
        if let (Some(k), Some(v)) = (name.to_str(), std::env::var_os(&name)) {
            taken.insert(k.to_string(), v.to_string_lossy().into_owned());
        }
        // SAFETY: `main` calls this before it starts any thread, and nothing else reads
        // or writes the environment meanwhile, which is what `remove_var` requires.
        unsafe { std::env::remove_var(&name) };
    }
    let _ = TAKEN.set(taken);
}

/// A variable's value: one taken at start, else the environment's own.
pub fn var(name: &str) -> Option<String> {
    match TAKEN.get().and_then(|t| t.get(name)) {
        Some(v) => Some(v.clone()),
        None => std::env::var(name).ok(),
    }
}
