//! Resident memory of the server processes, sampled through the run.

use std::time::Duration;
use tokio::sync::oneshot;

pub struct Sampler {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Samples>,
}

/// Total RSS (MiB) of the watched processes at each tick.
pub struct Samples(pub Vec<f64>);

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

impl Sampler {
    pub fn start(pids: Vec<u32>, every: Duration) -> Sampler {
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let mut out = Vec::new();
            let mut tick = tokio::time::interval(every);
            loop {
                tokio::select! {
                    _ = tick.tick() => out.push(pids.iter().map(|p| rss_mib(*p)).sum()),
                    _ = &mut stopped => return Samples(out),
                }
            }
        });
        Sampler { stop, task }
    }

    pub async fn stop(self) -> Samples {
        let _ = self.stop.send(());
        self.task.await.expect("sampler")
    }
}

impl Samples {
    fn max_of(&self, from: f64, to: f64) -> f64 {
        let n = self.0.len();
        let (a, b) = (
            (n as f64 * from) as usize,
            ((n as f64 * to) as usize).max(1),
        );
        self.0[a.min(n.saturating_sub(1))..b.min(n)]
            .iter()
            .cloned()
            .fold(0.0, f64::max)
    }

    /// Peak of each quarter of the run.
    pub fn quarters(&self) -> [f64; 4] {
        [0.0, 0.25, 0.5, 0.75].map(|q| {
            if self.0.is_empty() {
                0.0
            } else {
                self.max_of(q, q + 0.25)
            }
        })
    }

    /// Once warm (the second quarter), the peak no longer climbs: the last
    /// half stays within 20% plus 32 MiB of it. No pids watched: flat.
    pub fn flat(&self) -> bool {
        let [_, warm, third, last] = self.quarters();
        self.0.len() < 4 || third.max(last) <= warm * 1.2 + 32.0
    }
}
