//! Decoding a Chat Completions stream over loopback HTTP: qore against the parse floor.
//!
//! Cases: {text, tool} x {per_event, per_event_backlog, fixed64k} x {200k, 20k} deltas.
//! `per_event_backlog` is the per-event server with a client that pauses 40 ms (untimed)
//! after the first event: the server runs ahead, so the client reads a backlog of one-event
//! HTTP chunks and its own per-chunk cost is what is timed, not the server's write-and-wake
//! cost (which bounds `per_event` on two cores). Each iteration is one
//! HTTP request to a `qore_testkit::ReplayServer` that replays the same SSE body forever.
//! - `qore`: `Client::send` + `ResponseStream::finish` (frames, decodes and folds the message).
//! - `floor`: reqwest `bytes_stream()` + memchr line splitter + `serde_json::from_slice` into
//!   a minimal borrowed struct (see `chat_stream/floor.rs`).
//!
//! The client runs on a current-thread runtime on the bench's main thread (hyper's connection
//! task included), the server on a runtime of its own with one worker thread, so on two cores
//! each side has a core and the client thread's CPU time is the client's whole cost.
//!
//! Before timing, each path is checked once (complete text / arguments) and its peak memory
//! printed (`peak_mem ...`). After criterion, a table of medians of the same run's iterations:
//! deltas/s and qore/floor ratios (wall and client CPU). `QORE_BENCH_RATIOS=1` skips
//! criterion and instead runs each case `QORE_BENCH_K` (default 7) times per path,
//! alternating, and prints the same table. `QORE_BENCH_CASES=text/per_event` keeps only the
//! cases whose name contains that text.

#[path = "chat_stream/alloc.rs"]
mod alloc;
#[path = "chat_stream/decode_only.rs"]
mod decode_only;
#[path = "chat_stream/floor.rs"]
mod floor;
#[path = "chat_stream/workload.rs"]
mod workload;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use qore_client::{protocols, CancellationToken, Client, ClientConfig};
use qore_core::{ContentBlock, StopReason, TurnOutcome};
use qore_testkit::{ReplayServer, Reply, Slicing};
use tokio::runtime::Runtime;

use workload::{Kind, Workload};

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Path {
    Qore,
    Floor,
}

impl Path {
    fn name(self) -> &'static str {
        match self {
            Path::Qore => "qore",
            Path::Floor => "floor",
        }
    }
}

struct Case {
    /// `text/per_event/200k`.
    name: String,
    framing: &'static str,
    /// `per_event_backlog`: after the first event the client pauses this long (not timed),
    /// so the server runs ahead and the pipe holds a backlog of per-event chunks.
    pause: Option<Duration>,
    workload: Arc<Workload>,
    url: String,
    client: Client,
    http: reqwest::Client,
    server: ReplayServer,
}

/// CPU time used so far by one thread (nanoseconds on CPU) and how many times it has been
/// scheduled onto a CPU, from `/proc/<...>/schedstat`.
fn schedstat(path: &str) -> (u64, u64) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut fields = text.split_whitespace().map(|f| f.parse().unwrap_or(0));
    let cpu = fields.next().unwrap_or(0);
    let runs = fields.nth(1).unwrap_or(0);
    (cpu, runs)
}

/// User-mode CPU time of the calling thread so far, from `/proc/thread-self/stat`
/// (`utime`, in clock ticks of 10 ms: summed over many runs only).
fn user_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // The fields after the `(comm)`: state is field 3, utime field 14.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(11)?.parse().ok())
        .unwrap_or(0)
}

fn cpu_ns(path: &str) -> u64 {
    schedstat(path).0
}

/// Pin the calling thread to one CPU (`QORE_BENCH_PIN=1`): the client on CPU 0, the
/// server's threads on CPU 1, so the scheduler never puts both on one core (which turns a
/// per-event stream into large batches for whichever run it happens to) or migrates them.
fn pin_to(cpu: usize) {
    if !std::env::var_os("QORE_BENCH_PIN").is_some_and(|v| v == "1") {
        return;
    }
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it, and
    // sched_setaffinity(0, ..) only reads it.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        eprintln!("note: could not pin a thread to CPU {cpu}");
    }
}

/// `/proc/self/task/<tid>/schedstat` of the calling thread.
fn this_thread_schedstat() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    let tid = link.file_name()?.to_str()?.to_owned();
    Some(format!("/proc/self/task/{tid}/schedstat"))
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    wall: Duration,
    /// CPU time of the client thread (the bench's main thread).
    client_cpu: Duration,
    /// CPU time of the replay server's threads.
    server_cpu: Duration,
    /// Times the client thread was put on a CPU: about one per delta when it sleeps
    /// between one-event chunks, far fewer when it reads a backlog.
    client_runs: u64,
    /// User-mode clock ticks (10 ms) of the client thread.
    client_user_ticks: u64,
}

