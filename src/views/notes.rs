//! The words of a run's notes ([`Note`]): what the transport, the login and the machine
//! told the run about how it measured, said once each wherever the run is shown.

use crate::model::{Note, ZerosStep};

/// The sentence a person reads for `note`.
pub fn say(note: &Note) -> String {
    match note {
        Note::OneSessionPerConnection => "the server ends a connection after its first session \
             (as tinysshd does), so every sample had a connection of its own (as with \
             --connections sample)"
            .into(),
        Note::ConnectBySftp => "connect: this login does not run commands, so each \
             connection is timed until an sftp session (instead of `exit 0`) has opened and \
             closed"
            .into(),
        Note::UnverifiedHostKeys { algorithms } => unverified(algorithms),
        Note::DbclientOffersAlone => "dbclient chooses no key exchange or host key, so its \
             connections are measured once per cipher with what it and the server agree on; \
             it says nothing of what it negotiated and this server's log cannot be read, so \
             that is unverified, but it offers only the cipher and MAC given to -c and -m, so \
             every sample that worked used them (builds of it with zlib also compress when \
             the server allows it, which cannot be seen from here)"
            .into(),
        Note::DbclientCheckedByServer => "dbclient chooses no key exchange or host key, so \
             its connections are measured once per cipher with what it and the server agree \
             on; it says nothing of what it negotiated, so every sample was checked against \
             what the sandbox's sshd logged for its connection"
            .into(),
        Note::HpnOwnConnections => "HPN-SSH grows its channel window with its TCP \
             receive buffer only on a connection of its own, not for a session over a \
             control master, so each of its transfers had a connection of its own (as with \
             --connections sample); ssh_config's ControlMaster would take that gain away"
            .into(),
        Note::DbclientCompressed { compression } => format!(
            "dbclient compressed its connections ({compression}): it offers compression \
             first and has no switch to turn it off, so its send and receive figures include \
             zlib's work on data that does not compress, where OpenSSH's were measured with \
             compression off; `Compression no` in the server's sshd_config stops it"
        ),
        Note::NoisyShell { said } => format!(
            "the server's login shell prints \"{said}\" before every command: sshbench's own \
             streams skip it, but scp -O, rsync and an sftp-server the shell starts fail on \
             such a server (for you too); have its start-up files print only in interactive \
             sessions"
        ),
        Note::ZerosUnavailable { step, error } => {
            let what = match step {
                ZerosStep::Made => "made",
                ZerosStep::Opened => "opened",
            };
            format!(
                "no sparse file of zeros could be {what} ({error}); sends are fed through a \
                 pipe by sshbench instead, which costs it CPU and can read lower \
                 (bench/results/notebook.md, \"Out of the data path\")"
            )
        }
        Note::KeystrokeClock { interval_ms } => format!(
            "echo is timed without a terminal; in one, this ssh (ObscureKeystrokeTiming) sends \
             each keystroke typed within 1-3 s of the one before on its next {interval_ms} ms \
             tick, about {} ms later on average (only one after a longer pause goes at once), \
             more than any cipher differs by; \
             `ObscureKeystrokeTiming no` in ssh_config gives that time back and the \
             keystroke-timing protection up",
            interval_ms.div_ceil(2)
        ),
        Note::SlowShellStart { ms } => format!(
            "the server's login shell takes about {ms} ms to start before each command (its \
             start-up files, such as ~/.bashrc): every connection, scp, rsync and sftp \
             session pays it, and connect's session phase holds it; start-up files that do \
             their work only in interactive shells give it back"
        ),
        Note::OtherSshbench { pids } => format!(
            "{} measuring on this machine during this run: the runs shared its CPUs, so this \
             run's figures are lower and noisier than one run alone would get",
            sshbench_runs(pids, "was", "were")
        ),
        Note::BusyMachine {
            others,
            cpus,
            sandbox,
        } => busy(*others, *cpus, *sandbox),
        Note::Legacy(sentence) => sentence.clone(),
    }
}

