//! Decoding a stream over loopback HTTP: qore against the parse floor, on two wires.
//!
//! Cases: {openai (Chat Completions), anthropic (Messages)} x {text, tool} x {per_event,
//! per_event_backlog, fixed64k} x {200k, 20k} deltas. Tool cases stream one call's arguments
//! in fragments (`tool_calls[].function.arguments` / `input_json_delta`).
//! `per_event_backlog` is the per-event server with a client that pauses 40 ms (untimed)
//! after the first event: the server runs ahead until the socket buffers are full, so the
//! client starts on a backlog of one-event HTTP chunks (a few thousand events; once it has
//! caught up, the case is `per_event` again, so the effect is largest at 20k). Each iteration
//! is one HTTP request to a `qore_testkit::ReplayServer` replaying the same SSE body forever.
//! - `qore`: `Client::send` + `ResponseStream::finish` (frames, decodes and folds the message).
//! - `floor`: reqwest `bytes_stream()` + memchr line splitter + `serde_json::from_slice` into
//!   a minimal borrowed struct (see `chat_stream/floor.rs`).
//!
//! The client runs on a current-thread runtime on the main thread (hyper's connection task
//! included), the server on a one-worker runtime of its own: on two cores each has a core.
//!
//! Before timing, each path is checked once (complete text / arguments) and its peak memory
//! printed (`peak_mem ...`). After criterion, a table of medians of the same run's iterations:
//! deltas/s and qore/floor ratios (wall and client CPU). `QORE_BENCH_RATIOS=1` skips
//! criterion and instead runs each case `QORE_BENCH_K` (default 7) times per path,
//! alternating, and prints the same table, then a paired one (each round's floor wall ÷
//! qore wall: quartiles, how often qore won, client wake-ups and user time per delta).
//! `QORE_BENCH_CASES=anthropic/text` keeps the cases whose name contains it; `QORE_BENCH_ONLY=
//! qore|floor` runs one path (for a profiler); `QORE_BENCH_SAMPLES=1` prints every run.
//!
//! Reading the per-event numbers: with one event per HTTP chunk, most of both sides' time
//! per event is the kernel's loopback TCP work (a send per event on the server; reads,
//! ACKs and socket-lock backlog on the client), shared by any reqwest-based client. How
//! that work splits between the two threads changes from run to run, so single wall ratios
//! scatter widely; the paired quartiles and the user time per delta show what the client's
//! own code costs.

#[path = "chat_stream/alloc.rs"]
mod alloc;
#[path = "chat_stream/check.rs"]
mod check;
#[path = "chat_stream/decode_only.rs"]
mod decode_only;
#[path = "chat_stream/floor.rs"]
mod floor;
#[path = "chat_stream/report.rs"]
mod report;
#[path = "chat_stream/threads.rs"]
mod threads;
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
use qore_core::StreamOutcome;
use qore_testkit::{bench::BenchRun, ReplayServer, Reply, Slicing};
use tokio::runtime::Runtime;

use check::{check_floor, check_qore};
use report::{Path, Records, Sample};
use threads::{cpu_ns, schedstat, this_thread_schedstat, user_ticks};
use workload::{Kind, Wire, Workload};

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

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
        let server_threads = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&server_threads);
        let server_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .on_thread_start(move || {
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
        let mut built: BTreeMap<(Wire, &str, usize), Arc<Workload>> = BTreeMap::new();
        for (wire, kind) in [Wire::OpenAiChat, Wire::Anthropic]
            .into_iter()
            .flat_map(|w| [(w, Kind::Text), (w, Kind::Tool)])
        {
            for (framing, slicing) in [
                ("per_event", Slicing::PerSseFrame),
                ("per_event_backlog", Slicing::PerSseFrame),
                ("fixed64k", Slicing::Fixed(65536)),
            ] {
                for n in [200_000, 20_000] {
                    let name = format!("{}/{}/{framing}/{}k", wire.name(), kind.name(), n / 1000);
                    if filter.is_some_and(|f| !name.contains(f)) {
                        continue;
                    }
                    let workload = Arc::clone(
                        built
                            .entry((wire, kind.name(), n))
                            .or_insert_with(|| Arc::new(workload::build(wire, kind, n))),
                    );
                    let reply = Reply::sse(workload.body.clone()).with_slicing(slicing.clone());
                    let server = server_rt
                        .block_on(ReplayServer::start_repeating(reply))
                        .expect("replay server");
                    let base = format!("{}{}", server.url(), wire.base_path());
                    let client = Client::new(
                        protocols::by_name(wire.protocol()).unwrap(),
                        ClientConfig::new(base.clone()),
                    )
                    .expect("qore client");
                    let url = client.chat_url(wire.model(), true);
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

    /// Each case's name and number of deltas, for the tables.
    fn case_names(&self) -> Vec<(String, usize)> {
        self.cases
            .iter()
            .map(|c| (c.name.clone(), c.workload.n))
            .collect()
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
async fn run_qore(case: &Case) -> (StreamOutcome, Duration) {
    let mut stream = case.client.send(
        &case.url,
        case.workload.wire.request().to_vec(),
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
    floor::run(&case.http, &case.url, case.workload.wire, case.pause)
        .await
        .unwrap_or_else(|e| panic!("{}: floor failed: {e}", case.name))
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
            "peak_mem {} {} {} {}k qore={:.2} floor={:.2} (MiB; body {:.1} MiB)",
            w.wire.name(),
            w.kind.name(),
            case.framing,
            w.n / 1000,
            mib(peaks[0]),
            mib(peaks[1]),
            mib(w.body.len()),
        );
    }
}

/// `QORE_BENCH_RATIOS=1`: K alternating runs per case and path, outside criterion.
fn ratio_mode(env: &Env, k: usize) {
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
    let names = env.case_names();
    report::print_table(&names, &records, &format!("ratio mode, K={k}"));
    report::print_paired(&names, &records);
    println!();
    // The in-memory breakdown, once per workload.
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
    let run = BenchRun::from_env(7);
    let benchmarking = run.benchmarking;
    let env = Env::new(run.filter.as_deref());
    if benchmarking {
        check_and_peak(&env);
    }
    if run.ratios {
        ratio_mode(&env, run.k);
    } else {
        let mut c = Criterion::default().configure_from_args();
        let records = criterion_benches(&mut c, &env);
        c.final_summary();
        if benchmarking {
            report::print_table(
                &env.case_names(),
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
