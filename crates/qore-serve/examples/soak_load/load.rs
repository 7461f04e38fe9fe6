//! `soak_load run`: N workers sending requests back to back through the load balancer until
//! the time is up, each request's outcome counted and each acknowledged write in the ledger.
//!
//! The mix: worker `w`'s `n`-th request is [`KINDS`]`[(w + n) % 10]`: Chat Completions and
//! Messages, streamed and not, with `x-qore-session: soak-W` (the worker's session); Responses
//! with `store: true`, streamed and not, new or continuing the worker's last acknowledged
//! response (`previous_response_id`); and two kinds that write nothing (counted as plain).
//! Every request's user text is `soak TAG wW nN`, unique in the run.
//!
//! Outcomes: acknowledged (see `ledger.rs`), plain (a 200 that wrote nothing), refused (a 503,
//! or the dialect's error event in a stream), failed (no answer: a connection error, a stream
//! cut before its last event, a 502/504 from the load balancer, a timeout), other (any other
//! status, by status). Every request ends within `--timeout`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::ledger::{Entry, Ledger};
use crate::sse::{self, Dialect, Verdict};
use crate::upstream::answer_words;
use crate::Args;

/// What a request asks to be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    /// `x-qore-session: soak-W`.
    Session,
    /// Responses `store: true`, a new conversation.
    Store,
    /// Responses `store: true` continuing the worker's last acknowledged response.
    Continue,
    /// Nothing.
    Plain,
}

#[derive(Debug, Clone, Copy)]
struct Kind(Dialect, bool, Write);

impl Kind {
    fn name(self) -> String {
        let Kind(dialect, stream, write) = self;
        let mode = if stream { "stream" } else { "whole" };
        let write = match write {
            Write::Session => "session",
            Write::Store => "store",
            Write::Continue => "continue",
            Write::Plain => "plain",
        };
        format!("{} {mode} {write}", dialect.name())
    }
}

const KINDS: [Kind; 10] = [
    Kind(Dialect::Chat, false, Write::Session),
    Kind(Dialect::Responses, true, Write::Store),
    Kind(Dialect::Messages, true, Write::Session),
    Kind(Dialect::Responses, false, Write::Continue),
    Kind(Dialect::Chat, true, Write::Session),
    Kind(Dialect::Responses, false, Write::Store),
    Kind(Dialect::Messages, false, Write::Session),
    Kind(Dialect::Responses, true, Write::Continue),
    Kind(Dialect::Chat, true, Write::Plain),
    Kind(Dialect::Messages, false, Write::Plain),
];

/// How one request ended.
#[derive(Debug)]
enum Outcome {
    Acknowledged { id: Option<String>, text: String },
    Refused(String),
    Failed(String),
    Other(String),
}

/// Counts per outcome, in all and per kind.
#[derive(Default)]
struct Counts {
    requests: u64,
    acknowledged: u64,
    plain: u64,
    refused: u64,
    failed: u64,
    other: u64,
    /// Acknowledged answers whose text was not the upstream's answer.
    wrong_text: u64,
    /// Why requests were refused, failed or other (first words of the reason), with counts.
    reasons: BTreeMap<String, u64>,
    /// Per kind: requests, acknowledged (or plain), refused, failed, other.
    kinds: BTreeMap<String, [u64; 5]>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn body(kind: Kind, model: &str, user: &str, previous: Option<&str>) -> Value {
    let Kind(dialect, stream, write) = kind;
    let message = json!([{"role": "user", "content": user}]);
    match dialect {
        Dialect::Chat => {
            let mut b = json!({"model": model, "stream": stream, "messages": message});
            if stream {
                b["stream_options"] = json!({"include_usage": true});
            }
            b
        }
        Dialect::Messages => {
            json!({"model": model, "stream": stream, "max_tokens": 256, "messages": message})
        }
        Dialect::Responses => {
            let mut b = json!({"model": model, "stream": stream, "input": user, "store": write != Write::Plain});
            if let Some(p) = previous {
                b["previous_response_id"] = json!(p);
            }
            b
        }
    }
}

/// Send one request and read its answer to the end (or its break).
async fn send(
    http: &reqwest::Client,
    url: &str,
    kind: Kind,
    body: &Value,
    headers: &[(&str, String)],
    timeout: Duration,
) -> (Outcome, String) {
    let Kind(dialect, stream, _) = kind;
    let mut request = (http.post(format!("{url}{}", dialect.path())))
        .header("content-type", "application/json")
        .header("anthropic-version", "2023-06-01")
        .body(body.to_string())
        .timeout(timeout);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let mut response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            return (
                Outcome::Failed(format!("send: {}", kind_of(&e))),
                String::new(),
            )
        }
    };
    let backend = (response.headers().get("x-qore-backend"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let status = response.status().as_u16();
    let retry_after = response.headers().contains_key("retry-after");
    let mut text = String::new();
    let mut broke = None;
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => text.push_str(&String::from_utf8_lossy(&bytes)),
            Ok(None) => break,
            Err(e) => {
                broke = Some(kind_of(&e));
                break;
            }
        }
    }
    let outcome = match status {
        200 if stream => match sse::streamed(dialect, &text) {
            Verdict::Acknowledged { id, text } => Outcome::Acknowledged { id, text },
            Verdict::Refused(why) => Outcome::Refused(format!("error event: {why}")),
            Verdict::Cut => Outcome::Failed(format!("stream cut ({})", broke.unwrap_or("ended"))),
        },
        200 => match (broke, sse::whole(dialect, &text)) {
            (None, Some((id, text))) => Outcome::Acknowledged { id, text },
            (Some(why), _) => Outcome::Failed(format!("body cut ({why})")),
            (None, None) => Outcome::Other("200 unreadable".into()),
        },
        503 if retry_after => Outcome::Refused("503".into()),
        503 => Outcome::Refused("503 without Retry-After".into()),
        502 | 504 => Outcome::Failed(format!("{status} from the load balancer")),
        _ => {
            let head: String = text.chars().take(160).collect();
            Outcome::Other(format!("{status} {head}"))
        }
    };
    (outcome, backend)
}

