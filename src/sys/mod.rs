//! Process, signal and machine plumbing: reaping and killing children, bounded reads,
//! draining pipes and pacing their refills, files in memory that children write into,
//! the cancellation token, CPU placement, and facts about this machine.

pub mod affinity;
pub mod cancel;
pub mod drain;
pub mod files;
pub mod gift;
pub mod instances;
pub mod load;
pub mod machine;
pub mod pacer;
pub mod proc;
pub mod pty;
pub mod run;
pub mod scratch;
pub mod seal;
pub mod secrets;
pub mod sink;
pub mod tcpinfo;