/// The host key algorithms connect left out, and what to do.
fn unverified(algorithms: &[String]) -> String {
    let (keys, one, them) = match algorithms.len() {
        1 => (
            "key of that type",
            "none recorded, or a different one",
            "it",
        ),
        _ => (
            "keys of those types",
            "none recorded, or different ones",
            "them",
        ),
    };
    format!(
        "connect: {} not measured: ssh could not check the server's {keys} against your \
         known_hosts ({one}); verify and record {them} to measure {them}",
        algorithms.join(", ")
    )
}

fn busy(others: f64, cpus: usize, sandbox: bool) -> String {
    let (whose, what) = if sandbox {
        (
            "this machine's",
            "its figures (the sandbox's client and server both run here)",
        )
    } else {
        ("this client's", "figures that the client's CPU limits")
    };
    let cpus = match cpus {
        1 => "1 CPU".to_string(),
        n => format!("{n} CPUs"),
    };
    format!(
        "other processes kept {others:.1} of {whose} {cpus} busy on average during this run, \
         so {what} are lower and noisier than on an idle machine"
    )
}

/// "another sshbench run (process 42) is", or "2 other sshbench runs (processes 42, 43)
/// are".
pub fn sshbench_runs(pids: &[u32], one: &str, many: &str) -> String {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    match pids.len() {
        1 => format!("another sshbench run (process {}) {one}", list[0]),
        n => format!(
            "{n} other sshbench runs (processes {}) {many}",
            list.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_note_is_said_plainly() {
        let one = say(&Note::UnverifiedHostKeys {
            algorithms: vec!["ssh-rsa".into()],
        });
        let head = "connect: ssh-rsa not measured: ssh could not check the server's key";
        assert!(one.starts_with(head), "{one}");
        assert!(one.ends_with("record it to measure it"), "{one}");
        let two = say(&Note::UnverifiedHostKeys {
            algorithms: vec!["ssh-dss".into(), "ssh-rsa".into()],
        });
        assert!(
            two.starts_with("connect: ssh-dss, ssh-rsa not measured"),
            "{two}"
        );
        assert!(two.ends_with("record them to measure them"), "{two}");
        let shell = say(&Note::NoisyShell { said: "hi".into() });
        assert!(
            shell.starts_with("the server's login shell prints \"hi\""),
            "{shell}"
        );
        let zeros = say(&Note::ZerosUnavailable {
            step: ZerosStep::Made,
            error: "no room".into(),
        });
        assert!(zeros.contains("could be made (no room)"), "{zeros}");
        let clock = say(&Note::KeystrokeClock { interval_ms: 20 });
        assert!(
            clock.contains("next 20 ms tick, about 10 ms later"),
            "{clock}"
        );
        let busy = say(&Note::BusyMachine {
            others: 0.7,
            cpus: 2,
            sandbox: true,
        });
        assert!(
            busy.starts_with("other processes kept 0.7 of this machine's 2 CPUs busy"),
            "{busy}"
        );
        let client = say(&Note::BusyMachine {
            others: 4.0,
            cpus: 32,
            sandbox: false,
        });
        assert!(
            client.contains("figures that the client's CPU limits"),
            "{client}"
        );
        let zlib = say(&Note::DbclientCompressed {
            compression: "zlib@openssh.com".into(),
        });
        assert!(
            zlib.starts_with("dbclient compressed its connections (zlib@openssh.com)"),
            "{zlib}"
        );
        assert!(zlib.ends_with("`Compression no` in the server's sshd_config stops it"));
        let hpn = say(&Note::HpnOwnConnections);
        assert!(hpn.contains("each of its transfers had a connection of its own"));
        let alone = say(&Note::DbclientOffersAlone);
        assert!(alone.contains("that is unverified"), "{alone}");
        let checked = say(&Note::DbclientCheckedByServer);
        assert!(checked.ends_with("what the sandbox's sshd logged for its connection"));
        assert_eq!(say(&Note::Legacy("as it was".into())), "as it was");
    }

    #[test]
    fn one_run_or_several_are_named_with_their_processes() {
        assert_eq!(
            sshbench_runs(&[42], "is", "are"),
            "another sshbench run (process 42) is"
        );
        assert_eq!(
            sshbench_runs(&[42, 43], "was", "were"),
            "2 other sshbench runs (processes 42, 43) were"
        );
    }
}
