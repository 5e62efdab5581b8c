//! What a server process holds, read from outside it through /proc: the
//! bounds the abuse tests assert are the ones an operator would see.

use std::time::Duration;

fn status_kb(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Peak resident memory since start (or the last `reset_peak`), in MiB.
pub fn peak_mb(pid: u32) -> u64 {
    status_kb(pid, "VmHWM:") / 1024
}

/// Resident memory now, in MiB.
pub fn rss_mb(pid: u32) -> u64 {
    status_kb(pid, "VmRSS:") / 1024
}

/// Resets the peak to the current RSS (`clear_refs` 5), so a test measures
/// its own high water, not the start-up's. Returns the RSS it starts from.
pub fn reset_peak(pid: u32) -> u64 {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
    rss_mb(pid)
}

pub fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

/// Open sockets of the process.
pub fn sockets(pid: u32) -> usize {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    dir.flatten()
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:"))
        })
        .count()
}

/// A free local port, for a second listener.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Waits until `check` holds, polling; false at the deadline.
pub async fn within(deadline: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    check()
}

/// (thread id, name, nice) of every thread of the process now.
pub fn thread_nices(pid: u32) -> Vec<(u32, String, i32)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let name = head.split_once('(')?.1.to_owned();
            // Field 19 of stat; `rest` starts at field 3.
            let nice = rest.split_whitespace().nth(16)?.parse().ok()?;
            Some((tid, name, nice))
        })
        .collect()
}
