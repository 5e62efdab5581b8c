//! How many zips are written at once, overall and per folder. A zip holds
//! a blob stream and a connection for as long as its client reads, so a
//! crowd of clients that never read must not pile them up. A refusal for
//! the folder is 429, for the process 503.

pub use super::gate::{Busy as ZipBusy, KeyedGate as ZipGate, Permit as ZipPermit};

/// Seconds a refused visitor is told to wait.
pub const RETRY_AFTER_S: u64 = 10;
