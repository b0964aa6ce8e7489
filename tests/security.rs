//! SECURITY.md's promises, each tried as an attacker would: numbers that do not fit,
//! secrets in the environment, a hostile server's words, rows planted in a database.

mod common;

use common::{sshbench, text};

/// A number that does not fit is a usage error (exit 2), never a panic.
#[test]
fn an_out_of_range_timeout_is_a_usage_error() {
    for args in [
        &["run", "--timeout", "18446744073709551615"][..],
        &["run", "--timeout", "0"],
        &["algos", "--timeout", "99999999"],
    ] {
        let out = sshbench().args(args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--timeout"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // A value checked after parsing is a usage error too, for every command.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("never.sqlite");
    let db = db.to_str().unwrap();
    for args in [
        &["run", "--rounds", "0"][..],
        &["run", "--ciphers", "rot13", "--db", db],
        &["show", "--since", "garbage"],
        &["compare", "run:x", "run:y"],
    ] {
        let out = sshbench().args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// A login whose session prints escape sequences (setting the terminal's title, clearing
/// it) after words that look like ssh's: the words choose no failure class (only ssh's
/// own status 255 does), and no escape byte reaches stdout or stderr, in the run or in
/// the reports of what it stored.
#[test]
fn a_hostile_login_s_escape_sequences_never_reach_the_terminal() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    common::force_command(
        &sb,
        "printf 'Permission denied (publickey).\\033]0;pwned\\007\\033[2J\\342\\200\\256gpj.exe\\n' >&2; exit 1",
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hostile.sqlite");
    let out = sshbench()
        .args(["run", "-F"])
        .arg(sb.ssh_config())
        .arg(sshbench::sandbox::ALIAS)
        .arg("--db")
        .arg(&db)
        .args(["--mode", "send", "--rounds", "1", "--verbose"])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519"])
        .args([
            "--ciphers",
            "aes128-ctr",
            "--macs",
            "hmac-sha2-256-etm@openssh.com",
        ])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_no_escapes(&out.stdout, &out.stderr);
    assert!(stderr.contains("\\u{1b}]0;pwned"), "{stderr}");
    // Not an authentication failure: the session said so, not ssh.
    assert!(
        !stderr.contains("hint: sshbench needs key-based login"),
        "{stderr}"
    );
    for view in [
        &["show"][..],
        &["show", "--format", "json"],
        &["summary"],
        &["runs"],
    ] {
        let out = sshbench().args(view).arg("--db").arg(&db).output().unwrap();
        assert_no_escapes(&out.stdout, &out.stderr);
    }
}

/// Neither ESC, BEL nor a right-to-left override in either stream.
fn assert_no_escapes(stdout: &[u8], stderr: &[u8]) {
    for (name, bytes) in [("stdout", stdout), ("stderr", stderr)] {
        let t = text(bytes);
        assert!(
            !t.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "{name} holds a raw escape: {t:?}"
        );
    }
}

/// A password in `SSHBENCH_DB` or in a URL's parameters is never printed: not by
/// `--help` (which shows the variable's value otherwise), not in an error.
#[test]
fn a_database_password_is_never_printed() {
    let url = "postgres://bench:hunter2@127.0.0.1:1/x?password=hunter2&connect_timeout=2";
    for args in [&["run", "--help"][..], &["show", "--help"]] {
        let out = sshbench()
            .args(args)
            .env("SSHBENCH_DB", url)
            .output()
            .unwrap();
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(all.contains("SSHBENCH_DB"), "{args:?}: {all}");
        assert!(!all.contains("hunter2"), "{args:?}: {all}");
    }
    let out = sshbench().args(["runs", "--db", url]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("postgres://bench@127.0.0.1:1/x"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

/// No child of sshbench (the sandbox's sshd, ssh, a ProxyCommand) inherits the
/// database's URL or libpq's variables: each is looked for in every process's
/// environment while a run goes on (Linux: /proc/PID/environ).
#[cfg(target_os = "linux")]
#[test]
fn no_child_inherits_the_database_s_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("secrets.sqlite");
    let tag = format!("PGPASSWORD=tag-{}", std::process::id());
    let mut child = sshbench()
        .args([
            "run",
            "--mode",
            "connect",
            "--rounds",
            "2",
            "--kex",
            "curve25519-sha256",
        ])
        .env("SSHBENCH_DB", &db)
        .env("PGPASSWORD", tag.split_once('=').unwrap().1)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let own = child.id();
    let mut seen = std::collections::HashSet::new();
    let mut db_seen = std::collections::HashSet::new();
    let db_tag = format!("SSHBENCH_DB={}", db.display());
    // sshbench's own start-up environment still shows them (as does a child of it
    // between fork and exec, still sshbench's image); no other program's may.
    let sshbench = std::fs::canonicalize(env!("CARGO_BIN_EXE_sshbench")).unwrap();
    // Its program read first, its environment after: a process seen between fork and
    // exec (sshbench's image, sshbench's memory) is not taken for the program it became.
    let holds = |pid: u32, tag: &str| {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"));
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        pid != own
            && exe.is_ok_and(|e| e != sshbench)
            && env.split(|b| *b == 0).any(|kv| kv == tag.as_bytes())
    };
    while child.try_wait().unwrap().is_none() {
        seen.extend((common::processes_tagged(&tag).into_iter()).filter(|&p| holds(p, &tag)));
        db_seen
            .extend((common::processes_tagged(&db_tag).into_iter()).filter(|&p| holds(p, &db_tag)));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(child.wait().unwrap().success());
    assert!(
        seen.is_empty() && db_seen.is_empty(),
        "{seen:?} {db_seen:?}"
    );
    // The run went to the database the variable named.
    assert!(db.exists());
}

/// Host key checking is judged on what ssh will do (`ssh -G` after the options and the
/// config), not on how an option is spelt: every weakening is refused before anything
/// connects.
#[test]
fn every_spelling_of_weakened_host_key_checking_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ssh_config");
    std::fs::write(&config, "Host box\n  HostName 127.0.0.1\n  Port 1\n").unwrap();
    let mut weak_config = dir.path().join("weak_config");
    std::fs::write(
        &weak_config,
        "Host box\n  HostName 127.0.0.1\n  StrictHostKeyChecking no\n",
    )
    .unwrap();
    for (options, file) in [
        (&["-o", "StrictHostKeyChecking=false"][..], &config),
        (&["-o", "StrictHostKeyChecking=\"no\""], &config),
        (&["-o", "stricthostkeychecking \"accept-new\""], &config),
        (&["-o", "UserKnownHostsFile=/dev//null"], &config),
        (&["-o", "UserKnownHostsFile=none"], &config),
        (&[], &weak_config),
    ] {
        let out = sshbench()
            .args(["run", "-F"])
            .arg(file)
            .args(options)
            .args(["box", "--db"])
            .arg(dir.path().join("never.sqlite"))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{options:?}: {err}");
        assert!(
            err.contains("never weakens host key checking"),
            "{options:?}: {err}"
        );
    }
    weak_config = config;
    let out = sshbench()
        .args(["run", "-F"])
        .arg(&weak_config)
        .args(["box", "--mode", "connect", "--timeout", "2", "--db"])
        .arg(dir.path().join("never.sqlite"))
        .output()
        .unwrap();
    // The same destination with checking on goes as far as connecting (nothing listens).
    assert!(
        !text(&out.stderr).contains("never weakens"),
        "{}",
        text(&out.stderr)
    );
}

/// A run writes nothing to known_hosts, though the user's config asks ssh to record the
/// server's other host keys (`UpdateHostKeys yes`) and the server has three types: every
/// ssh sshbench starts is told not to.
#[test]
fn known_hosts_is_byte_for_byte_the_same_after_a_run() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let dir = tempfile::tempdir().unwrap();
    let config = std::fs::read_to_string(sb.ssh_config()).unwrap();
    let known_file = (config.lines())
        .find_map(|l| l.trim().strip_prefix("UserKnownHostsFile "))
        .unwrap()
        .trim_matches('"')
        .to_string();
    let all = std::fs::read_to_string(&known_file).unwrap();
    let types: std::collections::HashSet<&str> = all
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert!(types.len() >= 3, "{all}");
    // Only the ed25519 key is known; ssh may learn the others.
    let known = dir.path().join("known_hosts");
    let ed25519: String = (all.lines())
        .filter(|l| l.contains(" ssh-ed25519 "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&known, &ed25519).unwrap();
    let learning = config
        .replace(&known_file, &known.display().to_string())
        .replace("UpdateHostKeys no", "UpdateHostKeys yes");
    let cfg = dir.path().join("ssh_config");
    std::fs::write(&cfg, learning).unwrap();
    let out = sshbench()
        .args(["run", "-F"])
        .arg(&cfg)
        .arg(sshbench::sandbox::ALIAS)
        .args([
            "--mode",
            "connect,send",
            "--rounds",
            "1",
            "--hostkeys",
            "ssh-ed25519",
        ])
        .args(["--kex", "curve25519-sha256", "--ciphers", "aes128-ctr"])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com", "--db"])
        .arg(dir.path().join("kh.sqlite"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&known).unwrap(), ed25519);
}

/// A run and a fleet planted in a database (another user's, or a row changed behind
/// sshbench's back) carry no seal of this user's key: `--resume` refuses them, a bare
/// `--resume` never picks them, and the ProxyCommand they hold never runs.
#[test]
fn resume_runs_nothing_planted_in_the_database() {
    use sshbench::destination::Target;
    use sshbench::store::Store;
    use sshbench::sys::seal::Sealer;
    let dir = tempfile::tempdir().unwrap();
    let (db, data) = (dir.path().join("shared.sqlite"), dir.path().join("data"));
    let marker = dir.path().join("ran");
    let planted = Target::parse("victim").unwrap().with_ssh_args(vec![
        "-o".into(),
        format!("ProxyCommand=touch {}", marker.display()),
    ]);
    let new_run = |store: &Store| stored_run(store, &planted, &common::OPTIONS, None);
    // Another user's key, and this user's (where the binary finds it: XDG_DATA_HOME).
    let theirs = Store::open(&db)
        .unwrap()
        .sealed_with(Sealer::at(&dir.path().join("their.key")).unwrap());
    let planted_run = new_run(&theirs);
    let ssh = [
        "-o".to_string(),
        format!("ProxyCommand=touch {}", marker.display()),
    ];
    let client = sshbench::model::WorkerClient::default();
    theirs
        .create_fleet(&sshbench::store::NewFleet {
            hosts: &["victim".into()],
            options: &common::OPTIONS,
            ssh: &ssh,
            jobs: 1,
            name: None,
            lease_s: 60,
            client: &client,
            full: sshbench::model::fleet::FleetFull::All,
        })
        .unwrap();
    let mine = Store::open(&db)
        .unwrap()
        .sealed_with(Sealer::at(&data.join("sshbench/seal.key")).unwrap());
    let changed_run = new_run(&mine);
    drop((theirs, mine));
    let sql =
        "UPDATE runs SET target_json = replace(target_json, 'victim', 'victim2') WHERE id = ?1";
    let conn = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(conn.execute(sql, [changed_run]).unwrap(), 1);
    drop(conn);
    let resume = |id: Option<i64>| {
        let mut c = sshbench();
        c.env("XDG_DATA_HOME", &data).args(["run", "--resume"]);
        if let Some(id) = id {
            c.arg(id.to_string());
        }
        let out = c.arg("--db").arg(&db).output().unwrap();
        (out.status.code(), text(&out.stderr))
    };
    for id in [planted_run, changed_run] {
        let (code, err) = resume(Some(id));
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("carries no seal of your key"), "{err}");
    }
    let (code, err) = resume(None);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no interrupted run to resume"), "{err}");
    // Sealed, but holding what the command line would refuse (a row of an older version,
    // or one this user's key was stolen for): checked as arguments all the same.
    let mut options = common::OPTIONS.clone();
    options.workload.rsync_options = vec![format!("--rsh=touch {}", marker.display())];
    let mine = Store::open(&db)
        .unwrap()
        .sealed_with(Sealer::at(&data.join("sshbench/seal.key")).unwrap());
    let sealed = stored_run(&mine, &Target::parse("victim").unwrap(), &options, None);
    drop(mine);
    let (code, err) = resume(Some(sealed));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("cannot be resumed") && err.contains("--rsync-options"),
        "{err}"
    );
    assert!(!marker.exists(), "the planted ProxyCommand ran");
}

/// A shared fleet another user created, whose host's run that user's rows point at a
/// ProxyCommand: a worker joining it measures the host with its own destination and ssh
/// options, and the planted command never runs. One that would need other ssh options
/// than the worker's own is refused.
#[test]
fn joining_a_planted_fleet_runs_nothing_it_holds() {
    use sshbench::destination::Target;
    use sshbench::store::Store;
    use sshbench::sys::seal::Sealer;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite");
    let marker = dir.path().join("ran");
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "victim.invalid\n").unwrap();
    let worker =
        |data: &str, extra: &[&str]| team_worker(&dir.path().join(data), &db, &hosts, extra);
    // Their worker creates the fleet (the host cannot be reached: it fails) ...
    let (code, err) = worker("theirs", &[]);
    assert_eq!(code, Some(3), "{err}");
    // ... and points the host at a run of theirs that goes through a ProxyCommand.
    let planted = Target::parse("victim.invalid").unwrap().with_ssh_args(vec![
        "-o".into(),
        format!("ProxyCommand=touch {}", marker.display()),
    ]);
    let theirs = Store::open(&db)
        .unwrap()
        .sealed_with(Sealer::at(&dir.path().join("theirs/sshbench/seal.key")).unwrap());
    let run = stored_run(&theirs, &planted, &common::OPTIONS, None);
    drop(theirs);
    let sql = "UPDATE fleet_hosts SET status = 'interrupted', run_id = ?1";
    let conn = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(conn.execute(sql, [run]).unwrap(), 1);
    drop(conn);
    let (code, err) = worker("mine", &[]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("victim.invalid"), "{err}");
    assert!(!marker.exists(), "the planted ProxyCommand ran");
    // A fleet whose stored ssh options differ from the worker's is not joined.
    let proxy = format!("ProxyCommand=touch {}", marker.display());
    let (code, err) = worker("mine", &["-o", &proxy]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("created with other options"), "{err}");
    assert!(!marker.exists(), "the ProxyCommand ran");
}

/// A host's run another user stored in a shared fleet goes on only with a plan this
/// client makes itself: a part of it (a host measured by its kind's contenders) is
/// measured, in its stored order; a plan with an item this client would not plan, or
/// an item twice, is refused and nothing of it measured.
#[test]
fn a_planted_plan_is_resumed_only_when_it_is_part_of_this_client_s_own() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite");
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "victim.test\n").unwrap();
    let mock = ["--mock-transport"];
    let worker = |data: &str| team_worker(&dir.path().join(data), &db, &hosts, &mock);
    let (code, err) = worker("theirs");
    assert_eq!(code, Some(0), "{err}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let plan: String = (conn.query_row("SELECT plan_json FROM runs", [], |r| r.get(0))).unwrap();
    let plan: Vec<serde_json::Value> = serde_json::from_str(&plan).unwrap();
    assert!(plan.len() > 3, "{plan:?}");
    let foreign = serde_json::json!({"mode": "connect", "suite": {"kex": "evil-kex"}});
    let dup = vec![plan[1].clone(), plan[1].clone()];
    // Their rows: the host interrupted, its run emptied and given another plan.
    let plant = |items: &[serde_json::Value]| {
        let json = serde_json::to_string(items).unwrap();
        conn.execute("DELETE FROM samples", []).unwrap();
        let sql = "UPDATE runs SET status = 'interrupted', plan_json = ?1";
        assert_eq!(conn.execute(sql, [json]).unwrap(), 1);
        let sql = "UPDATE fleet_hosts SET status = 'interrupted'";
        assert_eq!(conn.execute(sql, []).unwrap(), 1);
        conn.execute("UPDATE fleets SET status = 'interrupted'", [])
            .unwrap();
    };
    let store = || sshbench::store::Store::connect_to_read(db.to_str().unwrap()).unwrap();
    for bad in [vec![plan[0].clone(), foreign], dup] {
        plant(&bad);
        let (code, err) = worker("mine");
        assert_eq!(code, Some(3), "{err}");
        assert!(
            common::words(&err).contains("its plan is not one this client makes"),
            "{err}"
        );
        assert!(store().samples(&[1]).unwrap().is_empty(), "{bad:?}");
    }
    let part = vec![plan[3].clone(), plan[1].clone()];
    plant(&part);
    let (code, err) = worker("mine");
    assert_eq!(code, Some(0), "{err}");
    let runs = store().runs().unwrap();
    assert_eq!(runs.len(), 1, "the host went on in their run");
    let stored: Vec<serde_json::Value> = (runs[0].plan.iter())
        .map(|p| serde_json::to_value(p).unwrap())
        .collect();
    assert_eq!(stored, part);
    let samples = store().samples(&[runs[0].id]).unwrap();
    let mut items: Vec<usize> = samples
        .iter()
        .filter(|s| s.round == 1)
        .map(|s| s.item)
        .collect();
    items.sort();
    assert_eq!(items, [0, 1], "each item of the part, once");
}

/// A stored row that would write lines of its own into an `ssh_config` block (a
/// destination or an algorithm's name with a line break) is refused with a message naming
/// its column; no block carries what it says.
#[test]
fn recommend_never_writes_what_a_row_planted() {
    use sshbench::model::{Mode, Suite};
    use sshbench::store::Store;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("planted.sqlite");
    let store = Store::open(&db).unwrap();
    let id = stored_run(&store, &common::TARGET, &common::OPTIONS, Some(true));
    let ctr = Suite {
        cipher: Some("aes128-ctr".into()),
        mac: Some("hmac-sha2-256-etm@openssh.com".into()),
        ..Suite::default()
    };
    for round in 1..=3 {
        let s = common::SampleBuilder::new(Mode::Send, &ctr)
            .wall(Duration::from_millis(300))
            .transfer(1 << 24, 1 << 23, Duration::from_millis(100))
            .build();
        store.add_sample(id, 0, round, &s).unwrap();
    }
    drop(store);
    let recommend = || {
        let out = sshbench()
            .args(["recommend", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, out, err) = recommend();
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Host nas"), "{out}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    for (sql, column) in [
        (
            "UPDATE runs SET destination = 'nas' || char(10) || '  ProxyCommand touch /tmp/p'",
            "runs.destination",
        ),
        (
            "UPDATE runs SET destination = 'nas'; UPDATE samples SET cipher = 'aes128-ctr' || char(10) || '  ProxyCommand x'",
            "samples.cipher",
        ),
    ] {
        conn.execute_batch(sql).unwrap();
        let (code, out, err) = recommend();
        assert_eq!(code, Some(1), "{out}{err}");
        assert!(err.contains(column), "{err}");
        assert!(
            !out.contains("ProxyCommand") && !err.contains("\n  ProxyCommand"),
            "{out}{err}"
        );
    }
}

/// A destination holds only what a host name, user and port are made of, on the command
/// line and in a hosts file alike: shell metacharacters never reach ssh or a shell.
#[test]
fn destinations_with_shell_metacharacters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts.txt");
    std::fs::write(&hosts, "nas\na;touch${IFS}/tmp/x\n").unwrap();
    for args in [
        vec!["run", "--", "a;touch${IFS}/tmp/x"],
        vec!["run", "--", "$(reboot)@nas"],
        vec!["run", "--", "-oProxyCommand=touch /tmp/x"],
        vec!["run", "--hosts", hosts.to_str().unwrap()],
    ] {
        let out = sshbench()
            .args(&args)
            .arg("--db")
            .arg(dir.path().join("never.sqlite"))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("destination") || err.contains("hosts"),
            "{args:?}: {err}"
        );
        assert!(!dir.path().join("never.sqlite").exists(), "{args:?}");
    }
}

/// Reports read a database as it is: someone else's SQLite file is refused untouched (no
/// tables of sshbench's added, no WAL journal), a device or a directory is not a
/// database, and a database an older sshbench wrote is upgraded only when asked to.
#[test]
fn databases_that_are_not_sshbench_s_are_left_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs.sqlite");
    let conn = rusqlite::Connection::open(&theirs).unwrap();
    conn.execute_batch("CREATE TABLE invoices (id INTEGER); INSERT INTO invoices VALUES (1);")
        .unwrap();
    drop(conn);
    let before = std::fs::read(&theirs).unwrap();
    let view = |args: &[&str], db: &std::path::Path| {
        let out = sshbench().args(args).arg("--db").arg(db).output().unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    for args in [&["runs"][..], &["show"], &["run", "--mode", "connect"]] {
        let (code, _, err) = view(args, &theirs);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(
            err.contains("a database of something else"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(&theirs).unwrap(), before);
    assert!(!dir.path().join("theirs.sqlite-wal").exists());
    for not_a_file in [std::path::Path::new("/dev/null"), dir.path()] {
        let (code, _, err) = view(&["runs"], not_a_file);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("not a regular file"), "{err}");
    }
    assert!(!std::path::Path::new("/dev/null-journal").exists());
    // sshbench's own database, as an older version left it: read only once upgraded.
    let ours = dir.path().join("ours.sqlite");
    drop(sshbench::store::Store::open(&ours).unwrap());
    let version = |v: Option<i64>| {
        let conn = rusqlite::Connection::open(&ours).unwrap();
        if let Some(v) = v {
            conn.pragma_update(None, "user_version", v).unwrap();
        }
        conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    let current = version(None);
    version(Some(current - 1));
    let (code, _, err) = view(&["runs"], &ours);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("sshbench db upgrade"), "{err}");
    assert_eq!(version(None), current - 1, "a report changed the database");
    version(Some(current));
    let (code, _, err) = view(&["db", "upgrade"], &ours);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = view(&["runs"], &ours);
    assert_eq!(code, Some(0), "{err}");
}

/// A database this user may only read (its file and its directory read-only, the WAL's
/// shared memory gone) is still shown. As root, which every permission lets through,
/// the reports run as `nobody` (through `runuser`).
#[cfg(target_os = "linux")]
#[test]
fn a_read_only_database_can_be_viewed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let db = ro.join("db.sqlite");
    drop(sshbench::store::Store::open(&db).unwrap());
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let root = nix::unistd::geteuid().is_root();
    let mut cmd = if root {
        // Where nobody may run it: a copy of the binary beside the database.
        let bin = dir.path().join("sshbench");
        std::fs::copy(env!("CARGO_BIN_EXE_sshbench"), &bin).unwrap();
        let mut c = std::process::Command::new("runuser");
        c.args(["-u", "nobody", "--"]).arg(bin);
        c
    } else {
        sshbench()
    };
    let out = cmd.args(["runs", "--db"]).arg(&db).output().unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("no runs stored"), "{err}");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A list or hosts file that never ends (`/dev/zero`) is refused at its limit, at once.
#[test]
fn endless_list_and_hosts_files_are_refused_at_their_limit() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["run", "--ciphers", "@/dev/zero"][..],
        &["run", "--hosts", "/dev/zero"],
    ] {
        let start = std::time::Instant::now();
        let out = sshbench()
            .args(args)
            .arg("--db")
            .arg(dir.path().join("never.sqlite"))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {err}");
        assert!(err.contains("is it the right file?"), "{args:?}: {err}");
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "{args:?}"
        );
    }
}

