//! Decode throughput of every wire protocol, each as a ratio to that wire's parse floor.
//!
//! For each protocol, a realistic streamed body of N text deltas in that wire's exact shape
//! (`decode_protocols/wires.rs`, copied from real recordings, with the wire's start and
//! terminal events), N = 200,000 and 20,000, held in memory and cut in 64 KiB pieces (no
//! HTTP, no sockets: `benches/chat_stream.rs` measures those for Chat Completions). Per
//! iteration, one whole body:
//! - `qore`: what `ResponseStream` does with the bytes: the framer
//!   `Framer::for_response(decoder.framing(), content_type, true)`, the protocol's
//!   `decoder()` (`fim_decoder()` for a FIM stream) and a `MessageAssembler` folding every
//!   event, ending in the `StreamOutcome`;
//! - `floor`: the algorithm of `chat_stream/floor.rs` on the same body: memchr line
//!   splitter, `data:` stripped (NDJSON: the line), `serde_json::from_slice` into a minimal
//!   borrowed struct with just that wire's delta text and end marker, `push_str`
//!   (`decode_protocols/floors.rs`, one struct per wire).
//!
//! Before timing, each case is decoded once on both paths and checked: a finished turn whose
//! text is exactly the N deltas, stop reason end of turn, N output tokens; the floor saw N
//! deltas, the same text and the wire's end marker. There are no timing assertions.
//!
//! Protocols: `openai-chat`, `anthropic`, `gemini`, `ollama` (NDJSON), `llamacpp-fim` (the
//! llama.cpp `/completion` stream, `fim_decoder`), `openai-responses`; one that
//! `protocols::by_name` does not know is skipped with a note. Not `mistral`: its
//! `fim_decoder` is `ChatStreamDecoder::new()`, the very decoder of `openai-chat`, over the
//! same `chat.completion.chunk` wire, so its numbers would be `openai-chat`'s; its chat is
//! `openai-chat` too.
//!
//! Run: `cargo bench -p qore-client --bench decode_protocols` (criterion, throughput in
//! deltas; then a table of the same run's medians: deltas/s of both paths and the ratio
//! qore/floor, by wall time, the work being single-threaded and in memory).
//! `QORE_BENCH_RATIOS=1` skips criterion and runs each case `QORE_BENCH_K` (default 7) times
//! per path, alternating the order, and prints the same table. `QORE_BENCH_CASES=gemini`
//! keeps only the cases whose name (`gemini/200k`) contains that text. `cargo test
//! --benches` runs every case once, with N = 2,000 and 200 so that unoptimized builds stay
//! quick.

#[path = "decode_protocols/floors.rs"]
mod floors;
#[path = "decode_protocols/wires.rs"]
mod wires;

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::hint::black_box;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use qore_client::transport::framing::Framer;
use qore_client::{protocols, Protocol};
use qore_core::{ContentBlock, ErrorInfo, MessageAssembler, StopReason, StreamOutcome};
use qore_testkit::bench::{median, BenchRun};

/// One wire protocol under test.
struct Wire {
    /// Name in reports and case names.
    label: &'static str,
    /// The protocol, as `protocols::by_name` knows it.
    protocol: &'static str,
    /// Decode with `fim_decoder()` instead of `decoder()`.
    fim: bool,
    /// The response's `content-type`, as the server labels it.
    content_type: &'static str,
    /// The streamed body of N text deltas.
    body: fn(usize) -> String,
    /// The parse floor over the same body.
    floor: fn(&[&[u8]]) -> Result<floors::Outcome, String>,
}

/// Every wire measured, in report order. A new protocol is one entry here (plus its body in
/// `wires.rs` and its floor struct in `floors.rs`).
const WIRES: &[Wire] = &[
    Wire {
        label: "openai-chat",
        protocol: "openai-chat",
        fim: false,
        content_type: "text/event-stream; charset=utf-8",
        body: wires::openai_chat,
        floor: floors::run::<floors::OpenAiChat>,
    },
    Wire {
        label: "anthropic",
        protocol: "anthropic",
        fim: false,
        content_type: "text/event-stream; charset=utf-8",
        body: wires::anthropic,
        floor: floors::run::<floors::Anthropic>,
    },
    Wire {
        label: "gemini",
        protocol: "gemini",
        fim: false,
        content_type: "text/event-stream",
        body: wires::gemini,
        floor: floors::run::<floors::Gemini>,
    },
    Wire {
        label: "ollama",
        protocol: "ollama",
        fim: false,
        content_type: "application/x-ndjson",
        body: wires::ollama,
        floor: floors::run::<floors::Ollama>,
    },
    Wire {
        label: "llamacpp-fim",
        protocol: "llamacpp",
        fim: true,
        content_type: "text/event-stream",
        body: wires::llamacpp_fim,
        floor: floors::run::<floors::LlamaCppFim>,
    },
    Wire {
        label: "openai-responses",
        protocol: "openai-responses",
        fim: false,
        content_type: "text/event-stream; charset=utf-8",
        body: wires::openai_responses,
        floor: floors::run::<floors::OpenAiResponses>,
    },
];

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

