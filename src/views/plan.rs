//! The words of planning's notes ([`PlanNote`]), said before a run measures.

use crate::model::{AlgoKind, Mode};
use crate::plan::{Factorized, PlanNote};

/// The sentence a person reads for `note`.
pub fn say(note: &PlanNote) -> String {
    match note {
        PlanNote::NotOffered { kind, names } => format!(
            "skipped {} the server does not offer: {}",
            kind.label(),
            names.join(", ")
        ),
        PlanNote::Aliases { names } => {
            format!("not measured twice (aliases): {}", names.join(", "))
        }
        PlanNote::Factorized(f) => factorized(f),
        PlanNote::Workload { modes, shape, spec } => {
            format!(
                "{}: {} per sample",
                list(modes),
                super::workload::data(&spec.data(*shape))
            )
        }
    }
}

fn list(modes: &[Mode]) -> String {
    let names: Vec<&str> = modes.iter().map(|m| m.as_str()).collect();
    names.join(", ")
}

/// `key exchanges`, `ciphers`, `MACs`.
fn plural(kind: AlgoKind) -> String {
    match kind {
        AlgoKind::Kex => "key exchanges".into(),
        AlgoKind::HostKey => "host keys".into(),
        k => format!("{}s", k.label()),
    }
}

fn factorized(f: &Factorized) -> String {
    let (a, b) = (&f.first, &f.second);
    let (aref, bref) = (&a.reference, &b.reference);
    let sums = if f.sums == 1 {
        "pair is a sum"
    } else {
        "pairs are sums"
    };
    format!(
        "{}: {} {} with {bref} and {} {} with {aref} ({aref} with {bref} {} times a round); the other {} {sums} of their parts (--pairs measures every pair)",
        list(&f.modes),
        a.count,
        plural(a.kind),
        b.count,
        plural(b.kind),
        f.replicas,
        f.sums,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Shape, WorkloadSpec};
    use crate::plan::Varied;

    #[test]
    fn each_plan_note_is_said_as_before() {
        let f = Factorized {
            modes: vec![Mode::Send, Mode::Echo],
            first: Varied {
                kind: AlgoKind::Cipher,
                count: 3,
                reference: "aes128-ctr".into(),
            },
            second: Varied {
                kind: AlgoKind::Mac,
                count: 3,
                reference: "hmac-sha2-256-etm@openssh.com".into(),
            },
            replicas: 3,
            sums: 4,
        };
        assert_eq!(
            say(&PlanNote::Factorized(f.clone())),
            "send, echo: 3 ciphers with hmac-sha2-256-etm@openssh.com and 3 MACs with aes128-ctr (aes128-ctr with hmac-sha2-256-etm@openssh.com 3 times a round); the other 4 pairs are sums of their parts (--pairs measures every pair)"
        );
        let connect = Factorized {
            modes: vec![Mode::Connect],
            first: Varied {
                kind: AlgoKind::Kex,
                count: 2,
                reference: "curve25519-sha256".into(),
            },
            second: Varied {
                kind: AlgoKind::HostKey,
                count: 2,
                reference: "ssh-ed25519".into(),
            },
            sums: 1,
            ..f
        };
        assert_eq!(
            say(&PlanNote::Factorized(connect)),
            "connect: 2 key exchanges with ssh-ed25519 and 2 host keys with curve25519-sha256 (curve25519-sha256 with ssh-ed25519 3 times a round); the other 1 pair is a sum of their parts (--pairs measures every pair)"
        );
        let refused = PlanNote::NotOffered {
            kind: AlgoKind::Cipher,
            names: vec!["3des-cbc".into()],
        };
        assert_eq!(
            say(&refused),
            "skipped cipher the server does not offer: 3des-cbc"
        );
        let tree = PlanNote::Workload {
            modes: vec![Mode::SftpPutTree],
            shape: Shape::Tree,
            spec: WorkloadSpec::default(),
        };
        assert_eq!(
            say(&tree),
            "sftp-put-tree: 2000 files of 16 KiB in 20 directories per sample"
        );
    }
}
