//! Tool-loop overhead per round, as a ratio to one bare request over the same loopback.
//!
//! The model is a `qore_testkit::ReplayServer` over real loopback HTTP speaking each wire's
//! streamed shape (`tool_loop/workload.rs`: the Chat Completions bodies, the two instant
//! tools, the start history; `tool_loop/wires.rs`: the same turns on the other wires).
//! Cases: `calls1` (one parallel-safe `lookup` per round) and `calls4` (two `lookup`, two
//! `record`: two run at once, two one at a time, all allowed by `Auto` approval) on Chat
//! Completions, and `calls4/<wire>` on every other wire (each encodes its requests through
//! its own `EncodeCache` path). Per case:
//! - `bare`: one request as a round sends it (the start history, the tools on offer) through
//!   `Client::stream`, every event taken from the stream, then `finish`; the server answers
//!   with the body of round 1 (a tool-call turn), the same size as every round's body;
//! - `loop R` (R = 1, 10, 50): `ToolLoopRunner::run` from the start history (a fresh copy per
//!   run, made outside the timing), R tool-call turns then the final answer, served in order
//!   by a cycling server; R + 1 requests.
//!
//! Derived, from medians of the same run: loop time per round `loop(R) / R`, per request
//! `loop(R) / (R + 1)`, and overhead per round `(loop(R) - (R + 1) * bare) / R`, each as a
//! ratio to `bare`; by wall time and by client CPU time (the client runs on a current-thread
//! runtime on the bench's main thread, hyper's connection task and the tools included, so that
//! thread's CPU time is the client's whole cost; the server has a runtime of its own). If the
//! overhead per round is flat in R, the loop costs a constant amount per round; if it grows,
//! something is repeated over the whole history each round. In ratio mode a breakdown follows
//! for the largest R: what encoding the request from history costs at round 0 and round R (in
//! memory, `Client::encode`), its growth per round summed over a run, the request bytes, the
//! last request's encoding split into building the JSON value and serializing it, the last
//! request sent as a bare request over HTTP against round 0's (what a bigger request costs in
//! all), and one round's `run_calls` alone; then what the loop encodes per round: the last
//! request through an `EncodeCache` that holds round R - 1's messages (`Client::
//! encode_cached`), without and with the loop's vouch for them (`EncodeCache::
//! vouch_unchanged`), and through one that holds them all.
//!
//! Before timing, every case runs once and is checked: the loop finishes after R rounds with
//! the final text, every call answered without error, R + 1 requests, the approver never asked.
//! There are no timing assertions.
//!
//! Run: `cargo bench -p qore-client --bench tool_loop` (criterion groups `tool_loop/<case>`,
//! then a table of the same run's medians). `QORE_BENCH_RATIOS=1` skips criterion: each
//! variant runs `QORE_BENCH_K` (default 21) times, in rotating order (`bare` as a batch of 8
//! requests per sample), then the table and the breakdown. `QORE_BENCH_CASES=calls4` keeps the
//! cases whose name contains that text; `QORE_BENCH_ROUNDS=1,10,50` sets the values of R.

#[path = "../tests/tool_loop/support.rs"]
mod support;
#[path = "tool_loop/wires.rs"]
mod wires;
#[path = "tool_loop/workload.rs"]
mod workload;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use futures_util::StreamExt as _;
use qore_client::tool_loop::{
    run_calls, ApprovalMode, ApprovalPolicy, Approver, LoopConfig, ToolCall, ToolLoopRunner,
    ToolRegistry, TurnOutcome,
};
use qore_client::{
    protocols, CancellationToken, ChatRequest, Client, ClientConfig, EncodeCache, RequestOptions,
    RetryPolicy,
};
use qore_core::{ContentBlock, History, Role, StopReason, StreamOutcome};
use qore_testkit::{ReplayServer, Reply};
use tokio::runtime::Runtime;

use qore_testkit::bench::{median, us, BenchRun};
use support::Wire;
use workload::CountingApprover;

/// Requests per `bare` sample in ratio mode (one per iteration under criterion).
const BARE_BATCH: u32 = 8;

/// The one place the bench builds the runner (fields the loop gains go here).
fn runner<'a>(
    client: &'a Client,
    registry: &'a mut ToolRegistry,
    policy: &'a mut ApprovalPolicy,
    approver: &'a dyn Approver,
    rounds: u32,
) -> ToolLoopRunner<'a> {
    ToolLoopRunner {
        client,
        registry,
        policy,
        approver,
        config: LoopConfig {
            max_rounds: rounds,
            ..LoopConfig::default()
        },
    }
}

