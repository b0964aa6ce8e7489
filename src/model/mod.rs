//! Plain data shared by every stage: suites, samples and their outcomes, CPU times,
//! rekeying, racing stops, algorithm lists and the options stored with a run. No I/O,
//! and nothing else from the crate.

pub mod algos;
pub mod client;
pub mod cpu;
pub mod exec;
pub mod fleet;
pub mod note;
pub mod options;
pub mod problem;
pub mod race;
pub mod rekey;
pub mod run;
pub mod sample;
pub mod suite;
pub mod text;
pub mod typing;
pub mod x11;

pub use algos::AlgoLists;
pub use client::{ClientKind, DBCLIENT_WINDOW};
pub use cpu::CpuTimes;
pub use exec::ExecVia;
pub use fleet::{ClientPart, WorkerClient, WorkerPlace};
pub use note::{Note, ZerosStep};
pub use options::{
    Connections, DataSize, FilterSpec, Filters, LabOptions, MAX_CLIENTS, PayloadKind, Placement,
    RunOptions, SampleTimes, WorkloadSpec,
};
pub use problem::{Difference, Doing, Failure, HostProblem, KeyTypes, Part, Problem, ProcessEnd};
pub use race::{EQUAL_WITHIN, FAILED_AFTER, Stop, StopReason};
pub use rekey::Rekey;
pub use run::{HostStatus, RunStatus};
pub use sample::{
    CpuWindow, FailureKind, Outcome, Phases, Sample, SampleRequest, Stream, Together, Window,
};
pub use suite::{AlgoKind, Mode, Negotiated, Shape, Suite, Tool, Workload};
pub use typing::{KeyPlace, KeystrokeTiming, TypedKey, Typing, TypingWire, WireSpan};
pub use x11::X11Missing;
