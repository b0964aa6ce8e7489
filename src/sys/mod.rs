//! Process, signal and machine plumbing: reaping and killing children, bounded reads,
//! the cancellation token, CPU placement, and facts about this machine.

pub mod affinity;
pub mod cancel;
pub mod machine;
pub mod proc;
pub mod run;
pub mod scratch;
