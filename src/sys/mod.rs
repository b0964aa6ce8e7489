//! Process, signal and machine plumbing: reaping and killing children, bounded reads,
//! draining pipes,
//! the cancellation token, CPU placement, and facts about this machine.

pub mod affinity;
pub mod cancel;
pub mod drain;
pub mod machine;
pub mod proc;
pub mod run;
pub mod scratch;
