//! Turning samples into text for people. Pure functions from data to `String`; the
//! binary decides where the text goes.

pub mod algos;
pub mod charts;
pub mod compare;
pub mod export;
pub mod html;
pub mod recommend;
pub mod report;
