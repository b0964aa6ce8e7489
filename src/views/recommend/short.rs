//! The answer's short `ssh_config` block (what `run` ends with): each list cut to what
//! fits the terminal (a cut list puts its names ahead of the client's own), with
//! one-line pointers to `recommend` for what it leaves out.

use super::{Line, RecommendView, host_pattern};

/// `names` joined with ", " as far as they fit in `room` characters, and how many were
/// left out.
pub fn fitting(names: &[String], room: usize) -> (String, usize) {
    let mut out = String::new();
    for (i, n) in names.iter().enumerate() {
        let more = if i == 0 { n.len() } else { n.len() + 2 };
        if i > 0 && out.len() + more > room {
            return (out, names.len() - i);
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(n);
    }
    (out, 0)
}

/// The ssh_config block, each list cut to the names that fit in `width` columns. A cut
/// list would refuse a server that offers only names it cut, so it is written with `^`
/// (its names ahead of the client's own, which stay) where the client takes that
/// (`heads`), else as a comment.
pub fn block(v: &RecommendView, width: usize, heads: bool) -> String {
    if v.dbclient {
        return super::dbclient_block(v);
    }
    let mut out = format!("Host {}\n", host_pattern(&v.destination));
    out.push_str(&super::client_comment(v));
    let (mut headed, mut commented) = (false, false);
    for l in &v.lines {
        let names = l.listed(v.order);
        let lead = format!("    {} ", l.keyword).len();
        let (mut list, left) = fitting(&names, width - lead);
        let cut = left > 0 && l.held.is_none();
        if cut && heads {
            list = format!("^{}", fitting(&names, width - lead - 1).0);
        }
        headed |= cut && heads;
        commented |= cut && !heads;
        let mark = [" ", "#"][(l.held.is_some() || cut && !heads) as usize];
        let list = list.replace(", ", ",");
        out.push_str(&format!("{mark}   {} {list}\n", l.keyword));
    }
    for keyword in &v.dead_ends {
        out.push_str(&format!(
            "# {keyword}: nothing measured is of an allowed grade; `sshbench recommend` says why\n"
        ));
    }
    let any = |f: fn(&Line) -> bool| v.lines.iter().any(f);
    for (said, text) in [
        (
            any(|l| l.held.is_some()),
            "HostKeyAlgorithms as a comment: `sshbench recommend` says why",
        ),
        (
            any(|l| !l.kept.is_empty()),
            "unmeasured names kept for their grade; `sshbench recommend` says which",
        ),
        (
            headed,
            "^: a list cut to fit, put ahead of the client's own; `sshbench recommend` has it whole",
        ),
        (
            commented,
            "lists cut to fit are comments (this ssh takes no ^ lists); `sshbench recommend` has them whole",
        ),
    ] {
        if said {
            out.push_str(&format!("# {text}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AlgoKind;
    use crate::offer::catalogue::Grade;
    use crate::views::recommend::{Goal, Order, ServerSoftware};

    fn line(keyword: &'static str, kind: AlgoKind, names: &[&str]) -> Line {
        Line {
            keyword,
            kind,
            names: names.iter().map(|n| n.to_string()).collect(),
            scores: vec![1.0; names.len()],
            comments: Vec::new(),
            kept: Vec::new(),
            held: None,
        }
    }

    fn view(lines: Vec<Line>) -> RecommendView {
        RecommendView {
            destination: "nas".into(),
            runs: vec![1],
            goal: Goal::Balanced,
            order: Order::Grade,
            allowed: Grade::Acceptable,
            lines,
            notes: Vec::new(),
            dead_ends: Vec::new(),
            server: ServerSoftware::Sshd,
            client: None,
            dbclient: false,
            figures: Default::default(),
        }
    }

    const KEX: [&str; 4] = [
        "sntrup761x25519-sha512",
        "ecdh-sha2-nistp256",
        "ecdh-sha2-nistp521",
        "curve25519-sha256",
    ];

    #[test]
    fn a_cut_list_goes_ahead_of_the_clients_own_or_stays_a_comment() {
        let v = view(vec![
            line("KexAlgorithms", AlgoKind::Kex, &KEX),
            line("Ciphers", AlgoKind::Cipher, &["aes128-gcm@openssh.com"]),
        ]);
        let headed = block(&v, 80, true);
        assert!(
            headed.contains("\n    KexAlgorithms ^sntrup761x25519-sha512,ecdh-sha2-nistp256\n"),
            "{headed}"
        );
        // Whole lists are written as they are.
        assert!(
            headed.contains("\n    Ciphers aes128-gcm@openssh.com\n"),
            "{headed}"
        );
        assert!(headed.contains("# ^: a list cut to fit"), "{headed}");
        assert!(headed.lines().all(|l| l.len() <= 100), "{headed}");
        let old = block(&v, 80, false);
        let commented = "\n#   KexAlgorithms sntrup761x25519-sha512,ecdh-sha2-nistp256,";
        assert!(old.contains(commented), "{old}");
        assert!(
            old.contains("\n    Ciphers aes128-gcm@openssh.com\n"),
            "{old}"
        );
        assert!(old.contains("# lists cut to fit are comments"), "{old}");
        assert!(old.lines().all(|l| l.len() <= 100), "{old}");
        // Nothing cut, nothing said.
        let whole = block(&v, 200, true);
        assert!(whole.contains(&format!("KexAlgorithms {}\n", KEX.join(","))));
        assert!(!whole.contains('^') && !whole.contains("cut"), "{whole}");
    }

    #[test]
    fn a_held_line_stays_a_comment_whole_or_cut() {
        let mut keys = line("HostKeyAlgorithms", AlgoKind::HostKey, &KEX);
        keys.held = Some("why".into());
        let out = block(&view(vec![keys]), 80, true);
        assert!(out.contains("\n#   HostKeyAlgorithms sntrup"), "{out}");
        assert!(!out.contains('^'), "{out}");
    }
}
