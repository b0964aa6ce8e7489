//! The schema and its migrations: `PRAGMA user_version` says which of [`MIGRATIONS`] a
//! file has had.

use super::backend::Backend;
use crate::destination;
use crate::model::{LabOptions, Placement};
use anyhow::Result;
use serde::Deserialize;

/// Schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// `MIGRATIONS[i]` upgrades a database from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    started_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at      TEXT,
    status           TEXT NOT NULL,      -- running | complete | interrupted | failed | budget
    destination      TEXT NOT NULL,      -- as given, or 'local sandbox' (v6: with its setup)
    target_json      TEXT NOT NULL,      -- ssh options and destination argument
    resolved_host    TEXT,
    resolved_port    INTEGER,
    resolved_user    TEXT,
    client_version   TEXT NOT NULL,
    client_defaults_json TEXT,          -- ssh -G preference lists: what ssh uses unforced
    server_version   TEXT,
    machine_json     TEXT NOT NULL,      -- client CPU model, cores, AES/SHA, OS
    options_json     TEXT NOT NULL,      -- modes, size, rounds, stop rules, filters
    plan_json        TEXT NOT NULL,      -- the planned (mode, suite) items, in order
    seed             INTEGER NOT NULL,   -- shuffles every round's order
    sshbench_version TEXT NOT NULL
);
CREATE TABLE samples (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item            INTEGER NOT NULL,   -- index into the run's plan
    round           INTEGER NOT NULL,   -- 0 = warm-up (not counted)
    mode            TEXT NOT NULL,      -- connect | send | receive (| echo, v3)
    kex             TEXT,
    hostkey         TEXT,
    cipher          TEXT,
    mac             TEXT,               -- NULL for AEAD ciphers
    outcome         TEXT NOT NULL,      -- ok | refused | failed
    failure_kind    TEXT,               -- auth, network, timeout, byte-count, ...
    error           TEXT,               -- ssh's own message
    wall_s          REAL NOT NULL,      -- ssh spawn to exit
    transfer_s      REAL,               -- ready signal to last byte (send/receive)
    bytes           INTEGER NOT NULL,   -- moved and verified
    window_bytes    INTEGER,            -- steady-state part the throughput is taken from
    window_s        REAL,
    rtt_s           REAL,               -- send: one round trip through the session
    client_user_s   REAL,
    client_sys_s    REAL,
    negotiated_json TEXT,
    measured_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (run_id, item, round)
);
CREATE INDEX samples_by_suite ON samples (mode, cipher, mac, kex, hostkey);
"#,
    r#"
ALTER TABLE samples ADD COLUMN compression TEXT;            -- zlib@openssh.com, or NULL (off)
ALTER TABLE samples ADD COLUMN compression_factor REAL;     -- compressed / raw bytes (ssh -v)
ALTER TABLE samples ADD COLUMN client_window_cpu_s REAL;    -- client CPU over the window
ALTER TABLE samples ADD COLUMN server_cpu_s REAL;           -- server session CPU (sshd + command)
ALTER TABLE samples ADD COLUMN server_sshd_cpu_s REAL;      -- ... of which the sshd process
ALTER TABLE samples ADD COLUMN server_cpu_limit REAL;       -- cores allowed by a cgroup quota
ALTER TABLE samples ADD COLUMN server_throttled REAL;       -- share of quota periods throttled
ALTER TABLE samples ADD COLUMN server_cpu_interval_s REAL;  -- ... over this long
ALTER TABLE samples ADD COLUMN server_cpu_bytes INTEGER;    -- ... while this many bytes moved
ALTER TABLE samples ADD COLUMN phases_json TEXT;            -- connect: tcp, version, kex, auth, session
"#,
    r#"
ALTER TABLE samples ADD COLUMN echoes BLOB;                 -- echo: each round trip, f32 seconds (LE)
"#,
    r#"
ALTER TABLE runs ADD COLUMN server_strict_kex INTEGER;      -- 1/0: the server offered strict KEX (Terrapin), NULL: unknown
"#,
    r#"
ALTER TABLE samples ADD COLUMN rekey_bytes INTEGER;         -- send/receive: encrypted bytes between rekeys
ALTER TABLE samples ADD COLUMN rekey_s REAL;                -- ... and one rekey's stall (the connection's kex)
"#,
    // v6: each setup of the local sandbox is a destination of its own
    // (`destination::sandbox_label`); `relabel_sandbox_runs` moves the runs stored before.
    "",
    r#"
ALTER TABLE samples ADD COLUMN tool_options TEXT;           -- workloads: the tool's options measured (-R 256), NULL: defaults
ALTER TABLE samples ADD COLUMN files INTEGER;               -- workloads: files verified at the far end
"#,
    r#"
ALTER TABLE runs ADD COLUMN server_window INTEGER;         -- bytes the server's session channel window opened with (ssh -vv), NULL: unknown
"#,
    r#"