struct Env {
    // Field order is drop order: servers go before their runtime.
    cases: Vec<Case>,
    client_rt: Runtime,
    _server_rt: Runtime,
    server_threads: Arc<Mutex<Vec<String>>>,
    client_thread: String,
}

impl Env {
    fn new(filter: Option<&str>) -> Env {
        pin_to(0);
        let server_threads = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&server_threads);
        let server_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .on_thread_start(move || {
                pin_to(1);
                if let Some(path) = this_thread_schedstat() {
                    recorded.lock().unwrap().push(path);
                }
            })
            .build()
            .expect("server runtime");
        let client_rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("client runtime");
        let mut cases = Vec::new();
        // One body per workload, shared by both framings.
        let mut built: BTreeMap<(&str, usize), Arc<Workload>> = BTreeMap::new();
        for kind in [Kind::Text, Kind::Tool] {
            for (framing, slicing) in [
                ("per_event", Slicing::PerSseFrame),
                ("per_event_backlog", Slicing::PerSseFrame),
                ("fixed64k", Slicing::Fixed(65536)),
            ] {
                for n in [200_000, 20_000] {
                    let name = format!("{}/{framing}/{}k", kind.name(), n / 1000);
                    if filter.is_some_and(|f| !name.contains(f)) {
                        continue;
                    }
                    let workload = Arc::clone(
                        built
                            .entry((kind.name(), n))
                            .or_insert_with(|| Arc::new(workload::build(kind, n))),
                    );
                    let reply = Reply::sse(workload.body.clone()).with_slicing(slicing.clone());
                    let server = server_rt
                        .block_on(ReplayServer::start_repeating(reply))
                        .expect("replay server");
                    let base = format!("{}/v1", server.url());
                    let client = Client::new(
                        protocols::by_name("openai-chat").unwrap(),
                        ClientConfig::new(base.clone()),
                    )
                    .expect("qore client");
                    let url = client.chat_url("gpt-4o", true);
                    let http = reqwest::Client::builder()
                        .tcp_nodelay(true)
                        .build()
                        .expect("reqwest client");
                    cases.push(Case {
                        name,
                        framing,
                        pause: (framing == "per_event_backlog").then(|| Duration::from_millis(40)),
                        workload,
                        url,
                        client,
                        http,
                        server,
                    });
                }
            }
        }
        Env {
            cases,
            client_rt,
            _server_rt: server_rt,
            server_threads,
            client_thread: this_thread_schedstat().unwrap_or_default(),
        }
    }

    fn server_cpu_ns(&self) -> u64 {
        self.server_threads
            .lock()
            .unwrap()
            .iter()
            .map(|p| cpu_ns(p))
            .sum()
    }

    /// One request on `path`, timed (the answer is dropped inside the timing).
    async fn timed(&self, case: &Case, path: Path) -> Sample {
        let (client0, runs0) = schedstat(&self.client_thread);
        let user0 = user_ticks();
        let server0 = self.server_cpu_ns();
        let start = Instant::now();
        let paused = match path {
            Path::Qore => {
                let (outcome, paused) = run_qore(case).await;
                drop(black_box(outcome));
                paused
            }
            Path::Floor => {
                let (outcome, paused) = run_floor(case).await;
                drop(black_box(outcome));
                paused
            }
        };
        let wall = start.elapsed().saturating_sub(paused);
        let (client1, runs1) = schedstat(&self.client_thread);
        Sample {
            wall,
            client_cpu: Duration::from_nanos(client1 - client0),
            server_cpu: Duration::from_nanos(self.server_cpu_ns() - server0),
            client_runs: runs1 - runs0,
            client_user_ticks: user_ticks() - user0,
        }
    }
}

/// One request through qore, and how long it paused (see [`Case::pause`]).
async fn run_qore(case: &Case) -> (TurnOutcome, Duration) {
    let mut stream = case.client.send(
        &case.url,
        workload::REQUEST.to_vec(),
        true,
        CancellationToken::new(),
    );
    let mut paused = Duration::ZERO;
    if let Some(pause) = case.pause {
        // The answer has started (its first event is folded already); let the server run
        // ahead.
        let _ = futures_util::StreamExt::next(&mut stream).await;
        let at = Instant::now();
        tokio::time::sleep(pause).await;
        paused = at.elapsed();
    }
    (stream.finish().await, paused)
}

async fn run_floor(case: &Case) -> (floor::Outcome, Duration) {
    floor::run(&case.http, &case.url, workload::REQUEST, case.pause)
        .await
        .unwrap_or_else(|e| panic!("{}: floor failed: {e}", case.name))
}

