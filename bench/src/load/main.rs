//! A load generator for a running Lightbox: readers call `image.list` and
//! `album.preview` and fetch renders as fast as they can over
//! `--connections` connections, while one uploader adds photos at
//! `--uploads-per-s`. Reports p50/p90/p99 per operation, every error, and
//! the resident memory of the `--pid` processes across the run. Exits 1 on
//! an undocumented error or memory that keeps growing.
//!
//! `load --url URL --email E --password P [--seconds 30] [--connections 8]
//!  [--uploads-per-s 1] [--pid N]... [--out summary.json]`

mod args;
mod client;
mod memory;
mod report;

use client::Client;
use report::{Outcome, Tally};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let args = args::Args::parse();
    let client = Arc::new(Client::sign_in(&args).await);
    let fixture = client.fixture(12).await;
    eprintln!(
        "fixture: folder {} with {} photos, {} render URLs",
        fixture.album,
        fixture.images,
        fixture.renders.len()
    );
    let fixture = Arc::new(fixture);
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let memory = memory::Sampler::start(args.pids.clone(), Duration::from_millis(500));

    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..args.connections {
        let (client, fixture) = (client.clone(), fixture.clone());
        tasks.spawn(async move { client.read_loop(n as u64, &fixture, deadline).await });
    }
    let (c, f) = (client.clone(), fixture.clone());
    let every = Duration::from_secs_f64(1.0 / args.uploads_per_s.max(0.01));
    tasks.spawn(async move { c.upload_loop(&f, every, deadline).await });

    let mut tally = Tally::default();
    while let Some(done) = tasks.join_next().await {
        tally.merge(done.expect("a load task panicked"));
    }
    let memory = memory.stop().await;
    let summary = report::summary(&args, &tally, &memory);
    println!("{}", report::table(&tally, args.seconds, &memory));
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&summary).unwrap()).expect("write --out");
    }
    let undocumented = tally.count(Outcome::Undocumented);
    if undocumented > 0 || !memory.flat() {
        eprintln!(
            "FAIL: {undocumented} undocumented errors; memory flat: {}",
            memory.flat()
        );
        std::process::exit(1);
    }
}
