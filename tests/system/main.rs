//! The second tier of tests: those that need root, namespaces or cgroups, or programs
//! beyond Rust and OpenSSH (Dropbear, tinysshd, rsync, PostgreSQL, Chromium, other login
//! shells). Built only with `--features system-tests`; `.ci/run` installs what they need
//! and runs them as root. A missing program fails the test with the package to install,
//! never skips it.

#[path = "../common/mod.rs"]
mod common;

mod dbclient;
mod dropbear_probe;
mod fleet;
mod lab;
mod openssh10;
mod portable;
mod postgres;
mod privsep;
mod report_html;
mod shells;
mod ssh_audit;
mod terminal;
mod tinyssh;
mod workloads;
mod x11;
