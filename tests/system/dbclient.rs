//! Dropbear's client where OpenSSH's is expected.

use crate::common::{sshbench, text};

/// An `ssh` on PATH that is not OpenSSH's (Dropbear's `dbclient`, as a router's firmware
/// links it) takes none of the options that force a suite: refused before anything is
/// written, with what it is and what to install.
#[test]
fn an_ssh_that_is_not_openssh_is_refused_with_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let dbclient = sshbench::sandbox::find_on_path("dbclient")
        .expect("dbclient is needed for this test (apt-get install dropbear-bin)");
    std::os::unix::fs::symlink(dbclient, bin.join("ssh")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let db = dir.path().join("db.sqlite");
    let db_arg = db.to_str().unwrap();
    for command in [
        vec!["run", "--mode", "connect", "--db", db_arg],
        vec!["algos"],
    ] {
        let out = sshbench()
            .env("PATH", &path)
            .args(&command)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command:?}: {stderr}");
        assert!(stderr.contains("is Dropbear v"), "{command:?}: {stderr}");
        assert!(stderr.contains("not OpenSSH"), "{command:?}: {stderr}");
        assert!(
            stderr.contains("apt-get install openssh-client"),
            "{stderr}"
        );
        assert!(!db.exists(), "{command:?} created the database");
    }
}
