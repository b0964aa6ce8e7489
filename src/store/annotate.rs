//! What a run learns of itself after it was created, written onto its row: the
//! server's session window and the path's raw TCP rate (read at its start), why each
//! raced item stopped, and notes on how it measured.

use super::Store;
use crate::model::{Note, Stop};
use anyhow::{Result, bail};

impl Store {
    /// Record the server's session channel window, as read at the run's start.
    pub fn set_server_window(&self, run_id: i64, window: u64) -> Result<()> {
        let sql = "UPDATE runs SET server_window = ?2 WHERE id = ?1";
        self.execute(sql, &[run_id.into(), window.into()])?;
        Ok(())
    }

    /// Record the raw TCP rate of the sandbox's path, as measured at the run's start.
    pub fn set_tcp_rate(&self, run_id: i64, rate: f64) -> Result<()> {
        let sql = "UPDATE runs SET path_tcp_rate = ?2 WHERE id = ?1";
        self.execute(sql, &[run_id.into(), rate.into()])?;
        Ok(())
    }

    /// Record why the items of a raced run stopped, each once (a later stop of an item
    /// replaces its earlier one).
    pub fn set_stops(&self, run_id: i64, stops: &[(usize, Stop)]) -> Result<()> {
        let sql = "UPDATE runs SET stops_json = ?2 WHERE id = ?1";
        self.execute(sql, &[run_id.into(), serde_json::to_string(stops)?.into()])?;
        Ok(())
    }

    /// Add `notes` to a run's, those it has already once (a resumed run says them again).
    pub fn add_notes(&self, run_id: i64, notes: &[Note]) -> Result<()> {
        if notes.is_empty() {
            return Ok(());
        }
        let Some(run) = self.run(run_id)? else {
            bail!("no run {run_id}");
        };
        let mut all = run.notes;
        let before = all.len();
        for n in notes {
            if !all.contains(n) {
                all.push(n.clone());
            }
        }
        if all.len() > before {
            let sql = "UPDATE runs SET notes_json = ?2 WHERE id = ?1";
            self.execute(sql, &[run_id.into(), Note::encode_all(&all)?.into()])?;
        }
        Ok(())
    }
}