/// An ssh_config in `dir` whose `box` is reached through a ProxyCommand that sends an
/// SSH version and then nothing (no KEXINIT), for ten minutes.
fn stalling_box(dir: &std::path::Path) -> std::path::PathBuf {
    let config = dir.join("ssh_config");
    let stall = "ProxyCommand sh -c 'printf \"SSH-2.0-stall\\r\\n\"; exec sleep 600'";
    std::fs::write(
        &config,
        format!("Host box\n  HostName 127.0.0.1\n  {stall}\n"),
    )
    .unwrap();
    config
}

/// Through a ProxyCommand, a server that sends its version and then nothing (no KEXINIT)
/// would hold `ssh -vv` forever: the offer probe has a deadline of its own.
#[test]
fn a_server_that_stalls_behind_a_proxy_does_not_hang_algos() {
    let dir = tempfile::tempdir().unwrap();
    let config = stalling_box(dir.path());
    let start = std::time::Instant::now();
    let out = sshbench()
        .args(["algos", "-F"])
        .arg(&config)
        .args(["box", "--timeout", "2"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(30),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
}

/// Ctrl-C while `run` waits on a server that stalls behind a proxy ends the run at once,
/// not at the offer probe's deadline.
#[test]
fn ctrl_c_during_the_offer_probe_ends_the_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = stalling_box(dir.path());
    let mut child = sshbench()
        .args(["run", "-F"])
        .arg(&config)
        .args(["box", "--timeout", "20", "--db"])
        .arg(dir.path().join("never.sqlite"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let sent = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > std::time::Duration::from_secs(8) {
            let _ = child.kill();
            panic!("still running 8 s after Ctrl-C");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(!status.success());
}

/// A run of `target` stored with `options` and no plan, as `run` stores one: its
/// destination is the target's own.
/// A worker of fleet `team` over `hosts` in `db` (connect, one round), as the user whose
/// data (and seal key) is in `data`: its exit status and what it said.
fn team_worker(
    data: &std::path::Path,
    db: &std::path::Path,
    hosts: &std::path::Path,
    extra: &[&str],
) -> (Option<i32>, String) {
    let out = sshbench()
        .env("XDG_DATA_HOME", data)
        .args([
            "run", "--fleet", "team", "--mode", "connect", "--rounds", "1",
        ])
        .args(extra)
        .arg("--hosts")
        .arg(hosts)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap();
    (out.status.code(), text(&out.stderr))
}

fn stored_run(
    store: &sshbench::store::Store,
    target: &sshbench::destination::Target,
    options: &sshbench::model::RunOptions,
    strict_kex: Option<bool>,
) -> i64 {
    let machine = sshbench::sys::machine::Machine::default();
    let run = sshbench::store::NewRun {
        destination: &target.destination,
        target,
        resolved: None,
        client_version: "OpenSSH_9.2p1",
        server_version: None,
        server_strict_kex: strict_kex,
        machine: &machine,
        options,
        plan: &[],
        seed: 1,
        client_defaults: &Default::default(),
    };
    store.create_run(&run).unwrap()
}
