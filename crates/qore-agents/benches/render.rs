//! Rendering a long conversation through bundled profiles, as a ratio to serializing the same
//! body; and validating every bundled agent.
//!
//! The workload (built in memory by `support/workload.rs`, which tests share): a system
//! prompt of ~2 KB and a 201-entry conversation (user and assistant alternating, a third of
//! the assistant turns calling one or two tools, each call answered by a user turn of tool
//! results, one in six an error; texts of a few hundred bytes with quotes, backslashes,
//! newlines and non-ASCII), ending on a user turn; with 9 tools on offer whose schemas are
//! of a real coding agent's size.
//!
//! Per bundled profile (`openai-chat`, `claude-chat`, `gemini-chat`, `ollama-chat`,
//! `openai-responses-chat`), per iteration:
//! - `render`: `AgentRenderer::chat_body(history, tools, options)`, the whole templated
//!   render, bytes out (the context built from history, the tool definitions in the
//!   protocol's dialect, every `[body]` template, the trailing-comma stripper, the JSON check);
//! - `to_vec`: `serde_json::to_vec` of the SAME body (the rendered bytes parsed once into a
//!   `serde_json::Value`, outside the timing): the floor a body writer cannot beat;
//! - `encode`: the codec's own encoder for the same request (`Protocol::encode` then
//!   `serde_json::to_vec`), a second reference: what a profile without `[body]` costs;
//! - `cold`: `chat_body_cached` through a new `EncodeCache` (the per-message render of a
//!   first request; the bundled partials' messages written natively, see
//!   `qore_agents::native_fragments`);
//! - `continuation`: `chat_body_cached` of the history plus one new turn (an assistant
//!   answer and a user turn) through a cache that rendered the history before: two
//!   continuations alternate, so each run renders its last two messages (and the one
//!   before them, no longer last) afresh and takes the others from the cache.
//!
//! Validation, in the same run: `validate_catalog(&Catalog::load(None), &Providers::load(None),
//! &Partials::default())` (`validate`, loading included), and `Catalog::load(None)` alone
//! (`load`). With `QORE_BENCH_QORE=<path to a qore binary>`, also `cli`: one process
//! `qore agents validate` (with `QORE_CONFIG_DIR` an empty temporary directory), wall time.
//!
//! Before timing, every profile renders once and is checked: the body parses, its
//! conversation (`messages`, `contents`, `input`) has at least 200 entries, and whether it is
//! the codec's conversation for the same history is printed; validation finds no error; the
//! `cli` binary exits successfully. There are no timing assertions.
//!
//! Run: `cargo bench -p qore-agents --bench render` (criterion groups `render/<profile>` and
//! `validate`, then a table of the same run's medians and ratios). `QORE_BENCH_RATIOS=1`
//! skips criterion: each variant runs `QORE_BENCH_K` (default 21) times in rotating order
//! (a render variant's sample is a batch of 8 runs, per run),
//! then the table and a breakdown of one render (the context, its conversion to a minijinja
//! value, the templates alone, the comma stripper, the JSON check).
//! `QORE_BENCH_CASES=claude` keeps the cases whose name contains that text (`validate` is a
//! case).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use minijinja::{Environment, Value as J};
use qore_agents::json_commas::strip_trailing_commas;
use qore_agents::providers::Providers;
use qore_agents::render::{tool_definitions, AgentRenderer};
use qore_agents::validate::validate_catalog;
use qore_agents::{Catalog, Partials};
use qore_client::{protocols, ChatRequest, EncodeCache, Protocol, RequestOptions};
use qore_core::{ContentBlock, History, Message, ToolSpec};
use qore_testkit::bench::{median, us, BenchRun};
use serde_json::Value;
use workload::{history, text, tools, TURNS};

#[path = "support/workload.rs"]
mod workload;

/// The profiles rendered, and the body key that carries the conversation.
const PROFILES: &[(&str, &str)] = &[
    ("openai-chat", "messages"),
    ("claude-chat", "messages"),
    ("gemini-chat", "contents"),
    ("ollama-chat", "messages"),
    ("openai-responses-chat", "input"),
];

/// Runs per sample of a render variant in ratio mode (one per iteration under criterion).
const BATCH: u32 = 8;

// ---------------------------------------------------------------------------------------
// Cases and variants.

