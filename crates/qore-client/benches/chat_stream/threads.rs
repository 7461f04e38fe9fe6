//! Per-thread CPU accounting from `/proc` (Linux): what the ratio tables split the time by.

/// CPU time used so far by one thread (nanoseconds on CPU) and how many times it has been
/// scheduled onto a CPU, from `/proc/<...>/schedstat`.
pub fn schedstat(path: &str) -> (u64, u64) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut fields = text.split_whitespace().map(|f| f.parse().unwrap_or(0));
    let cpu = fields.next().unwrap_or(0);
    let runs = fields.nth(1).unwrap_or(0);
    (cpu, runs)
}

/// User-mode CPU time of the calling thread so far, from `/proc/thread-self/stat`
/// (`utime`, in clock ticks of 10 ms: summed over many runs only).
pub fn user_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // The fields after the `(comm)`: state is field 3, utime field 14.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(11)?.parse().ok())
        .unwrap_or(0)
}

pub fn cpu_ns(path: &str) -> u64 {
    schedstat(path).0
}

/// `/proc/self/task/<tid>/schedstat` of the calling thread.
pub fn this_thread_schedstat() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    let tid = link.file_name()?.to_str()?.to_owned();
    Some(format!("/proc/self/task/{tid}/schedstat"))
}
