//! Short commands, in words: what a command takes on a fresh connection each and over one
//! ControlMaster connection, the master's own start, and (for `recommend --for commands`)
//! the ControlMaster lines with their caveats.

use super::scope::Scope;
use crate::analysis::Percentiles;
use crate::model::{ExecVia, Mode};
use serde::Serialize;

/// One way measured.
#[derive(Clone, Debug, Serialize)]
pub struct ExecVariant {
    pub via: ExecVia,
    /// A fresh connection's key exchange (each command pays it); `None`: ssh's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kex: Option<String>,
    pub samples: usize,
    /// Every command of every sample, seconds.
    pub per_command: Percentiles,
    /// Over a master: its median start (connect to listening), seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub master_start_s: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ExecView {
    pub variants: Vec<ExecVariant>,
    /// The quickest fresh connection's median command over a master's: how many times
    /// faster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gain: Option<f64>,
}

impl ExecView {
    /// The quickest variant of `via`.
    fn of(&self, via: ExecVia) -> Option<&ExecVariant> {
        (self.variants.iter())
            .filter(|v| v.via == via)
            .min_by(|a, b| a.per_command.p50.total_cmp(&b.per_command.p50))
    }

    /// The slowest variant of `via`.
    fn slowest(&self, via: ExecVia) -> Option<&ExecVariant> {
        (self.variants.iter())
            .filter(|v| v.via == via)
            .max_by(|a, b| a.per_command.p50.total_cmp(&b.per_command.p50))
    }

    /// A master measured, and faster than a fresh connection per command.
    pub fn master_helps(&self) -> bool {
        self.gain.is_some_and(|g| g > 1.0)
    }
}

/// The exec figures of `scope`, if it has any.
pub fn view(scope: &Scope) -> Option<ExecView> {
    let variants: Vec<ExecVariant> = (scope.stats.iter())
        .filter(|s| s.mode == Mode::Exec && !s.sum)
        .filter_map(|s| {
            Some(ExecVariant {
                via: s.suite.exec?,
                kex: s.suite.kex.clone(),
                samples: s.ok,
                per_command: s.echo?,
                master_start_s: s
                    .phases
                    .map(|p| p.tcp + p.version + p.kex + p.auth + p.session),
            })
        })
        .collect();
    if variants.is_empty() {
        return None;
    }
    let mut v = ExecView {
        variants,
        gain: None,
    };
    let p50 = |via| v.of(via).map(|x| x.per_command.p50);
    v.gain = match (p50(ExecVia::Fresh), p50(ExecVia::Master)) {
        (Some(f), Some(m)) if m > 0.0 => Some(f / m),
        _ => None,
    };
    Some(v)
}

fn ms(seconds: f64) -> String {
    format!("{:.1} ms", seconds * 1e3)
}

fn how(via: ExecVia) -> &'static str {
    match via {
        ExecVia::Fresh => "a fresh connection per command",
        ExecVia::Master => "over one ControlMaster connection",
    }
}

/// A way's sentence: the quickest variant, over a master its start, and on fresh
/// connections of several key exchanges the slowest too.
fn way(v: &ExecView, via: ExecVia) -> Option<String> {
    let (x, slow) = (v.of(via)?, v.slowest(via)?);
    let p = x.per_command;
    let kex = |x: &ExecVariant| {
        x.kex
            .as_ref()
            .map(|k| format!(" with {k}"))
            .unwrap_or_default()
    };
    let start = (x.master_start_s)
        .map(|s| format!(", after the master's own start of {}", ms(s)))
        .unwrap_or_default();
    let range = match slow.kex != x.kex {
        true => format!(
            ", {} with {}",
            ms(slow.per_command.p50),
            slow.kex.as_deref().unwrap_or("ssh's own")
        ),
        false => String::new(),
    };
    Some(format!(
        "{}: {} per command{} (p99 {}){start}{range}",
        how(via),
        ms(p.p50),
        kex(x),
        ms(p.p99)
    ))
}

/// One sentence per way, then how they compare; `pointer`: say where the lines are.
pub fn sentences(v: &ExecView, pointer: bool) -> (Vec<String>, Vec<String>) {
    let ways = ExecVia::ALL
        .into_iter()
        .filter_map(|via| way(v, via))
        .collect();
    let mut after = Vec::new();
    if let Some(g) = v.gain {
        let see = ": `sshbench recommend --for commands` has the lines and their caveats";
        after.push(if g > 1.0 {
            format!(
                "over a ControlMaster a command is {g:.0}× as quick as on a connection of its own{}",
                if pointer { see } else { "" }
            )
        } else {
            "a ControlMaster gains nothing here: its commands take as long as fresh ones".into()
        });
    }
    (ways, after)
}

/// The `ssh_config` lines that share one connection, where a master was faster.
pub fn config_lines(v: &ExecView) -> Vec<String> {
    if !v.master_helps() {
        return Vec::new();
    }
    let comment = match (v.of(ExecVia::Fresh), v.of(ExecVia::Master)) {
        (Some(f), Some(m)) => format!(
            "# short commands: {} each over one connection, {} on a fresh one",
            ms(m.per_command.p50),
            ms(f.per_command.p50)
        ),
        _ => "# short commands over one connection".into(),
    };
    vec![
        comment,
        "ControlMaster auto".into(),
        "ControlPath ~/.ssh/cm-%C".into(),
        "ControlPersist 10m".into(),
    ]
}

/// What sharing one connection gives up, said beside its lines.
pub fn caveats() -> [&'static str; 3] {
    [
        "ControlMaster: every session over the master shares its connection: its suite (set \
         when the master starts; Ciphers given later are ignored) and its window, so a bulk copy \
         beside an interactive session slows that session",
        "ControlPath: anyone who can open the socket uses your connection without \
         authenticating; keep it in a directory only you can enter (~/.ssh), never /tmp",
        "ControlPersist 10m keeps the connection open 10 minutes after its last session; \
         `ssh -O exit HOST` closes it at once",
    ]
}