fn check_qore(w: &Workload, outcome: &TurnOutcome) -> Result<(), String> {
    let TurnOutcome::Finished {
        message,
        stop_reason,
        usage,
    } = outcome
    else {
        return Err(format!("not finished: {outcome:?}"));
    };
    if usage.output_tokens != Some(w.n as u64) {
        return Err(format!("usage {usage:?}"));
    }
    match (w.kind, message.blocks.as_slice()) {
        (Kind::Text, [ContentBlock::Text { text, .. }]) => {
            if *text != w.expected {
                return Err(format!(
                    "text of {} bytes, wanted {}",
                    text.len(),
                    w.expected.len()
                ));
            }
            if *stop_reason != Some(StopReason::EndTurn) {
                return Err(format!("stop {stop_reason:?}"));
            }
        }
        (
            Kind::Tool,
            [ContentBlock::ToolUse {
                id,
                name,
                input,
                raw_input: None,
                ..
            }],
        ) => {
            let want: serde_json::Value = serde_json::from_str(&w.expected).unwrap();
            if input != &want || id != workload::TOOL_ID || name != workload::TOOL_NAME {
                return Err(format!("tool call {id} {name}: wrong arguments"));
            }
            if *stop_reason != Some(StopReason::ToolUse) {
                return Err(format!("stop {stop_reason:?}"));
            }
        }
        (_, blocks) => return Err(format!("{} unexpected blocks", blocks.len())),
    }
    Ok(())
}

fn check_floor(w: &Workload, out: &floor::Outcome) -> Result<(), String> {
    let folded = match w.kind {
        Kind::Text => &out.text,
        Kind::Tool => &out.args,
    };
    if out.deltas != w.n || *folded != w.expected || !out.done || out.finish_reason.is_none() {
        return Err(format!(
            "{} deltas, {} bytes, done {}",
            out.deltas,
            folded.len(),
            out.done
        ));
    }
    if w.kind == Kind::Tool && out.input.is_none() {
        return Err("arguments not parsed".into());
    }
    Ok(())
}

/// Check both paths once, then measure each one's peak memory on a warm connection.
fn check_and_peak(env: &Env) {
    for case in &env.cases {
        let w = &case.workload;
        let mut peaks = [0usize; 2];
        for (i, path) in [Path::Qore, Path::Floor].into_iter().enumerate() {
            // The first run checks the answer and warms the connection up.
            env.client_rt.block_on(async {
                let result = match path {
                    Path::Qore => check_qore(w, &run_qore(case).await.0),
                    Path::Floor => check_floor(w, &run_floor(case).await.0),
                };
                if let Err(e) = result {
                    panic!("{} {}: wrong answer: {e}", case.name, path.name());
                }
            });
            alloc::start();
            env.client_rt.block_on(async {
                match path {
                    Path::Qore => drop(run_qore(case).await),
                    Path::Floor => drop(run_floor(case).await),
                }
            });
            peaks[i] = alloc::stop();
        }
        let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
        println!(
            "peak_mem {} {} {}k qore={:.2} floor={:.2} (MiB; body {:.1} MiB)",
            w.kind.name(),
            case.framing,
            w.n / 1000,
            mib(peaks[0]),
            mib(peaks[1]),
            mib(w.body.len()),
        );
    }
}

