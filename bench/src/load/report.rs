//! Latencies and outcomes per operation, and the printed report.

use crate::args::Args;
use crate::memory::Samples;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Ok,
    /// An error the contract names for this situation (4002, 5001).
    Documented,
    Undocumented,
}

#[derive(Default)]
pub struct Tally {
    /// Microseconds per call, by operation.
    latencies: BTreeMap<&'static str, Vec<u64>>,
    outcomes: BTreeMap<(&'static str, Outcome), u64>,
}

impl Tally {
    pub fn record(&mut self, op: &'static str, took: Duration, outcome: Outcome) {
        self.latencies
            .entry(op)
            .or_default()
            .push(took.as_micros() as u64);
        *self.outcomes.entry((op, outcome)).or_default() += 1;
    }

    pub fn merge(&mut self, other: Tally) {
        for (op, mut l) in other.latencies {
            self.latencies.entry(op).or_default().append(&mut l);
        }
        for (k, n) in other.outcomes {
            *self.outcomes.entry(k).or_default() += n;
        }
    }

    pub fn count(&self, outcome: Outcome) -> u64 {
        self.outcomes
            .iter()
            .filter(|((_, o), _)| *o == outcome)
            .map(|(_, n)| n)
            .sum()
    }

    fn ops(&self, seconds: u64) -> Vec<(&'static str, Value)> {
        self.latencies
            .iter()
            .map(|(op, l)| {
                let mut l = l.clone();
                l.sort_unstable();
                let q = |p: f64| l[((l.len() as f64 * p) as usize).min(l.len() - 1)] as f64 / 1000.0;
                let n = |o| self.outcomes.get(&(*op, o)).copied().unwrap_or(0);
                let row = json!({
                    "calls": l.len(), "per_s": l.len() as f64 / seconds.max(1) as f64,
                    "p50_ms": q(0.5), "p90_ms": q(0.9), "p99_ms": q(0.99), "max_ms": q(1.0),
                    "documented_errors": n(Outcome::Documented), "undocumented_errors": n(Outcome::Undocumented),
                });
                (*op, row)
            })
            .collect()
    }
}

pub fn table(t: &Tally, seconds: u64, m: &Samples) -> String {
    let mut out = String::from(
        "| operation | calls | per s | p50 ms | p90 ms | p99 ms | max ms | documented errors | other errors |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for (op, r) in t.ops(seconds) {
        out += &format!(
            "| {op} | {} | {:.1} | {:.2} | {:.2} | {:.2} | {:.1} | {} | {} |\n",
            r["calls"],
            r["per_s"].as_f64().unwrap(),
            r["p50_ms"].as_f64().unwrap(),
            r["p90_ms"].as_f64().unwrap(),
            r["p99_ms"].as_f64().unwrap(),
            r["max_ms"].as_f64().unwrap(),
            r["documented_errors"],
            r["undocumented_errors"]
        );
    }
    let q = m.quarters();
    out += &format!(
        "\nserver RSS, peak per quarter of the run (MiB): {:.0} / {:.0} / {:.0} / {:.0} ({})",
        q[0],
        q[1],
        q[2],
        q[3],
        if m.flat() { "flat" } else { "GROWING" }
    );
    out
}

pub fn summary(args: &Args, t: &Tally, m: &Samples) -> Value {
    json!({
        "url": args.url, "seconds": args.seconds, "connections": args.connections,
        "uploads_per_s": args.uploads_per_s,
        "operations": t.ops(args.seconds).into_iter().map(|(op, r)| (op.to_owned(), r)).collect::<serde_json::Map<_, _>>(),
        "rss_quarter_peaks_mib": m.quarters(), "memory_flat": m.flat(),
    })
}