/// CPU time of the calling thread so far.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A server and the client that talks to it.
struct Target {
    server: ReplayServer,
    client: Client,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Variant {
    Bare,
    Loop(u32),
}

impl Variant {
    fn name(self) -> String {
        match self {
            Variant::Bare => "bare".into(),
            Variant::Loop(r) => format!("loop_r{r}"),
        }
    }
}

struct Case {
    /// `calls1`, `calls4` (Chat Completions), `calls4/<wire>`.
    name: String,
    wire: Wire,
    calls: usize,
    bare: Target,
    loops: Vec<(u32, Target)>,
    /// The history at the end of the checked run of the largest R.
    finished: Option<History>,
}

impl Case {
    fn variants(&self) -> Vec<Variant> {
        let mut v = vec![Variant::Bare];
        v.extend(self.loops.iter().map(|(r, _)| Variant::Loop(*r)));
        v
    }

    fn target(&self, variant: Variant) -> Option<&Target> {
        match variant {
            Variant::Bare => Some(&self.bare),
            Variant::Loop(r) => self.loops.iter().find(|(n, _)| *n == r).map(|(_, t)| t),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Per unit: one request for `bare`, one whole run for a loop.
    wall: Duration,
    cpu: Duration,
}

struct Env {
    // Field order is drop order: servers go before their runtime.
    cases: Vec<Case>,
    /// A run refreshes it before each round (`&mut`); runs never overlap, so the lock is
    /// never waited for.
    registry: tokio::sync::Mutex<ToolRegistry>,
    approver: CountingApprover,
    options: RequestOptions,
    start: History,
    client_rt: Runtime,
    _server_rt: Runtime,
}

fn client_for(wire: Wire, server: &ReplayServer) -> Client {
    let protocol = protocols::by_name(wire.name()).expect("the wire is registered");
    let config = ClientConfig {
        // A failure must show, not hide behind a backoff.
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
        ..ClientConfig::new(match wire {
            // As OpenAI documents its base URL; the other wires' paths name their version.
            Wire::OpenAiChat => format!("{}/v1", server.url()),
            _ => server.url(),
        })
    };
    Client::new(protocol, config).expect("qore client")
}

impl Env {
    fn new(filter: Option<&str>, rounds: &[u32]) -> Env {
        let server_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("server runtime");
        let client_rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("client runtime");
        let mut registry = ToolRegistry::new();
        registry
            .extend(workload::tools())
            .expect("the bench tools register");
        let start = |wire: Wire, replies: Vec<Reply>| {
            let server = server_rt
                .block_on(ReplayServer::start_cycling(replies))
                .expect("replay server");
            let client = client_for(wire, &server);
            Target { server, client }
        };
        let mut cases = Vec::new();
        // Chat Completions with one and four calls a round; every other wire with four.
        let runs = [(Wire::OpenAiChat, 1)]
            .into_iter()
            .chain(Wire::ALL.into_iter().map(|wire| (wire, 4)));
        for (wire, calls) in runs {
            let name = match wire {
                Wire::OpenAiChat => format!("calls{calls}"),
                _ => format!("calls{calls}/{}", wire.name()),
            };
            if filter.is_some_and(|f| !name.contains(f)) {
                continue;
            }
            let bare = start(wire, vec![wires::tool_turn(wire, 1, calls)]);
            let loops = rounds
                .iter()
                .map(|&r| {
                    let mut replies: Vec<Reply> = (1..=r)
                        .map(|round| wires::tool_turn(wire, round, calls))
                        .collect();
                    replies.push(wires::final_answer(wire));
                    (r, start(wire, replies))
                })
                .collect();
            cases.push(Case {
                name,
                wire,
                calls,
                bare,
                loops,
                finished: None,
            });
        }
        Env {
            cases,
            registry: tokio::sync::Mutex::new(registry),
            approver: CountingApprover::default(),
            options: RequestOptions {
                max_tokens: Some(4096),
                ..RequestOptions::default()
            },
            start: workload::start_history(),
            client_rt,
            _server_rt: server_rt,
        }
    }

    /// One bare request from `history`: stream every event, then finish.
    async fn bare_once(&self, target: &Target, history: &History) -> Result<usize, String> {
        let registry = self.registry.lock().await;
        let request = ChatRequest {
            model: workload::MODEL,
            history,
            tools: registry.specs(),
            options: &self.options,
        };
        let mut stream = target.client.stream(&request, CancellationToken::new());
        let mut events = 0usize;
        while let Some(event) = stream.next().await {
            black_box(&event);
            events += 1;
        }
        match stream.finish().await {
            StreamOutcome::Finished {
                stop_reason: Some(StopReason::ToolUse),
                ..
            } => Ok(events),
            other => Err(format!("bare request: {other:?}")),
        }
    }

    /// One run of the loop over `history`: R rounds, then the final answer.
    async fn loop_once(
        &self,
        target: &Target,
        rounds: u32,
        history: &mut History,
    ) -> Result<usize, String> {
        let mut policy = ApprovalPolicy::new(ApprovalMode::Auto);
        let mut registry = self.registry.lock().await;
        let mut runner = runner(
            &target.client,
            &mut registry,
            &mut policy,
            &self.approver,
            rounds,
        );
        let cancel = CancellationToken::new();
        let mut events = 0usize;
        let outcome = runner
            .run(workload::MODEL, history, &self.options, &cancel, |event| {
                black_box(&event);
                events += 1;
            })
            .await;
        match outcome {
            TurnOutcome::Finished {
                rounds: done,
                stop_reason: Some(StopReason::EndTurn),
                ..
            } if done == rounds => Ok(events),
            other => Err(format!("loop of {rounds} rounds: {other:?}")),
        }
    }

    /// One sample of `variant`; `batch` bare requests count as one sample (per request).
    async fn timed(&self, case: &Case, variant: Variant, batch: u32) -> Result<Sample, String> {
        let target = case
            .target(variant)
            .ok_or_else(|| format!("{}: no target for {variant:?}", case.name))?;
        let result = match variant {
            Variant::Bare => {
                let (cpu0, start) = (thread_cpu(), Instant::now());
                let mut result = Ok(());
                for _ in 0..batch {
                    if let Err(e) = self.bare_once(target, &self.start).await {
                        result = Err(e);
                        break;
                    }
                }
                let (wall, cpu) = (start.elapsed(), thread_cpu().saturating_sub(cpu0));
                result.map(|()| Sample {
                    wall: wall / batch.max(1),
                    cpu: cpu / batch.max(1),
                })
            }
            Variant::Loop(rounds) => {
                let mut history = self.start.clone();
                let (cpu0, start) = (thread_cpu(), Instant::now());
                let result = self.loop_once(target, rounds, &mut history).await;
                let (wall, cpu) = (start.elapsed(), thread_cpu().saturating_sub(cpu0));
                drop(history);
                result.map(|_| Sample { wall, cpu })
            }
        };
        // Keep memory flat: the server's record of requests is not needed while timing.
        drop(target.server.take_requests());
        result
    }
}

/// The results of a user message: (call id, is_error).
fn results_of(blocks: &[ContentBlock]) -> Vec<(&str, bool)> {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                is_error,
                ..
            } => Some((tool_use_id.as_str(), *is_error)),
            _ => None,
        })
        .collect()
}