type Records = BTreeMap<(String, Path), Vec<Sample>>;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn print_table(env: &Env, records: &Records, source: &str) {
    println!();
    println!(
        "ratios ({source}); medians; ratio = qore deltas/s / floor deltas/s (>1: qore faster)"
    );
    println!(
        "{:<22} {:>5} {:>11} {:>11} {:>10} {:>11} {:>11} {:>10} {:>10} {:>10}",
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
        "{:<22} {:>5} {:>11} {:>11} {:>10} {:>11} {:>11} {:>10} {:>10} {:>10}",
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
    for case in &env.cases {
        let (Some(q), Some(f)) = (
            records.get(&(case.name.clone(), Path::Qore)),
            records.get(&(case.name.clone(), Path::Floor)),
        ) else {
            continue;
        };
        let n = case.workload.n as f64;
        let med = |s: &[Sample], pick: fn(&Sample) -> Duration| {
            median(s.iter().map(pick).collect()).as_secs_f64()
        };
        let (qw, fw) = (med(q, |s| s.wall), med(f, |s| s.wall));
        let (qc, fc) = (med(q, |s| s.client_cpu), med(f, |s| s.client_cpu));
        let (qs, fs) = (med(q, |s| s.server_cpu), med(f, |s| s.server_cpu));
        println!(
            "{:<22} {:>5} {:>11.3} {:>11.3} {:>9.2}x {:>11.0} {:>11.0} {:>9.2}x {:>10.2} {:>10.2}",
            case.name,
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
fn print_paired(env: &Env, records: &Records) {
    println!();
    println!("paired wall ratios (floor wall / qore wall of the same round; >1: qore faster)");
    println!(
        "{:<22} {:>5} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8}",
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
    for case in &env.cases {
        let (Some(q), Some(f)) = (
            records.get(&(case.name.clone(), Path::Qore)),
            records.get(&(case.name.clone(), Path::Floor)),
        ) else {
            continue;
        };
        let mut ratios: Vec<f64> = q
            .iter()
            .zip(f)
            .map(|(q, f)| f.wall.as_secs_f64() / q.wall.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let at = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
        let won = ratios.iter().filter(|&&r| r >= 1.0).count();
        let n = case.workload.n as f64;
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
            "{:<22} {:>5} {:>7.2}x {:>7.2}x {:>7.2}x {:>5}/{:<3} {:>10.2} {:>10.2} {:>9.0} {:>9.0} {:>7.2}x",
            case.name,
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

/// `QORE_BENCH_RATIOS=1`: K alternating runs per case and path, outside criterion.
fn ratio_mode(env: &Env) {
    let k: usize = std::env::var("QORE_BENCH_K")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    // `QORE_BENCH_ONLY=qore|floor`: run one path only (for profiling it).
    let only = std::env::var("QORE_BENCH_ONLY").ok();
    let mut records = Records::new();
    for case in &env.cases {
        for round in 0..k {
            let order = if round % 2 == 0 {
                [Path::Qore, Path::Floor]
            } else {
                [Path::Floor, Path::Qore]
            };
            for path in order {
                if only.as_deref().is_some_and(|o| o != path.name()) {
                    continue;
                }
                let sample = env.client_rt.block_on(env.timed(case, path));
                if std::env::var_os("QORE_BENCH_SAMPLES").is_some() {
                    println!(
                        "sample {} {} wall_ms={:.2} client_cpu_ms={:.2} server_cpu_ms={:.2} client_runs={}",
                        case.name,
                        path.name(),
                        sample.wall.as_secs_f64() * 1e3,
                        sample.client_cpu.as_secs_f64() * 1e3,
                        sample.server_cpu.as_secs_f64() * 1e3,
                        sample.client_runs
                    );
                }
                records
                    .entry((case.name.clone(), path))
                    .or_default()
                    .push(sample);
            }
        }
    }
    print_table(env, &records, &format!("ratio mode, K={k}"));
    print_paired(env, &records);
    println!();
    for case in env.cases.iter().filter(|c| c.framing == "fixed64k") {
        let name = case.name.replace("/fixed64k", "");
        decode_only::breakdown(&name, &case.workload, k.max(5));
    }
}

fn criterion_benches(c: &mut Criterion, env: &Env) -> Records {
    let records: Rc<RefCell<Records>> = Rc::default();
    for case in &env.cases {
        let n = case.workload.n;
        let mut group = c.benchmark_group(format!("chat_stream/{}", case.name));
        group
            .throughput(Throughput::Elements(n as u64))
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(if n >= 100_000 { 8 } else { 3 }));
        for path in [Path::Qore, Path::Floor] {
            let records = Rc::clone(&records);
            group.bench_function(path.name(), |b| {
                b.to_async(&env.client_rt).iter_custom(|iters| {
                    let records = Rc::clone(&records);
                    async move {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let sample = env.timed(case, path).await;
                            total += sample.wall;
                            records
                                .borrow_mut()
                                .entry((case.name.clone(), path))
                                .or_default()
                                .push(sample);
                        }
                        total
                    }
                })
            });
        }
        group.finish();
    }
    records.take()
}

fn main() {
    // `QORE_BENCH_STAGE=fold|floor|framer|decode[:text|tool]`: one in-memory pass of that
    // stage over a 200k-delta body and exit (for instruction counts under callgrind).
    if let Ok(spec) = std::env::var("QORE_BENCH_STAGE") {
        decode_only::one_stage(&spec);
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` passes --bench; `cargo test --benches` does not (criterion's test mode).
    let benchmarking =
        args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list");
    let filter = std::env::var("QORE_BENCH_CASES").ok();
    let env = Env::new(filter.as_deref());
    if benchmarking {
        check_and_peak(&env);
    }
    if std::env::var_os("QORE_BENCH_RATIOS").is_some_and(|v| v == "1") {
        ratio_mode(&env);
    } else {
        let mut c = Criterion::default().configure_from_args();
        let records = criterion_benches(&mut c, &env);
        c.final_summary();
        if benchmarking {
            print_table(
                &env,
                &records,
                "criterion run, all iterations incl. warm-up",
            );
        }
    }
    let hung_up: usize = env.cases.iter().map(|c| c.server.disconnects()).sum();
    if hung_up > 0 {
        println!("note: {hung_up} responses were cut short by the client");
    }
}