ALTER TABLE samples ADD COLUMN client_waited_s REAL;        -- ssh's run-queue delay over the window (Linux schedstat)
ALTER TABLE samples ADD COLUMN server_waited_s REAL;        -- the session sshd's, over the measured part
"#,
    r#"
ALTER TABLE samples ADD COLUMN streams INTEGER;             -- one of this many concurrent connections (--streams), NULL: alone
ALTER TABLE samples ADD COLUMN stream_start_s REAL;         -- its first byte of data, after the batch's streams were let go
ALTER TABLE samples ADD COLUMN stream_end_s REAL;           -- ... and its last
"#,
    r#"
ALTER TABLE samples ADD COLUMN client_feeder_cpu_s REAL;    -- sshbench's own feeding/draining thread over the window
ALTER TABLE samples ADD COLUMN client_cores REAL;           -- CPUs ssh may run on (affinity), NULL: unknown
ALTER TABLE samples ADD COLUMN server_cores REAL;           -- CPUs the session's sshd may run on
ALTER TABLE runs ADD COLUMN path_tcp_rate REAL;             -- sandbox: one raw TCP stream along its path (bytes/s)
"#,
    r#"
CREATE TABLE fleets (
    id           INTEGER PRIMARY KEY,
    started_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at  TEXT,
    status       TEXT NOT NULL,         -- running | complete | failed (a host failed) | interrupted
    options_json TEXT NOT NULL,         -- the runs' options, as each host's run stores them
    ssh_json     TEXT NOT NULL,         -- ssh's own options for every host (-F, -o)
    jobs         INTEGER NOT NULL       -- hosts measured at once
);
CREATE TABLE fleet_hosts (
    fleet_id     INTEGER NOT NULL REFERENCES fleets(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,      -- order as given
    destination  TEXT NOT NULL,         -- as given; its run's destination
    status       TEXT NOT NULL,         -- pending | running | complete | failed | interrupted
    error        TEXT,                  -- why it failed
    run_id       INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    PRIMARY KEY (fleet_id, position)
);
-- Reports read a run's samples in order: an index, not a sort of every sample.
CREATE INDEX samples_by_run ON samples (run_id, id);
"#,
    r#"
ALTER TABLE runs ADD COLUMN stops_json TEXT;                -- a raced run: why each item stopped
"#,
    r#"
ALTER TABLE samples ADD COLUMN echoes_ref BLOB;             -- echo: the reference session's round trips, each beside its keystroke
"#,
    r#"
CREATE TABLE sample_packs (
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    part        INTEGER NOT NULL,   -- 0, 1, ...: a complete run's counted samples in stored order
    parts       INTEGER NOT NULL,   -- how many packs the run has
    format      INTEGER NOT NULL,   -- the packing's version (store::packs)
    samples     INTEGER NOT NULL,   -- samples in this pack
    run_rows    INTEGER NOT NULL,   -- the run's rows (every round) when it was packed
    finished_at TEXT,               -- ... and its finish time
    data        BLOB NOT NULL,      -- column names, then each sample's values
    PRIMARY KEY (run_id, part)
);
"#,
    r#"
ALTER TABLE samples ADD COLUMN client_peak_cpu_s REAL;      -- the busiest client process (a proxy's beside ssh), NULL: ssh, all of it
"#,
    r#"
ALTER TABLE runs ADD COLUMN notes_json TEXT;                -- how the run measured where it departed from the usual (a JSON list of sentences)
"#,
    r#"
ALTER TABLE samples ADD COLUMN rekeys_in_window INTEGER;    -- rekeys inside the window itself (their stalls are in window_s); NULL: not counted
"#,
    // Packs of complete runs' samples (version 15) are gone: reports read the rows. A
    // run's newest sample is found in its index instead of by reading all its rows.
    r#"
DROP TABLE sample_packs;
CREATE INDEX samples_by_run_time ON samples (run_id, measured_at);
"#,
    // Why a sample was refused or failed as a typed record (`model::Problem`); `error`
    // keeps what older versions wrote, read back as the problem's legacy text.
    r#"
ALTER TABLE samples ADD COLUMN problem_json TEXT;          -- refused/unavailable/failed: why (JSON)
ALTER TABLE fleet_hosts ADD COLUMN problem_json TEXT;      -- a failed host: why (JSON)
ALTER TABLE runs ADD COLUMN seal TEXT;                     -- HMAC of target and options under its user's key (resume trusts only its own)
ALTER TABLE fleets ADD COLUMN seal TEXT;                   -- ... of options, ssh options and hosts
"#,
    // Runs that measured several clients (`--ssh`): which one took each sample, and
    // each client's version and unforced lists (the first's stay in their old columns).
    r#"
ALTER TABLE samples ADD COLUMN client INTEGER;             -- index into the run's clients, NULL: the first
ALTER TABLE runs ADD COLUMN clients_json TEXT;             -- each client's version and ssh -G lists, NULL: one client
"#,
    // Typing in a terminal: the ObscureKeystrokeTiming variant a suite forced, and each
    // key's place and echo with the wire it cost (`model::Typing`).
    r#"
ALTER TABLE samples ADD COLUMN keystroke_timing TEXT;      -- typing: yes, no or interval:N forced, NULL: the client's own
ALTER TABLE samples ADD COLUMN typing_json TEXT;           -- typing: keys (idle before, place in burst, echo) and wire counters (JSON)
"#,
    // Short commands: how an exec suite's commands reached the server.
    r#"
ALTER TABLE samples ADD COLUMN exec_via TEXT;              -- exec: fresh (a connection per command) or master (one ControlMaster), NULL: not exec
"#,
    // Fleets shared by workers: each claims a host and holds a lease on it while it
    // measures (times in seconds since 1970 on the database's clock, which every worker
    // shares whatever its own says).
    r#"
ALTER TABLE fleets ADD COLUMN name TEXT;                   -- --fleet NAME: workers join it by name, NULL: one process's
ALTER TABLE fleets ADD COLUMN lease_s INTEGER;             -- how long a claim on a host lasts unrenewed (seconds)
ALTER TABLE fleets ADD COLUMN client_json TEXT;            -- the client every worker must match: CPU, cores, ssh versions (JSON)
CREATE UNIQUE INDEX fleets_by_name ON fleets (name);
ALTER TABLE fleet_hosts ADD COLUMN worker_id INTEGER;      -- the worker measuring it now, NULL: none
ALTER TABLE fleet_hosts ADD COLUMN lease_until REAL;       -- ... until when its claim holds unrenewed
ALTER TABLE fleet_hosts ADD COLUMN claims INTEGER NOT NULL DEFAULT 0; -- times a worker claimed it (more than one: resumed or taken over)
ALTER TABLE fleet_hosts ADD COLUMN claimed_s REAL;         -- when the last claim began
ALTER TABLE fleet_hosts ADD COLUMN finished_s REAL;        -- when it was last given back (done, failed, interrupted)
ALTER TABLE fleets ADD COLUMN full_hosts INTEGER;          -- hosts of a kind measured in full (--fleet-full N), NULL: every host
ALTER TABLE fleet_hosts ADD COLUMN kind_json TEXT;         -- what decides its rankings: banner, offer, strict KEX, CPU (model::HostKind)
ALTER TABLE fleet_hosts ADD COLUMN way_json TEXT;          -- how it was measured: full, contenders, fell back (model::HostWay)
ALTER TABLE runs ADD COLUMN server_cpu_json TEXT;          -- the server's CPU as its login said (model::fleet::ServerCpu)
CREATE TABLE fleet_workers (
    id          INTEGER PRIMARY KEY,
    fleet_id    INTEGER NOT NULL REFERENCES fleets(id) ON DELETE CASCADE,
    machine     TEXT NOT NULL,      -- its machine's name
    boot        TEXT,               -- ... and boot (Linux's boot id): a pid names one process
    pid         INTEGER NOT NULL,
    client_json TEXT NOT NULL,      -- its client (model::WorkerClient)
    jobs        INTEGER NOT NULL,   -- hosts it measures at once
    started_s   REAL NOT NULL,
    seen_s      REAL NOT NULL,      -- its last claim or renewal
    ended_s     REAL,               -- it finished or stopped; NULL: measuring, or gone without a word
    gone        INTEGER NOT NULL DEFAULT 0 -- found dead by a worker on its machine
);
"#,
];

/// The version whose upgrade also relabels the sandbox runs stored before it.
pub const RELABEL_SANDBOX_AT: usize = 6;

/// Give every run stored as `local sandbox` the label of the setup it ran in (its
/// options say: shared CPUs, a lab), so that reports stop pooling them with runs of the
/// default setup. Runs from before the placement existed ran with shared CPUs.
pub fn relabel_sandbox_runs(db: &mut dyn Backend) -> Result<()> {
    #[derive(Default, Deserialize)]
    struct Setup {
        #[serde(default)]
        lab: LabOptions,
        #[serde(default)]
        sandbox_cpus: Placement,
    }
    let mut runs: Vec<(i64, String)> = Vec::new();
    db.query(
        "SELECT id, options_json FROM runs WHERE destination = ?1",
        &[destination::SANDBOX.into()],
        &mut |r| {
            runs.push((r.get("id")?, r.get("options_json")?));
            Ok(())
        },
    )?;
    for (id, options) in runs {
        let setup: Setup = serde_json::from_str(&options).unwrap_or_default();
        let label = destination::sandbox_label(setup.sandbox_cpus, &setup.lab);
        if label != destination::SANDBOX {
            db.execute(
                "UPDATE runs SET destination = ?1 WHERE id = ?2",
                &[label.into(), id.into()],
            )?;
        }
    }
    Ok(())
}