/// Run every variant once and check what it did; keep the largest run's history.
fn check(env: &mut Env) {
    let mut kept = Vec::new();
    for case in &env.cases {
        env.client_rt.block_on(async {
            let events = env
                .bare_once(&case.bare, &env.start)
                .await
                .unwrap_or_else(|e| panic!("{} bare: {e}", case.name));
            assert!(events > 0, "{} bare: no events", case.name);
            assert_eq!(case.bare.server.take_requests().len(), 1);
        });
        let mut last = None;
        for (rounds, target) in &case.loops {
            let rounds = *rounds;
            let mut history = env.start.clone();
            env.client_rt
                .block_on(env.loop_once(target, rounds, &mut history))
                .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            let what = format!("{} loop_r{rounds}", case.name);
            let messages = history.messages();
            let start_len = env.start.len();
            assert_eq!(
                messages.len(),
                start_len + 2 * rounds as usize + 1,
                "{what}"
            );
            assert_eq!(messages[messages.len() - 1].text(), workload::FINAL_TEXT);
            for round in 1..=rounds {
                let at = start_len + 2 * (round as usize - 1);
                let results = &messages[at + 1];
                assert_eq!(results.role, Role::User, "{what}");
                // The calls the turn made, in order (Gemini's ids are the decoder's own).
                let want: Vec<&str> = (messages[at].blocks.iter())
                    .filter_map(|b| match b {
                        ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(want.len(), case.calls, "{what}: round {round}");
                if case.wire != Wire::Gemini {
                    let sent: Vec<String> = (0..case.calls)
                        .map(|j| workload::call_id(round, j))
                        .collect();
                    assert_eq!(want, sent, "{what}: round {round}");
                }
                let got = results_of(&results.blocks);
                let ids: Vec<&str> = got.iter().map(|r| r.0).collect();
                assert_eq!(ids, want, "{what}: round {round}");
                assert!(got.iter().all(|r| !r.1), "{what}: an error result");
            }
            let requests = target.server.take_requests();
            assert_eq!(requests.len(), rounds as usize + 1, "{what}: requests");
            last = Some(history);
        }
        kept.push(last);
    }
    assert_eq!(
        env.approver
            .asked
            .load(std::sync::atomic::Ordering::Relaxed),
        0,
        "the approver was asked"
    );
    for (case, history) in env.cases.iter_mut().zip(kept) {
        case.finished = history;
    }
}

type Records = BTreeMap<(String, Variant), Vec<Sample>>;

fn print_table(env: &Env, records: &Records, source: &str) {
    println!();
    println!("tool loop ({source}); medians, µs; ratios to one bare request of the same run");
    println!(
        "  per round = loop/R; per request = loop/(R+1); overhead = (loop - (R+1)*bare)/R; \
         wall | client-thread CPU"
    );
    println!(
        "{:<8} {:<10} {:>6} {:>21} {:>19} {:>13} {:>13} {:>19} {:>13}",
        "case",
        "variant",
        "runs",
        "median",
        "per round",
        "round/bare",
        "request/bare",
        "overhead/round",
        "overhead/bare"
    );
    for case in &env.cases {
        let pick = |v: Variant| records.get(&(case.name.clone(), v));
        let Some(bare) = pick(Variant::Bare) else {
            continue;
        };
        let med = |s: &[Sample], f: fn(&Sample) -> Duration| {
            median(s.iter().map(f).collect()).as_secs_f64()
        };
        let (bw, bc) = (med(bare, |s| s.wall), med(bare, |s| s.cpu));
        println!(
            "{:<8} {:<10} {:>6} {:>21} {:>19} {:>13} {:>13} {:>19} {:>13}",
            case.name,
            "bare",
            bare.len(),
            format!("{} | {}", us(bw), us(bc)),
            "",
            "1",
            "1",
            "",
            ""
        );
        for (rounds, _) in &case.loops {
            let Some(samples) = pick(Variant::Loop(*rounds)) else {
                continue;
            };
            let r = f64::from(*rounds);
            let (lw, lc) = (med(samples, |s| s.wall), med(samples, |s| s.cpu));
            let (ow, oc) = ((lw - (r + 1.0) * bw) / r, (lc - (r + 1.0) * bc) / r);
            println!(
                "{:<8} {:<10} {:>6} {:>21} {:>19} {:>13} {:>13} {:>19} {:>13}",
                "",
                format!("loop R={rounds}"),
                samples.len(),
                format!("{} | {}", us(lw), us(lc)),
                format!("{} | {}", us(lw / r), us(lc / r)),
                format!("{:.2} | {:.2}", lw / r / bw, lc / r / bc),
                format!("{:.2} | {:.2}", lw / (r + 1.0) / bw, lc / (r + 1.0) / bc),
                format!("{} | {}", us(ow), us(oc)),
                format!("{:.2} | {:.2}", ow / bw, oc / bc),
            );
        }
    }
}

/// Median time of `f` over `k` runs.
fn time_median(k: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..k)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

/// Where a round's cost goes, for the largest R (in memory, no HTTP).
fn breakdown(env: &Env, k: usize) {
    println!();
    println!("breakdown (in memory, medians of {k}), for the largest R of each case:");
    // Not held: `bare_once` below takes the lock.
    let specs = {
        let registry = env.registry.try_lock().expect("no run holds the registry");
        registry.specs().to_vec()
    };
    for case in &env.cases {
        let Some(history) = &case.finished else {
            continue;
        };
        let messages = history.messages();
        let start_len = env.start.len();
        let rounds = (messages.len() - start_len - 1) / 2;
        let client = &case.bare.client;
        // The request of round n is encoded from the start plus n (turn, results) pairs.
        let mut times = Vec::new();
        let mut sizes = Vec::new();
        for n in 0..=rounds {
            let prefix = History::from(messages[..start_len + 2 * n].to_vec());
            let request = ChatRequest {
                model: workload::MODEL,
                history: &prefix,
                tools: &specs,
                options: &env.options,
            };
            let size = client.encode(&request).map(|b| b.len()).unwrap_or(0);
            let t = time_median(k, || {
                black_box(client.encode(black_box(&request)).ok());
            });
            times.push(t.as_secs_f64());
            sizes.push(size);
        }
        // The last request again, split: building the JSON value, then serializing it.
        let last = History::from(messages[..start_len + 2 * rounds].to_vec());
        let request = ChatRequest {
            model: workload::MODEL,
            history: &last,
            tools: &specs,
            options: &env.options,
        };
        let protocol = client.protocol();
        let build = time_median(k, || {
            black_box(protocol.encode(black_box(&request)).ok());
        });
        let serialize = match protocol.encode(&request) {
            Ok(value) => time_median(k, || {
                black_box(serde_json::to_vec(black_box(&value)).ok());
            }),
            Err(_) => Duration::ZERO,
        };
        // The last request through a cache that encoded round R - 1's (what a round of the
        // loop encodes), and through one that encoded it already.
        let before = History::from(messages[..start_len + 2 * rounds.saturating_sub(1)].to_vec());
        let mut warm = EncodeCache::new();
        let _ = client.encode_cached(
            &ChatRequest {
                history: &before,
                ..request
            },
            &mut warm,
        );
        // Without and with the loop's vouch for round R - 1's messages.
        let continued = |vouched: usize| {
            median(
                (0..k)
                    .map(|_| {
                        let mut cache = warm.clone();
                        cache.vouch_unchanged(vouched);
                        let start = Instant::now();
                        black_box(client.encode_cached(black_box(&request), &mut cache).ok());
                        start.elapsed()
                    })
                    .collect(),
            )
        };
        let (continued, vouched) = (continued(0), continued(before.len()));
        let _ = client.encode_cached(&request, &mut warm);
        let again = time_median(k, || {
            black_box(client.encode_cached(black_box(&request), &mut warm).ok());
        });
        let cached_same = client.encode_cached(&request, &mut EncodeCache::new()).ok()
            == client.encode(&request).ok();
        // The same last request as a bare request over HTTP, against round 0's.
        let http = |history: &History| {
            let mut samples = Vec::new();
            for _ in 0..k {
                let (cpu0, start) = (thread_cpu(), Instant::now());
                let ok = env
                    .client_rt
                    .block_on(env.bare_once(&case.bare, history))
                    .is_ok();
                let (wall, cpu) = (start.elapsed(), thread_cpu().saturating_sub(cpu0));
                if ok {
                    samples.push(Sample { wall, cpu });
                }
            }
            drop(case.bare.server.take_requests());
            (
                median(samples.iter().map(|s| s.wall).collect()).as_secs_f64(),
                median(samples.iter().map(|s| s.cpu).collect()).as_secs_f64(),
            )
        };
        let (w0, c0) = http(&env.start);
        let (wr, cr) = http(&last);
        let e0 = times[0];
        let sum: f64 = times.iter().sum();
        let r = rounds as f64;
        let growth = (sum - (r + 1.0) * e0) / r.max(1.0);
        let calls = ToolCall::all_in(&messages[start_len].blocks);
        let cancel = CancellationToken::new();
        let tools = time_median(k.max(51), || {
            let mut policy = ApprovalPolicy::new(ApprovalMode::Auto);
            let results = env.client_rt.block_on(run_calls(
                &calls,
                &env.registry.try_lock().expect("no run holds the registry"),
                &mut policy,
                &env.approver,
                &cancel,
            ));
            black_box(results.blocks());
        })
        .as_secs_f64();
        println!(
            "  {} R={rounds}: encode round 0 {} µs ({} B), round {rounds} {} µs ({} B); \
             sum over the run {} µs, growth over round 0 per round {} µs",
            case.name,
            us(e0),
            sizes[0],
            us(times[rounds]),
            sizes[rounds],
            us(sum),
            us(growth)
        );
        println!(
            "  {} R={rounds}: encode of round {rounds} = build the JSON value {} µs + \
             serialize {} µs",
            case.name,
            us(build.as_secs_f64()),
            us(serialize.as_secs_f64())
        );
        println!(
            "  {} R={rounds}: encode_cached of round {rounds} after round {}'s {} µs ({} µs \
             with the loop's vouch for them), all cached {} µs, {} MB held; the same bytes as \
             encode: {}",
            case.name,
            rounds.saturating_sub(1),
            us(continued.as_secs_f64()),
            us(vouched.as_secs_f64()),
            us(again.as_secs_f64()),
            warm.bytes_held() as f64 / 1e6,
            if cached_same { "yes" } else { "NO" }
        );
        println!(
            "  {} bare request over HTTP from round 0's history {} | {} µs, from round \
             {rounds}'s {} | {} µs (wall | client CPU; difference {} | {} µs)",
            case.name,
            us(w0),
            us(c0),
            us(wr),
            us(cr),
            us(wr - w0),
            us(cr - c0)
        );
        println!(
            "  {} run_calls of one round ({} calls) {} µs",
            case.name,
            calls.len(),
            us(tools)
        );
    }
}

/// `QORE_BENCH_RATIOS=1`: K samples per variant, the variants in rotating order.
fn ratio_mode(env: &Env, k: usize) {
    let mut records = Records::new();
    let mut failed: BTreeMap<(String, Variant), String> = BTreeMap::new();
    for case in &env.cases {
        let variants = case.variants();
        for rep in 0..k {
            let mut order = variants.clone();
            order.rotate_left(rep % variants.len());
            for variant in order {
                let key = (case.name.clone(), variant);
                // A failed loop run leaves the cycling server out of step: stop that variant.
                if failed.contains_key(&key) {
                    continue;
                }
                match env.client_rt.block_on(env.timed(case, variant, BARE_BATCH)) {
                    Ok(sample) => records.entry(key).or_default().push(sample),
                    Err(e) => {
                        failed.insert(key, e);
                    }
                }
            }
        }
    }
    print_table(env, &records, &format!("ratio mode, K={k}"));
    for ((case, variant), e) in &failed {
        println!(
            "note: {case} {} failed and was stopped: {e}",
            variant.name()
        );
    }
    breakdown(env, k.clamp(5, 15));
}

fn criterion_benches(c: &mut Criterion, env: &Env) -> (Records, usize) {
    let records: Rc<RefCell<Records>> = Rc::default();
    let failures = Rc::new(RefCell::new(0usize));
    for case in &env.cases {
        let mut group = c.benchmark_group(format!("tool_loop/{}", case.name));
        group
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        for variant in case.variants() {
            let requests = match variant {
                Variant::Bare => 1,
                Variant::Loop(r) => u64::from(r) + 1,
            };
            group.throughput(Throughput::Elements(requests));
            let (records, failures) = (Rc::clone(&records), Rc::clone(&failures));
            group.bench_function(variant.name(), |b| {
                b.to_async(&env.client_rt).iter_custom(|iters| {
                    let (records, failures) = (Rc::clone(&records), Rc::clone(&failures));
                    async move {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            match env.timed(case, variant, 1).await {
                                Ok(sample) => {
                                    total += sample.wall;
                                    records
                                        .borrow_mut()
                                        .entry((case.name.clone(), variant))
                                        .or_default()
                                        .push(sample);
                                }
                                Err(_) => *failures.borrow_mut() += 1,
                            }
                        }
                        total
                    }
                })
            });
        }
        group.finish();
    }
    let failed = *failures.borrow();
    (records.take(), failed)
}

fn main() {
    let run = BenchRun::from_env(21);
    let benchmarking = run.benchmarking;
    let rounds: Vec<u32> = std::env::var("QORE_BENCH_ROUNDS")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .filter(|&n| n > 0)
                .collect()
        })
        .filter(|v: &Vec<u32>| !v.is_empty())
        .unwrap_or_else(|| vec![1, 10, 50]);
    let mut env = Env::new(run.filter.as_deref(), &rounds);
    check(&mut env);
    if run.ratios {
        ratio_mode(&env, run.k);
    } else {
        let mut c = Criterion::default().configure_from_args();
        let (records, failed) = criterion_benches(&mut c, &env);
        c.final_summary();
        if benchmarking {
            print_table(
                &env,
                &records,
                "criterion run, all iterations incl. warm-up",
            );
        }
        if failed > 0 {
            println!("note: {failed} timed runs failed; the numbers above are not reliable");
        }
    }
}