/// One wire at one N, its body built.
struct Case {
    /// `gemini/200k`.
    name: String,
    wire: &'static Wire,
    protocol: Arc<dyn Protocol>,
    n: usize,
    body: Vec<u8>,
    expected: String,
}

impl Case {
    fn new(wire: &'static Wire, protocol: Arc<dyn Protocol>, n: usize) -> Case {
        Case {
            name: case_name(wire, n),
            wire,
            protocol,
            n,
            body: (wire.body)(n).into_bytes(),
            expected: wires::expected(n),
        }
    }

    fn pieces(&self) -> Vec<&[u8]> {
        self.body.chunks(64 * 1024).collect()
    }
}

fn case_name(wire: &Wire, n: usize) -> String {
    if n >= 1000 {
        format!("{}/{}k", wire.label, n / 1000)
    } else {
        format!("{}/{n}", wire.label)
    }
}

/// qore's path over one body: frame, decode, fold.
fn run_qore(case: &Case, pieces: &[&[u8]]) -> Result<StreamOutcome, ErrorInfo> {
    let mut decoder = if case.wire.fim {
        case.protocol.fim_decoder()
    } else {
        case.protocol.decoder()
    };
    let mut framer = Framer::for_response(decoder.framing(), case.wire.content_type, true)
        .expect("a streamed body gets a framer");
    let mut queue = VecDeque::new();
    let mut assembler = MessageAssembler::new();
    for piece in pieces {
        framer.feed(piece, |frame| decoder.frame(frame, &mut queue))?;
        for event in queue.drain(..) {
            assembler.apply(&event);
        }
    }
    framer.finish(|frame| decoder.frame(frame, &mut queue))?;
    decoder.finish(&mut queue)?;
    for event in queue.drain(..) {
        assembler.apply(&event);
    }
    Ok(assembler.finish())
}

fn check_qore(case: &Case, outcome: Result<StreamOutcome, ErrorInfo>) -> Result<(), String> {
    let outcome = outcome.map_err(|e| format!("decoding failed: {e:?}"))?;
    let StreamOutcome::Finished {
        message,
        stop_reason,
        usage,
    } = outcome
    else {
        return Err(format!("not finished: {outcome:?}"));
    };
    let [ContentBlock::Text { text, .. }] = message.blocks.as_slice() else {
        return Err(format!(
            "{} blocks, wanted one text block",
            message.blocks.len()
        ));
    };
    if *text != case.expected {
        return Err(format!(
            "text of {} bytes, wanted {}",
            text.len(),
            case.expected.len()
        ));
    }
    if stop_reason != Some(StopReason::EndTurn) {
        return Err(format!("stop {stop_reason:?}"));
    }
    if usage.output_tokens != Some(case.n as u64) {
        return Err(format!("usage {usage:?}"));
    }
    Ok(())
}

fn check_floor(case: &Case, out: Result<floors::Outcome, String>) -> Result<(), String> {
    let out = out?;
    if out.deltas != case.n || out.text != case.expected || !out.done {
        return Err(format!(
            "{} deltas, {} bytes, end marker {}",
            out.deltas,
            out.text.len(),
            out.done
        ));
    }
    Ok(())
}

/// Decode the case once on each path and check the answers.
fn check(case: &Case) {
    let pieces = case.pieces();
    if let Err(e) = check_qore(case, run_qore(case, &pieces)) {
        panic!("{} qore: wrong answer: {e}", case.name);
    }
    if let Err(e) = check_floor(case, (case.wire.floor)(&pieces)) {
        panic!("{} floor: wrong answer: {e}", case.name);
    }
}

/// One pass of `path` over the case, timed (its result is dropped inside the timing).
fn timed(case: &Case, pieces: &[&[u8]], path: Path) -> Duration {
    let start = Instant::now();
    match path {
        Path::Qore => drop(black_box(run_qore(case, pieces))),
        Path::Floor => drop(black_box((case.wire.floor)(pieces))),
    }
    start.elapsed()
}

/// One table row: the case's size and its samples per path.
struct Row {
    name: String,
    n: usize,
    body_len: usize,
    samples: BTreeMap<Path, Vec<Duration>>,
}