/// One profile bound to its protocol, with the workload's body parsed once.
struct Case {
    name: &'static str,
    key: &'static str,
    renderer: AgentRenderer,
    protocol: Arc<dyn Protocol>,
    /// The rendered body, parsed (what `to_vec` serializes).
    value: Value,
    bytes: usize,
    entries: usize,
    /// The cache the `continuation` variant renders through.
    cache: RefCell<EncodeCache>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Variant {
    Render,
    ToVec,
    Encode,
    Cold,
    Continuation,
    Validate,
    Load,
    Cli,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Render => "render",
            Variant::ToVec => "to_vec",
            Variant::Encode => "encode",
            Variant::Cold => "cold",
            Variant::Continuation => "continuation",
            Variant::Validate => "validate",
            Variant::Load => "load",
            Variant::Cli => "cli",
        }
    }
}

struct Env {
    cases: Vec<Case>,
    history: History,
    /// Two continuations of `history` (one more turn each), and which one runs next.
    continuations: [History; 2],
    next: std::cell::Cell<usize>,
    tools: Vec<ToolSpec>,
    options: RequestOptions,
    /// Whether the `validate` case runs.
    validate: bool,
    /// The `qore` binary for `cli`, and the empty config dir it runs with.
    cli: Option<(PathBuf, PathBuf)>,
}

