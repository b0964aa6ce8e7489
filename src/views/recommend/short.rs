//! The answer's short `ssh_config` block (what `run` ends with): each list cut to what
//! fits the terminal, with one-line pointers to `recommend` for what it leaves out.

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

/// The ssh_config block, each list cut to the names that fit in `width` columns.
pub fn block(v: &RecommendView, width: usize) -> String {
    let mut out = format!("Host {}\n", host_pattern(&v.destination));
    let mut cut = false;
    for l in &v.lines {
        let lead = format!("{}   {} ", [" ", "#"][l.held.is_some() as usize], l.keyword);
        let (list, left) = fitting(&l.listed(v.order), width - lead.len());
        cut |= left > 0;
        out.push_str(&format!("{lead}{}\n", list.replace(", ", ",")));
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
            cut,
            "lists cut to fit: paste the whole ones `sshbench recommend` gives, not these",
        ),
    ] {
        if said {
            out.push_str(&format!("# {text}\n"));
        }
    }
    out
}