impl Row {
    fn new(case: &Case) -> Row {
        Row {
            name: case.name.clone(),
            n: case.n,
            body_len: case.body.len(),
            samples: BTreeMap::new(),
        }
    }
}

fn print_table(rows: &[Row], skipped: &[String], source: &str) {
    println!();
    println!(
        "decode_protocols ({source}); in memory, 64 KiB pieces; medians of wall time; \
         ratio = qore deltas/s / floor deltas/s (<1: qore slower than the floor)"
    );
    println!(
        "{:<24} {:>7} {:>5} {:>7} {:>11} {:>11} {:>7} {:>10} {:>10}",
        "protocol/N",
        "N",
        "runs",
        "B/delta",
        "qore d/s",
        "floor d/s",
        "ratio",
        "qore ns/d",
        "floor ns/d"
    );
    for row in rows {
        let (Some(q), Some(f)) = (row.samples.get(&Path::Qore), row.samples.get(&Path::Floor))
        else {
            continue;
        };
        let n = row.n as f64;
        let (qw, fw) = (
            median(q.clone()).as_secs_f64(),
            median(f.clone()).as_secs_f64(),
        );
        println!(
            "{:<24} {:>7} {:>5} {:>7.0} {:>11} {:>11} {:>6.2}x {:>10.0} {:>10.0}",
            row.name,
            row.n,
            q.len().min(f.len()),
            row.body_len as f64 / n,
            per_second(n / qw),
            per_second(n / fw),
            fw / qw,
            qw / n * 1e9,
            fw / n * 1e9,
        );
    }
    for note in skipped {
        println!("{note}");
    }
}

/// `12.3M/s`.
fn per_second(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2}M/s", rate / 1e6)
    } else {
        format!("{:.0}k/s", rate / 1e3)
    }
}

/// `QORE_BENCH_RATIOS=1`: K alternating runs per case and path, outside criterion.
fn ratio_mode(case: &Case, k: usize) -> Row {
    let pieces = case.pieces();
    let mut row = Row::new(case);
    for round in 0..k {
        let order = if round % 2 == 0 {
            [Path::Qore, Path::Floor]
        } else {
            [Path::Floor, Path::Qore]
        };
        for path in order {
            let sample = timed(case, &pieces, path);
            row.samples.entry(path).or_default().push(sample);
        }
    }
    row
}

/// One criterion group per case; every iteration's sample is also kept for the table.
fn criterion_case(c: &mut Criterion, case: &Case) -> Row {
    let pieces = case.pieces();
    let row = Rc::new(RefCell::new(Row::new(case)));
    let mut group = c.benchmark_group(format!("decode_protocols/{}", case.name));
    group
        .throughput(Throughput::Elements(case.n as u64))
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(if case.n >= 100_000 { 3 } else { 2 }));
    for path in [Path::Qore, Path::Floor] {
        let row = Rc::clone(&row);
        let pieces = &pieces;
        group.bench_function(path.name(), move |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let sample = timed(case, pieces, path);
                    total += sample;
                    row.borrow_mut()
                        .samples
                        .entry(path)
                        .or_default()
                        .push(sample);
                }
                total
            })
        });
    }
    group.finish();
    Rc::try_unwrap(row)
        .ok()
        .expect("the group is finished")
        .into_inner()
}

fn main() {
    let run = BenchRun::from_env(7);
    let (benchmarking, ratios, k) = (run.benchmarking, run.ratios, run.k);
    let sizes: [usize; 2] = if benchmarking {
        [200_000, 20_000]
    } else {
        [2_000, 200]
    };
    let mut criterion = (!ratios).then(|| Criterion::default().configure_from_args());

    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for wire in WIRES {
        let Some(protocol) = protocols::by_name(wire.protocol) else {
            skipped.push(format!(
                "{}: skipped (this build has no `{}` protocol)",
                wire.label, wire.protocol
            ));
            continue;
        };
        for n in sizes {
            if !run.keeps(&case_name(wire, n)) {
                continue;
            }
            // One body in memory at a time.
            let case = Case::new(wire, Arc::clone(&protocol), n);
            check(&case);
            rows.push(match &mut criterion {
                Some(c) => criterion_case(c, &case),
                None => ratio_mode(&case, k),
            });
        }
    }
    match criterion {
        Some(c) => {
            c.final_summary();
            if benchmarking {
                print_table(
                    &rows,
                    &skipped,
                    "criterion run, all iterations incl. warm-up",
                );
            } else {
                for note in &skipped {
                    println!("{note}");
                }
            }
        }
        None => print_table(&rows, &skipped, &format!("ratio mode, K={k}")),
    }
}