impl Env {
    fn new(filter: Option<&str>) -> Env {
        let catalog = Catalog::load(None);
        let providers = Providers::load(None);
        let history = history();
        let tools = tools();
        let options = RequestOptions::default();
        let mut cases = Vec::new();
        for &(name, key) in PROFILES {
            if filter.is_some_and(|f| !name.contains(f)) {
                continue;
            }
            let Some(agent) = catalog.get(name) else {
                println!("note: {name} is not bundled; skipped");
                continue;
            };
            let instance = (agent.provider.as_deref())
                .and_then(|p| providers.get(p))
                .unwrap_or_else(|| panic!("{name}: its provider is not built in"));
            let protocol = protocols::by_name(&instance.protocol)
                .unwrap_or_else(|| panic!("{name}: unknown protocol {}", instance.protocol));
            let model = agent.model.clone().unwrap_or_else(|| "bench-model".into());
            let renderer = AgentRenderer::new(agent, protocol.clone(), model, Partials::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(renderer.is_templated(), "{name} has no [body]");
            cases.push(Case {
                name,
                key,
                renderer,
                protocol,
                value: Value::Null,
                bytes: 0,
                entries: 0,
                cache: RefCell::default(),
            });
        }
        let validate = filter.is_none_or(|f| "validate".contains(f));
        let cli = std::env::var_os("QORE_BENCH_QORE")
            .filter(|_| validate)
            .map(|bin| {
                let dir =
                    std::env::temp_dir().join(format!("qore-bench-render-{}", std::process::id()));
                std::fs::create_dir_all(&dir).expect("temporary config dir");
                (PathBuf::from(bin), dir)
            });
        let continuation = |n: usize| {
            let mut messages = history.messages().to_vec();
            messages.push(Message::assistant(text(n, 300)));
            messages.push(Message::user(text(n + 1, 300)));
            History::from(messages)
        };
        Env {
            cases,
            continuations: [continuation(1), continuation(2)],
            next: std::cell::Cell::new(0),
            history,
            tools,
            options,
            validate,
            cli,
        }
    }

    fn variants(&self, case: Option<&Case>) -> Vec<Variant> {
        match case {
            Some(_) => vec![
                Variant::Render,
                Variant::ToVec,
                Variant::Encode,
                Variant::Cold,
                Variant::Continuation,
            ],
            None => {
                let mut v = vec![Variant::Validate, Variant::Load];
                if self.cli.is_some() {
                    v.push(Variant::Cli);
                }
                v
            }
        }
    }

    fn request(&self, case: &Case) -> Value {
        let request = ChatRequest {
            model: &case.renderer.model,
            history: &self.history,
            tools: &self.tools,
            options: &self.options,
        };
        case.protocol.encode(&request).expect("the codec encodes")
    }

    /// One run of `variant` (of `case`, or of validation), black-boxed.
    fn run(&self, case: Option<&Case>, variant: Variant) {
        match (case, variant) {
            (Some(case), Variant::Render) => {
                let bytes =
                    case.renderer
                        .chat_body(black_box(&self.history), &self.tools, &self.options);
                black_box(bytes.expect("renders"));
            }
            (Some(case), Variant::Cold) => {
                let mut cache = EncodeCache::new();
                let bytes = (case.renderer).chat_body_cached(
                    black_box(&self.history),
                    &self.tools,
                    &self.options,
                    &mut cache,
                );
                black_box(bytes.expect("renders"));
            }
            (Some(case), Variant::Continuation) => {
                let n = self.next.get();
                self.next.set(1 - n);
                let bytes = (case.renderer).chat_body_cached(
                    black_box(&self.continuations[n]),
                    &self.tools,
                    &self.options,
                    &mut case.cache.borrow_mut(),
                );
                black_box(bytes.expect("renders"));
            }
            (Some(case), Variant::ToVec) => {
                black_box(serde_json::to_vec(black_box(&case.value)).expect("serializes"));
            }
            (Some(case), Variant::Encode) => {
                let value = self.request(case);
                black_box(serde_json::to_vec(&value).expect("serializes"));
            }
            (_, Variant::Validate) => {
                let errors = validate_catalog(
                    &Catalog::load(None),
                    &Providers::load(None),
                    &Partials::default(),
                );
                black_box(errors);
            }
            (_, Variant::Load) => {
                black_box(Catalog::load(None));
            }
            (_, Variant::Cli) => {
                black_box(self.cli_once());
            }
            (None, _) => unreachable!("a render variant without its case"),
        }
    }

    fn cli_once(&self) -> bool {
        let Some((bin, dir)) = &self.cli else {
            return false;
        };
        Command::new(bin)
            .args(["agents", "validate"])
            .env("QORE_CONFIG_DIR", dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn timed(&self, case: Option<&Case>, variant: Variant) -> Duration {
        let start = Instant::now();
        self.run(case, variant);
        start.elapsed()
    }

    fn case_name(case: Option<&Case>) -> String {
        case.map_or("validate".into(), |c| c.name.into())
    }
}

/// Render every case once and check it; check validation and the binary.
fn check(env: &mut Env) {
    let history = &env.history;
    println!(
        "workload: {} entries after the system prompt, {} tool calls, {} tools",
        history.len() - 1,
        (history.iter())
            .flat_map(|m| &m.blocks)
            .filter(|b| matches!(b, ContentBlock::ToolUse { .. }))
            .count(),
        env.tools.len()
    );
    let mut filled = Vec::new();
    for case in &env.cases {
        let bytes = (case.renderer)
            .chat_body(&env.history, &env.tools, &env.options)
            .unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
        let value: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{}: the body is not JSON: {e}", case.name));
        let entries = value[case.key].as_array().map_or(0, Vec::len);
        assert!(
            entries >= TURNS,
            "{}: {} has {entries} entries",
            case.name,
            case.key
        );
        let encoded = env.request(case);
        let same = encoded[case.key] == value[case.key];
        println!(
            "  {:<22} {} B rendered, {} {} entries; the codec's {} B; same conversation as \
             the codec: {}",
            case.name,
            bytes.len(),
            entries,
            case.key,
            serde_json::to_vec(&encoded).map_or(0, |v| v.len()),
            if same { "yes" } else { "NO" }
        );
        let mut cache = case.cache.borrow_mut();
        let cached = (case.renderer)
            .chat_body_cached(&env.history, &env.tools, &env.options, &mut cache)
            .unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
        assert!(cached == bytes, "{}: the cached render differs", case.name);
        for history in &env.continuations {
            let whole = (case.renderer).chat_body(history, &env.tools, &env.options);
            let cached =
                (case.renderer).chat_body_cached(history, &env.tools, &env.options, &mut cache);
            assert!(
                whole.ok() == cached.ok(),
                "{}: a continuation differs",
                case.name
            );
        }
        println!(
            "  {:<22} renders per message: {} (native writer: {:?}); cache holds {} entries, \
             {} B",
            case.name,
            case.renderer.body().is_some_and(|b| b.splits()),
            case.renderer.body().and_then(|b| b.native_dialect()),
            cache.len(),
            cache.bytes_held()
        );
        filled.push((value, bytes.len(), entries));
    }
    for (case, (value, bytes, entries)) in env.cases.iter_mut().zip(filled) {
        case.value = value;
        case.bytes = bytes;
        case.entries = entries;
    }
    if env.validate {
        let catalog = Catalog::load(None);
        assert!(catalog.errors.is_empty(), "{:#?}", catalog.errors);
        let errors = validate_catalog(&catalog, &Providers::load(None), &Partials::default());
        assert!(
            errors.is_empty(),
            "{:#?}",
            errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        );
        let all = catalog.all().count();
        let concrete = catalog.all().filter(|a| !a.is_abstract).count();
        println!("  validate: {all} agents ({concrete} concrete), no errors");
        if let Some((bin, _)) = &env.cli {
            assert!(env.cli_once(), "{} agents validate failed", bin.display());
            println!("  cli: {} agents validate exits 0", bin.display());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reporting.

type Records = BTreeMap<(String, Variant), Vec<Duration>>;

fn print_table(env: &Env, records: &Records, source: &str) {
    let med = |case: &str, v: Variant| {
        (records.get(&(case.to_owned(), v))).map(|s| (median(s.clone()).as_secs_f64(), s.len()))
    };
    println!();
    println!("render ({source}); medians, µs; ratios of the same run");
    println!(
        "{:<22} {:>9} {:>8} {:>6} {:>11} {:>11} {:>11} {:>14} {:>14} {:>14} {:>11} {:>11}",
        "profile",
        "bytes",
        "entries",
        "runs",
        "render",
        "to_vec",
        "encode",
        "render/to_vec",
        "encode/to_vec",
        "render/encode",
        "cold/to_vec",
        "cont/to_vec"
    );
    for case in &env.cases {
        let (Some((r, n)), Some((t, _)), Some((e, _))) = (
            med(case.name, Variant::Render),
            med(case.name, Variant::ToVec),
            med(case.name, Variant::Encode),
        ) else {
            continue;
        };
        let ratio = |v: Variant| med(case.name, v).map_or(f64::NAN, |(m, _)| m / t);
        println!(
            "{:<22} {:>9} {:>8} {:>6} {:>11} {:>11} {:>11} {:>14.1} {:>14.1} {:>14.2} {:>11.2} {:>11.2}",
            case.name,
            case.bytes,
            case.entries,
            n,
            us(r),
            us(t),
            us(e),
            r / t,
            e / t,
            r / e,
            ratio(Variant::Cold),
            ratio(Variant::Continuation)
        );
    }
    let (Some((v, n)), Some((l, _))) = (
        med("validate", Variant::Validate),
        med("validate", Variant::Load),
    ) else {
        return;
    };
    let ms = |d: f64| format!("{:.2}", d * 1e3);
    println!();
    println!("validate ({source}); medians, ms");
    println!(
        "  validate_catalog(Catalog::load, Providers::load, Partials::default()): {} ms \
         ({n} runs); Catalog::load alone: {} ms ({:.0}% of it)",
        ms(v),
        ms(l),
        100.0 * l / v
    );
    if let Some((c, n)) = med("validate", Variant::Cli) {
        println!(
            "  `qore agents validate` (one process, wall): {} ms ({n} runs), {:.2}× the \
             in-process validate",
            ms(c),
            c / v
        );
    }
}

// ---------------------------------------------------------------------------------------
// The breakdown.

/// The `[body]` strings of `case` that are templates: (key, source).
fn body_templates(case: &Case) -> Vec<(String, String)> {
    let Some(body) = &case.renderer.agent.body else {
        return Vec::new();
    };
    (body.iter())
        .filter_map(|(k, v)| match v {
            toml::Value::String(s) if s.contains("{{") || s.contains("{%") => {
                Some((k.clone(), qore_agents::body::from_inja(s)))
            }
            _ => None,
        })
        .collect()
}

/// Medians of `k` rounds of `parts`, each round running every part once, in rotating order
/// (so that load from elsewhere on the machine hits every part alike).
fn interleaved(k: usize, parts: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut samples = vec![Vec::with_capacity(k); parts.len()];
    for rep in 0..k {
        for i in 0..parts.len() {
            let i = (i + rep) % parts.len();
            let start = Instant::now();
            parts[i]();
            samples[i].push(start.elapsed());
        }
    }
    samples
        .into_iter()
        .map(|s| median(s).as_secs_f64())
        .collect()
}

/// Where one render's time goes, per case (medians of `k`).
fn breakdown(env: &Env, k: usize) {
    println!();
    println!(
        "breakdown of one render (medians of {k}, interleaved; µs and % of the same run's \
         `chat_body`); `templates` runs the profile's templates in the engine's environment \
         with the context converted once"
    );
    for case in &env.cases {
        let renderer = &case.renderer;
        let Some(body) = renderer.body() else {
            continue;
        };
        let (history, tools) = (&env.history, &env.tools[..]);
        let ctx = renderer.chat_context(history, tools);
        let out = body.render(&ctx).unwrap_or_default();
        let sources = body_templates(case);
        let jctx = minijinja::context! { ctx => J::from_serialize(&ctx) };
        let run_templates = |env: &Environment<'static>| {
            let mut texts = Vec::new();
            for (key, _) in &sources {
                let t = env.get_template(key).expect("compiled");
                texts.push(t.render(&jctx).expect("renders"));
            }
            texts
        };
        // The engine's own environment, the profile's templates compiled once.
        let mut plain = qore_agents::body::environment(Partials::default());
        for (key, source) in &sources {
            plain
                .add_template_owned(key.clone(), source.clone())
                .expect("compiles");
        }
        let texts = run_templates(&plain);
        let raw: usize = texts.iter().map(String::len).sum();
        let t = interleaved(
            k,
            &mut [
                &mut || {
                    black_box(renderer.chat_body(history, tools, &env.options).ok());
                },
                &mut || {
                    black_box(tool_definitions(&*case.protocol, tools));
                },
                &mut || {
                    black_box(renderer.chat_context(history, tools));
                },
                &mut || {
                    black_box(J::from_serialize(black_box(&ctx)));
                },
                &mut || {
                    black_box(body.render(&ctx).ok());
                },
                &mut || {
                    black_box(run_templates(&plain));
                },
                &mut || {
                    for t in &texts {
                        black_box(strip_trailing_commas(black_box(t)));
                    }
                },
                &mut || {
                    black_box(
                        serde_json::from_slice::<serde::de::IgnoredAny>(black_box(&out)).ok(),
                    );
                },
            ],
        );
        let [total, defs, context, convert, body_render, templates, strip, check] = t[..] else {
            unreachable!("eight parts")
        };
        let pct = |d: f64| format!("{:.0}%", 100.0 * d / total);
        let rest = total - context - convert - templates - strip - check;
        println!(
            "  {} ({} B): chat_body {} µs = context {} ({}; of which tool_definitions {}) \
             + to minijinja value {} ({}) + templates {} ({}) + comma stripper {} ({}) + JSON \
             check {} ({}); rest {} ({})",
            case.name,
            case.bytes,
            us(total),
            us(context),
            pct(context),
            us(defs),
            us(convert),
            pct(convert),
            us(templates),
            pct(templates),
            us(strip),
            pct(strip),
            us(check),
            pct(check),
            us(rest),
            pct(rest)
        );
        println!(
            "  {}: BodyTemplate::render alone {} µs ({}); templates write {} B",
            case.name,
            us(body_render),
            pct(body_render),
            raw,
        );
    }
}

// ---------------------------------------------------------------------------------------
// Modes.

/// `QORE_BENCH_RATIOS=1`: K samples per variant, the variants in rotating order.
fn ratio_mode(env: &Env, k: usize) {
    let mut records = Records::new();
    let mut groups: Vec<Option<&Case>> = env.cases.iter().map(Some).collect();
    if env.validate {
        groups.push(None);
    }
    for rep in 0..k {
        for &case in &groups {
            let mut order = env.variants(case);
            let n = order.len();
            order.rotate_left(rep % n);
            for variant in order {
                // Render variants in batches (per run), so that each one runs hot as under
                // criterion; validation is long enough alone.
                let batch = if case.is_some() { BATCH } else { 1 };
                let d = (0..batch)
                    .map(|_| env.timed(case, variant))
                    .sum::<Duration>()
                    / batch;
                records
                    .entry((Env::case_name(case), variant))
                    .or_default()
                    .push(d);
            }
        }
    }
    print_table(env, &records, &format!("ratio mode, K={k}"));
    breakdown(env, k.max(11));
}

fn criterion_benches(c: &mut Criterion, env: &Env) -> Records {
    let records: Rc<RefCell<Records>> = Rc::default();
    let mut groups: Vec<Option<&Case>> = env.cases.iter().map(Some).collect();
    if env.validate {
        groups.push(None);
    }
    for case in groups {
        let name = Env::case_name(case);
        let mut group = c.benchmark_group(match case {
            Some(case) => format!("render/{}", case.name),
            None => "validate".into(),
        });
        group
            .sample_size(if case.is_some() { 20 } else { 10 })
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        if let Some(case) = case {
            group.throughput(Throughput::Bytes(case.bytes as u64));
        }
        for variant in env.variants(case) {
            let records = Rc::clone(&records);
            let name = name.clone();
            group.bench_function(variant.name(), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let d = env.timed(case, variant);
                        total += d;
                        records
                            .borrow_mut()
                            .entry((name.clone(), variant))
                            .or_default()
                            .push(d);
                    }
                    total
                })
            });
        }
        group.finish();
    }
    records.take()
}

fn main() {
    let run = BenchRun::from_env(21);
    let benchmarking = run.benchmarking;
    let mut env = Env::new(run.filter.as_deref());
    check(&mut env);
    if run.ratios {
        ratio_mode(&env, run.k);
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
    if let Some((_, dir)) = &env.cli {
        let _ = std::fs::remove_dir_all(dir);
    }
}