/// A short, stable name for a client error (so reasons add up).
fn kind_of(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connect"
    } else if e.is_body() || e.is_decode() {
        "body"
    } else {
        "request"
    }
}

/// Everything the workers share.
struct Shared {
    args: Args,
    http: reqwest::Client,
    tag: String,
    deadline: Instant,
    ledger: Ledger,
    counts: Mutex<Counts>,
}

async fn worker(shared: Arc<Shared>, w: usize) -> Result<(), String> {
    let args = &shared.args;
    let session = format!("soak-{w}");
    let mut last: Option<String> = None;
    let mut n = 0usize;
    while Instant::now() < shared.deadline {
        let kind = KINDS[(w + n) % KINDS.len()];
        let Kind(dialect, _, write) = kind;
        let user = format!("soak {} w{w} n{n}", shared.tag);
        n += 1;
        let previous = (write == Write::Continue).then(|| last.clone()).flatten();
        let headers: Vec<(&str, String)> = match write {
            Write::Session => vec![("x-qore-session", session.clone())],
            _ => Vec::new(),
        };
        let request = body(kind, &args.model, &user, previous.as_deref());
        let (outcome, backend) = send(
            &shared.http,
            &args.url,
            kind,
            &request,
            &headers,
            args.timeout,
        )
        .await;
        let mut entry = None;
        let mut c = shared.counts.lock().map_err(|_| "counts poisoned")?;
        c.requests += 1;
        let slot = match &outcome {
            Outcome::Acknowledged { id, text } => {
                if *text != answer_words(&user).concat() {
                    c.wrong_text += 1;
                    eprintln!("soak_load: {} answered {text:?} to {user:?}", kind.name());
                }
                if write == Write::Plain {
                    c.plain += 1;
                } else if dialect == Dialect::Responses && id.is_none() {
                    c.other += 1;
                    *c.reasons
                        .entry("200 without a response id".into())
                        .or_default() += 1;
                } else {
                    c.acknowledged += 1;
                    if dialect == Dialect::Responses {
                        last.clone_from(id);
                    }
                    entry = Some(Entry {
                        kind: kind.name(),
                        at_ms: now_ms(),
                        backend: backend.clone(),
                        id: id.clone(),
                        session: (write == Write::Session).then(|| session.clone()),
                        previous: previous.clone(),
                        user: user.clone(),
                        answer: text.clone(),
                    });
                }
                1
            }
            Outcome::Refused(why) | Outcome::Failed(why) | Outcome::Other(why) => {
                let (slot, total) = match &outcome {
                    Outcome::Refused(_) => (2, &mut c.refused),
                    Outcome::Failed(_) => (3, &mut c.failed),
                    _ => (4, &mut c.other),
                };
                *total += 1;
                let reason: String = why.chars().take(80).collect();
                if slot == 4 {
                    eprintln!("soak_load: {} ({user:?}, {backend}): {why}", kind.name());
                }
                *c.reasons.entry(reason).or_default() += 1;
                slot
            }
        };
        let per_kind = c.kinds.entry(kind.name()).or_default();
        per_kind[0] += 1;
        per_kind[slot] += 1;
        drop(c);
        if let Some(entry) = entry {
            shared.ledger.append(&entry)?;
        }
    }
    Ok(())
}

/// Run the load for `--seconds`: one JSON line of counts.
pub async fn run(args: &Args) -> Result<String, String> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.seconds);
    let shared = Arc::new(Shared {
        args: args.clone(),
        http,
        tag: format!("{:x}", now_ms()),
        deadline,
        ledger: Ledger::create(&args.ledger)?,
        counts: Mutex::new(Counts::default()),
    });
    let workers: Vec<_> = (1..=args.concurrency)
        .map(|w| tokio::spawn(worker(shared.clone(), w)))
        .collect();
    let progress = {
        let shared = shared.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(10)).await;
                if let Ok(c) = shared.counts.lock() {
                    eprintln!(
                        "soak_load: {:>4.0} s: {} requests, {} acknowledged, {} refused, {} failed, {} other",
                        started.elapsed().as_secs_f64(), c.requests, c.acknowledged, c.refused, c.failed, c.other
                    );
                }
            }
        })
    };
    // Every request ends within --timeout of the deadline; a little more, then give up.
    let limit = Duration::from_secs_f64(args.seconds) + args.timeout + Duration::from_secs(10);
    let joined = tokio::time::timeout(limit, futures_util::future::join_all(workers)).await;
    progress.abort();
    let results = joined.map_err(|_| "workers did not stop in time".to_owned())?;
    for result in results {
        result.map_err(|e| format!("a worker panicked: {e}"))??;
    }
    let c = shared.counts.lock().map_err(|_| "counts poisoned")?;
    let kinds: BTreeMap<&String, Value> = (c.kinds.iter())
        .map(|(k, v)| {
            let v = json!({"requests": v[0], "ok": v[1], "refused": v[2], "failed": v[3], "other": v[4]});
            (k, v)
        })
        .collect();
    let line = json!({
        "requests": c.requests, "acknowledged": c.acknowledged, "plain": c.plain,
        "refused": c.refused, "failed": c.failed, "other": c.other, "wrong_text": c.wrong_text,
        "seconds": started.elapsed().as_secs_f64(), "reasons": c.reasons, "kinds": kinds,
    });
    Ok(line.to_string())
}
