//! Renders the default preset set over the files given, `PARALLEL` images
//! at a time (default 2: both cores busy), `ROUNDS` times over, through the
//! same `decode` + `render_all` the render workers run. Prints one JSON line:
//! images, seconds, images per second, and the process's peak RSS.
//! `ONLY=thumb,small` keeps only those presets; `SHRINK=0` turns JPEG
//! shrink-on-load off, to measure what it gains. `STAGES=1` instead times
//! each file alone: its decode, then each render's resize and encode.

use lightbox_domain::crop::default_presets;
use lightbox_render::pipeline;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// CPU seconds of every thread of this process so far, finished ones
/// included (`/proc/self/stat`'s utime and stime, in USER_HZ = 100ths).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let field = |i: usize| -> f64 {
        rest.split_whitespace()
            .nth(i)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    (field(11) + field(12)) / 100.0
}

fn main() {
    let files: Vec<Vec<u8>> = std::env::args()
        .skip(1)
        .map(|p| std::fs::read(&p).expect("read input"))
        .collect();
    let (parallel, rounds) = (env("PARALLEL", 2), env("ROUNDS", 3));
    let jobs: Vec<&[u8]> = (0..rounds)
        .flat_map(|_| files.iter().map(Vec::as_slice))
        .collect();
    let only = std::env::var("ONLY").unwrap_or_default();
    let presets: Vec<_> = default_presets()
        .into_iter()
        .filter(|p| only.is_empty() || only.split(',').any(|c| c == p.code))
        .collect();
    let shrink = env("SHRINK", 1) == 1;
    if env("STAGES", 0) == 1 {
        return stages(&files, &presets);
    }
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..parallel {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(bytes) = jobs.get(i) else { break };
                let decoded = if shrink {
                    pipeline::decode(bytes, 200_000_000, &presets)
                } else {
                    pipeline::decode_whole(bytes, 200_000_000)
                };
                let decoded = decoded.expect("decode");
                let out = lightbox_render::cascade::render_all(decoded, &presets).expect("render");
                assert_eq!(out.len(), presets.len());
            });
        }
    });
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds();
    println!(
        "{{\"tool\":\"lightbox\",\"presets\":\"{}\",\"shrink\":{shrink},\"images\":{},\"seconds\":{secs:.3},\"images_per_s\":{:.3},\"cpu_s\":{cpu:.1},\"peak_rss_mib\":{:.1}}}",
        if only.is_empty() { "all" } else { &only },
        jobs.len(),
        jobs.len() as f64 / secs,
        peak_rss_kib() as f64 / 1024.0
    );
}

/// One line per file: decode milliseconds, then each render's (resize and
/// encode, on its own thread as the workers run them).
fn stages(files: &[Vec<u8>], presets: &[lightbox_domain::crop::CropSpec]) {
    let names: Vec<String> = std::env::args().skip(1).collect();
    for (name, bytes) in names.iter().zip(files) {
        let started = Instant::now();
        let decoded = pipeline::decode(bytes, 200_000_000, presets).expect("decode");
        let decode = started.elapsed();
        let out = lightbox_render::cascade::render_all(decoded, presets).expect("render");
        let renders: Vec<String> = out
            .iter()
            .map(|o| format!("\"{}\":{:.0}", o.code, o.took.as_secs_f64() * 1e3))
            .collect();
        println!(
            "{{\"file\":\"{name}\",\"decode_ms\":{:.0},{}}}",
            decode.as_secs_f64() * 1e3,
            renders.join(",")
        );
    }
}
