//! Algorithm names per kind, as one side (or both) offers them.

use crate::model::suite::AlgoKind;
use serde::Serialize;
use std::collections::BTreeMap;

/// Algorithm names per kind, in preference order. A kind that is absent is unknown
/// (for example an old client that cannot answer `ssh -Q` for it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct AlgoLists {
    lists: BTreeMap<AlgoKind, Vec<String>>,
}

impl AlgoLists {
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty list set usable in statics.
    pub const fn new_const() -> Self {
        AlgoLists {
            lists: BTreeMap::new(),
        }
    }

    pub fn set(&mut self, kind: AlgoKind, names: Vec<String>) {
        self.lists.insert(kind, names);
    }

    /// The names of one kind; `None` when unknown.
    /// Every name of every list.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.lists.values().flatten().map(String::as_str)
    }

    pub fn get(&self, kind: AlgoKind) -> Option<&[String]> {
        self.lists.get(&kind).map(Vec::as_slice)
    }

    pub fn contains(&self, kind: AlgoKind, name: &str) -> bool {
        self.get(kind)
            .is_some_and(|names| names.iter().any(|n| n == name))
    }

    /// Names both sides support, in `self`'s order. A kind unknown on one side takes
    /// the other side's list (nothing better is known; ssh will refuse what fails).
    pub fn intersect(&self, other: &AlgoLists) -> AlgoLists {
        let mut out = AlgoLists::new();
        for kind in AlgoKind::ALL {
            match (self.get(kind), other.get(kind)) {
                (Some(a), Some(b)) => {
                    out.set(kind, a.iter().filter(|n| b.contains(n)).cloned().collect())
                }
                (Some(only), None) | (None, Some(only)) => out.set(kind, only.to_vec()),
                (None, None) => {}
            }
        }
        out
    }
}
