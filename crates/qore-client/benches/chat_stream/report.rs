//! The bench's measurements and the tables printed from them.

use std::collections::BTreeMap;
use std::time::Duration;

use qore_testkit::bench::median;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Path {
    Qore,
    Floor,
}

impl Path {
    pub fn name(self) -> &'static str {
        match self {
            Path::Qore => "qore",
            Path::Floor => "floor",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub wall: Duration,
    /// CPU time of the client thread (the bench's main thread).
    pub client_cpu: Duration,
    /// CPU time of the replay server's threads.
    pub server_cpu: Duration,
    /// Times the client thread was put on a CPU: about one per delta when it sleeps
    /// between one-event chunks, far fewer when it reads a backlog.
    pub client_runs: u64,
    /// User-mode clock ticks (10 ms) of the client thread.
    pub client_user_ticks: u64,
}

pub type Records = BTreeMap<(String, Path), Vec<Sample>>;

/// The cases measured on both paths: name, deltas, qore's samples, the floor's.
fn both_paths<'a>(
    cases: &'a [(String, usize)],
    records: &'a Records,
) -> impl Iterator<Item = (&'a str, usize, &'a [Sample], &'a [Sample])> {
    cases.iter().filter_map(|(name, n)| {
        let q = records.get(&(name.clone(), Path::Qore))?;
        let f = records.get(&(name.clone(), Path::Floor))?;
        Some((name.as_str(), *n, q.as_slice(), f.as_slice()))
    })
}

pub fn print_table(cases: &[(String, usize)], records: &Records, source: &str) {
    println!();
    println!(
        "ratios ({source}); medians; ratio = qore deltas/s / floor deltas/s (>1: qore faster)"
    );
    println!(
        "{:<38} {:>5} {:>11} {:>11} {:>10} {:>11} {:>11} {:>10} {:>10} {:>10}",
        "case",
        "runs",
        "qore Md/s",
        "floor Md/s",
        "ratio",
        "qore ns/d",
        "floor ns/d",
        "ratio",
        "srv cpu/",
        "srv cpu/"
    );
    println!(
        "{:<38} {:>5} {:>11} {:>11} {:>10} {:>11} {:>11} {:>10} {:>10} {:>10}",
        "",
        "",
        "(wall)",
        "(wall)",
        "(wall)",
        "(cli cpu)",
        "(cli cpu)",
        "(cli cpu)",
        "wall q",
        "wall f"
    );
    for (name, n, q, f) in both_paths(cases, records) {
        let n = n as f64;
        let med = |s: &[Sample], pick: fn(&Sample) -> Duration| {
            median(s.iter().map(pick).collect()).as_secs_f64()
        };
        let (qw, fw) = (med(q, |s| s.wall), med(f, |s| s.wall));
        let (qc, fc) = (med(q, |s| s.client_cpu), med(f, |s| s.client_cpu));
        let (qs, fs) = (med(q, |s| s.server_cpu), med(f, |s| s.server_cpu));
        println!(
            "{:<38} {:>5} {:>11.3} {:>11.3} {:>9.2}x {:>11.0} {:>11.0} {:>9.2}x {:>10.2} {:>10.2}",
            name,
            q.len().min(f.len()),
            n / qw / 1e6,
            n / fw / 1e6,
            fw / qw,
            qc / n * 1e9,
            fc / n * 1e9,
            fc / qc,
            qs / qw,
            fs / fw,
        );
    }
}

/// The ratio mode's second table: each round's floor run and qore run, back to back, give
/// one paired wall ratio; the spread of those says how far one run's ratio can be trusted.
/// `wakes/d`: client thread runs per delta (median), ~1 when it sleeps between events.
pub fn print_paired(cases: &[(String, usize)], records: &Records) {
    println!();
    println!("paired wall ratios (floor wall / qore wall of the same round; >1: qore faster)");
    println!(
        "{:<38} {:>5} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8}",
        "case",
        "pairs",
        "p25",
        "median",
        "p75",
        "qore won",
        "wakes/d q",
        "wakes/d f",
        "user/d q",
        "user/d f",
        "ratio"
    );
    for (name, n, q, f) in both_paths(cases, records) {
        let mut ratios: Vec<f64> = q
            .iter()
            .zip(f)
            .map(|(q, f)| f.wall.as_secs_f64() / q.wall.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let at = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
        let won = ratios.iter().filter(|&&r| r >= 1.0).count();
        let n = n as f64;
        let wakes = |s: &[Sample]| {
            let mut w: Vec<f64> = s.iter().map(|s| s.client_runs as f64 / n).collect();
            w.sort_by(f64::total_cmp);
            w[w.len() / 2]
        };
        // Summed user time over all runs (ticks are too coarse for one run), ns per delta.
        let user = |s: &[Sample]| {
            let ticks: u64 = s.iter().map(|s| s.client_user_ticks).sum();
            ticks as f64 * 1e7 / (n * s.len() as f64)
        };
        let (uq, uf) = (user(q), user(f));
        println!(
            "{:<38} {:>5} {:>7.2}x {:>7.2}x {:>7.2}x {:>5}/{:<3} {:>10.2} {:>10.2} {:>9.0} {:>9.0} {:>7.2}x",
            name,
            ratios.len(),
            at(0.25),
            at(0.5),
            at(0.75),
            won,
            ratios.len(),
            wakes(q),
            wakes(f),
            uq,
            uf,
            uf / uq,
        );
    }
}
