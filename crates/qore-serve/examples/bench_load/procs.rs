//! The watched processes' memory and CPU, read from `/proc`: summed VmRSS/VmHWM, utime+stime
//! ticks, and a sampler of the peak VmRSS.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The sum of a `/proc/PID/status` field (kB) over `pids`; None without pids or readings.
pub fn rss_kb(pids: &[u32], key: &str) -> Option<u64> {
    let mut sum = None;
    for pid in pids {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let kb = status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        if let Some(kb) = kb {
            sum = Some(sum.unwrap_or(0) + kb);
        }
    }
    sum
}

/// USER_HZ: the unit of utime/stime in `/proc/PID/stat` (100 on Linux's usual builds).
pub const CLK_TCK: f64 = 100.0;

/// utime + stime of `pids` in ticks (fields 14 and 15 of `/proc/PID/stat`).
pub fn cpu_ticks(pids: &[u32]) -> Option<u64> {
    let mut sum = None;
    for pid in pids {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command (which may hold spaces) start at field 3.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = f
            .get(11)
            .zip(f.get(12))
            .and_then(|(u, s)| Some(u.parse::<u64>().ok()? + s.parse::<u64>().ok()?));
        if let Some(t) = ticks {
            sum = Some(sum.unwrap_or(0) + t);
        }
    }
    sum
}

/// The highest summed VmRSS seen every 50 ms until `stop`.
pub async fn sample_peak(pids: Vec<u32>, stop: Arc<AtomicBool>) -> Option<u64> {
    let mut peak = None;
    while !stop.load(Ordering::Relaxed) && !pids.is_empty() {
        peak = peak.max(rss_kb(&pids, "VmRSS"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    peak
}
