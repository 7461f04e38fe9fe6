//! Shared support for the tool-loop tests (`tests/tool_loop*.rs`): test tools and approvers
//! that record what happened, model answers hand-written in each wire's streamed shape, a
//! reader that turns any wire's request body back into a neutral conversation, and the
//! checks every test applies (well-formed history, no orphan calls, byte-stable prefix).
//!
//! Expectations are never computed with the code under test: requests are read with the
//! small parsers here (from the wire shapes the providers document and the recordings show),
//! and the prefix check works on the raw bytes the server received.

#![allow(dead_code)] // each test target uses a different part of it

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use qore_client::tool_loop::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, LoopConfig, LoopEvent,
    ToolLoopRunner, ToolRegistry, TurnOutcome,
};
use qore_client::{
    protocols, CancellationToken, Client, ClientConfig, RequestOptions, RetryPolicy, Timeouts,
};
use qore_core::{ContentBlock, History, Role, Tool, ToolFuture, ToolOutput, ToolSpec};
use qore_testkit::{ReplayServer, Reply, Slicing};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// What happened, in order
// ---------------------------------------------------------------------------------------

/// A log shared by the tools and approvers of one test.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    pub fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Index of the first entry equal to `entry`; panics when there is none.
    pub fn at(&self, entry: &str) -> usize {
        let entries = self.entries();
        entries
            .iter()
            .position(|e| e == entry)
            .unwrap_or_else(|| panic!("{entry:?} is not in the log: {entries:#?}"))
    }

    pub fn count(&self, prefix: &str) -> usize {
        self.entries()
            .iter()
            .filter(|e| e.starts_with(prefix))
            .count()
    }
}

/// How many calls of one tool run at the same time (and at most), and how many started.
#[derive(Default)]
pub struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
    started: AtomicUsize,
}

impl Gauge {
    pub fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }

    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    fn enter(self: &Arc<Self>) -> GaugeGuard {
        self.started.fetch_add(1, Ordering::SeqCst);
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        GaugeGuard(self.clone())
    }
}

struct GaugeGuard(Arc<Gauge>);

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Logs `dropped <label>` when a call's future is dropped before it finished.
struct DropWatch {
    log: Log,
    label: String,
    finished: bool,
}

impl Drop for DropWatch {
    fn drop(&mut self) {
        if !self.finished {
            self.log.push(format!("dropped {}", self.label));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Test tools
// ---------------------------------------------------------------------------------------

type Answer = Arc<dyn Fn(&Value) -> ToolOutput + Send + Sync>;

/// A configurable tool. Every call logs `start <name> <args>`, then `end <name> <args>` when
/// it finishes, `dropped <name> <args>` when its future is dropped first, and
/// `token cancelled <name> <args>` when its cancellation token fires.
#[derive(Clone)]
pub struct TestTool {
    spec: ToolSpec,
    destructive: bool,
    parallel_safe: bool,
    timeout: Duration,
    delay: Duration,
    /// When set, a call waits until this many calls of this tool have started (a barrier:
    /// run one after the other, the first would wait for ever), or gives up after 2 s.
    rendezvous: Option<usize>,
    answer: Answer,
    pub log: Log,
    pub gauge: Arc<Gauge>,
}

impl TestTool {
    /// A destructive, not parallel-safe tool taking any object, answering `<name> <args>`.
    pub fn new(name: &str, log: &Log) -> Self {
        TestTool {
            spec: ToolSpec {
                name: name.to_owned(),
                description: format!("The {name} test tool."),
                input_schema: json!({"type": "object"}),
            },
            destructive: true,
            parallel_safe: false,
            timeout: Duration::from_secs(60),
            delay: Duration::ZERO,
            rendezvous: None,
            answer: {
                let name = name.to_owned();
                Arc::new(move |args: &Value| ToolOutput::text(format!("{name} {args}")))
            },
            log: log.clone(),
            gauge: Arc::default(),
        }
    }

    /// The echo tool: read-only and parallel-safe.
    pub fn echo(log: &Log) -> Self {
        TestTool::new("echo", log).read_only().parallel()
    }

    /// The write tool: destructive, one at a time.
    pub fn write(log: &Log) -> Self {
        TestTool::new("write", log).schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
            "required": ["path"],
        }))
    }

    pub fn read_only(mut self) -> Self {
        self.destructive = false;
        self
    }

    pub fn parallel(mut self) -> Self {
        self.parallel_safe = true;
        self
    }

    pub fn schema(mut self, schema: Value) -> Self {
        self.spec.input_schema = schema;
        self
    }

    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn rendezvous(mut self, calls: usize) -> Self {
        self.rendezvous = Some(calls);
        self
    }

    pub fn answer(mut self, answer: impl Fn(&Value) -> ToolOutput + Send + Sync + 'static) -> Self {
        self.answer = Arc::new(answer);
        self
    }

    pub fn arc(self) -> Arc<dyn Tool> {
        Arc::new(self)
    }
}

impl Tool for TestTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn destructive(&self) -> bool {
        self.destructive
    }

    fn parallel_safe(&self) -> bool {
        self.parallel_safe
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn call(&self, input: Value, cancel: CancellationToken) -> ToolFuture {
        let label = format!("{} {}", self.spec.name, input);
        let log = self.log.clone();
        let gauge = self.gauge.clone();
        let delay = self.delay;
        let rendezvous = self.rendezvous;
        let answer = self.answer.clone();
        {
            let (log, label, cancel) = (log.clone(), label.clone(), cancel.clone());
            tokio::spawn(async move {
                cancel.cancelled().await;
                log.push(format!("token cancelled {label}"));
            });
        }
        Box::pin(async move {
            log.push(format!("start {label}"));
            let _running = gauge.enter();
            let mut watch = DropWatch {
                log: log.clone(),
                label: label.clone(),
                finished: false,
            };
            if let Some(calls) = rendezvous {
                let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
                while gauge.started() < calls {
                    if tokio::time::Instant::now() > deadline {
                        watch.finished = true;
                        log.push(format!("alone {label}"));
                        return ToolOutput::error("the other calls never ran at the same time");
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            watch.finished = true;
            log.push(format!("end {label}"));
            answer(&input)
        })
    }
}

// ---------------------------------------------------------------------------------------
// Approvers
// ---------------------------------------------------------------------------------------

/// Answers approval requests from a script, in order; records every request.
pub struct ScriptedApprover {
    decisions: Mutex<VecDeque<ApprovalDecision>>,
    asked: Mutex<Vec<ApprovalRequest>>,
    log: Log,
}

impl ScriptedApprover {
    pub fn new(log: &Log, decisions: impl IntoIterator<Item = ApprovalDecision>) -> Self {
        ScriptedApprover {
            decisions: Mutex::new(decisions.into_iter().collect()),
            asked: Mutex::default(),
            log: log.clone(),
        }
    }

    /// An approver that must never be asked (tests check `asked()` is empty).
    pub fn silent(log: &Log) -> Self {
        ScriptedApprover::new(log, [])
    }

    pub fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().unwrap().clone()
    }
}

impl Approver for ScriptedApprover {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        self.log
            .push(format!("ask {} {}", request.tool, request.arguments));
        self.asked.lock().unwrap().push(request.clone());
        let decision =
            self.decisions
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(ApprovalDecision::Deny {
                    reason: Some("the test did not script this approval".into()),
                });
        Box::pin(async move { decision })
    }
}

/// Never answers (a user who walked away); counts the requests.
#[derive(Default)]
pub struct PendingApprover {
    pub asked: AtomicUsize,
}

impl Approver for PendingApprover {
    fn decide<'a>(
        &'a self,
        _request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::pending())
    }
}

// ---------------------------------------------------------------------------------------
// Running the loop
// ---------------------------------------------------------------------------------------

/// A loop event, owned.
#[derive(Debug, Clone, PartialEq)]
pub enum Ev {
    Response,
    Starting {
        round: u32,
        ids: Vec<String>,
    },
    Finished {
        id: String,
        name: String,
        text: String,
        is_error: bool,
        ran: bool,
    },
}

/// What one test needs to run the loop.
pub struct Harness {
    pub registry: ToolRegistry,
    pub policy: ApprovalPolicy,
    pub config: LoopConfig,
    pub options: RequestOptions,
    pub history: History,
}

impl Harness {
    pub fn new(tools: Vec<Arc<dyn Tool>>, policy: ApprovalPolicy) -> Self {
        let mut registry = ToolRegistry::new();
        registry.extend(tools).expect("the test tools register");
        Harness {
            registry,
            policy,
            config: LoopConfig::default(),
            options: RequestOptions::default(),
            history: History::from(vec![
                qore_core::Message::system("You are a test."),
                qore_core::Message::user("Use the tools."),
            ]),
        }
    }

    pub async fn run(
        &mut self,
        client: &Client,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> (TurnOutcome, Vec<Ev>) {
        let mut events = Vec::new();
        let mut runner = ToolLoopRunner {
            client,
            registry: &mut self.registry,
            policy: &mut self.policy,
            approver,
            config: self.config,
        };
        let outcome = runner
            .run("m", &mut self.history, &self.options, cancel, |event| {
                events.push(match event {
                    LoopEvent::Response(_) => Ev::Response,
                    LoopEvent::ToolsStarting { round, calls } => Ev::Starting {
                        round,
                        ids: calls.iter().map(|c| c.id.clone()).collect(),
                    },
                    LoopEvent::ToolFinished(report) => Ev::Finished {
                        id: report.id.clone(),
                        name: report.name.clone(),
                        text: report.output.text_content(),
                        is_error: report.output.is_error,
                        ran: report.ran,
                    },
                })
            })
            .await;
        (outcome, events)
    }
}

/// The tool events of a run (response events left out).
pub fn tool_events(events: &[Ev]) -> Vec<Ev> {
    events
        .iter()
        .filter(|e| !matches!(e, Ev::Response))
        .cloned()
        .collect()
}

// ---------------------------------------------------------------------------------------
// History checks
// ---------------------------------------------------------------------------------------

/// Every tool call in history is answered by exactly one result, in the very next message
/// (a user message), in call order, and no result answers nothing.
pub fn assert_history_well_formed(history: &History) {
    let messages = history.messages();
    for (at, message) in messages.iter().enumerate() {
        let calls: Vec<&str> = message
            .blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        let results = |m: &qore_core::Message| -> Vec<String> {
            m.blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                    _ => None,
                })
                .collect()
        };
        match message.role {
            Role::Assistant => {
                assert!(
                    results(message).is_empty(),
                    "message {at}: an assistant message holds tool results: {message:?}"
                );
                if calls.is_empty() {
                    continue;
                }
                let next = messages.get(at + 1).unwrap_or_else(|| {
                    panic!("message {at}: tool calls {calls:?} are the end of history")
                });
                assert_eq!(next.role, Role::User, "message {}: {next:?}", at + 1);
                assert_eq!(
                    results(next),
                    calls,
                    "message {}: the results do not answer the calls of message {at} in order",
                    at + 1
                );
            }
            Role::User | Role::System => {
                assert!(calls.is_empty(), "message {at}: {message:?}");
                let answered = results(message);
                if answered.is_empty() {
                    continue;
                }
                let previous = at.checked_sub(1).map(|i| &messages[i]);
                let previous_calls: Vec<String> = previous
                    .map(|m| {
                        m.blocks
                            .iter()
                            .filter_map(|b| match b {
                                ContentBlock::ToolUse { id, .. } if m.role == Role::Assistant => {
                                    Some(id.clone())
                                }
                                _ => None,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                assert_eq!(
                    answered, previous_calls,
                    "message {at}: results that answer no call of the message before"
                );
            }
        }
    }
}

/// The tool results of the last message of history: (call id, text, is_error).
pub fn last_results(history: &History) -> Vec<(String, String, bool)> {
    let last = history.last().expect("history is not empty");
    assert_eq!(last.role, Role::User, "{last:?}");
    last.blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some((
                tool_use_id.clone(),
                ToolOutput {
                    content: content.clone(),
                    is_error: *is_error,
                    structured: None,
                }
                .text_content(),
                *is_error,
            )),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The wires
// ---------------------------------------------------------------------------------------

/// A wire protocol, as the tests script and read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAiChat,
    Responses,
    Anthropic,
    Gemini,
    Ollama,
    LlamaCpp,
    Mistral,
}

/// One piece of a scripted assistant turn.
#[derive(Debug, Clone)]
pub enum Part {
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Text(String),
    Call {
        id: String,
        name: String,
        /// The argument text exactly as the model sends it.
        args: String,
        /// A signature on the call's own part (Gemini `thoughtSignature`).
        signature: Option<String>,
    },
}

pub fn text(t: &str) -> Part {
    Part::Text(t.to_owned())
}

pub fn thinking(t: &str, signature: &str) -> Part {
    Part::Thinking {
        text: t.to_owned(),
        signature: Some(signature.to_owned()),
    }
}

pub fn call(id: &str, name: &str, args: Value) -> Part {
    Part::Call {
        id: id.to_owned(),
        name: name.to_owned(),
        args: args.to_string(),
        signature: None,
    }
}

pub fn raw_call(id: &str, name: &str, args: &str) -> Part {
    Part::Call {
        id: id.to_owned(),
        name: name.to_owned(),
        args: args.to_owned(),
        signature: None,
    }
}

pub fn signed_call(id: &str, name: &str, args: Value, signature: &str) -> Part {
    Part::Call {
        id: id.to_owned(),
        name: name.to_owned(),
        args: args.to_string(),
        signature: Some(signature.to_owned()),
    }
}

/// Split `s` in two at a char boundary near the middle (a streamed argument in two deltas).
fn halves(s: &str) -> (&str, &str) {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid += 1;
    }
    s.split_at(mid)
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(event) => format!("event: {event}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

impl Wire {
    pub const ALL: [Wire; 7] = [
        Wire::OpenAiChat,
        Wire::Responses,
        Wire::Anthropic,
        Wire::Gemini,
        Wire::Ollama,
        Wire::LlamaCpp,
        Wire::Mistral,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Wire::OpenAiChat => "openai-chat",
            Wire::Responses => "openai-responses",
            Wire::Anthropic => "anthropic",
            Wire::Gemini => "gemini",
            Wire::Ollama => "ollama",
            Wire::LlamaCpp => "llamacpp",
            Wire::Mistral => "mistral",
        }
    }

    /// A client for this wire talking to `server`, sending every request once.
    pub fn client(self, server: &ReplayServer) -> Client {
        let protocol = protocols::by_name(self.name()).expect("the protocol is registered");
        let config = ClientConfig {
            retry: RetryPolicy {
                max_attempts: 1,
                initial_delay: Duration::from_millis(1),
                max_delay: Duration::from_millis(1),
            },
            timeouts: Timeouts {
                idle: Duration::from_secs(20),
                ..Timeouts::default()
            },
            ..ClientConfig::new(server.url())
        };
        Client::new(protocol, config).expect("client")
    }

    /// The top-level field holding the conversation.
    pub fn conversation_key(self) -> &'static str {
        match self {
            Wire::Responses => "input",
            Wire::Gemini => "contents",
            _ => "messages",
        }
    }

    /// Whether the wire carries chat-completions chunks.
    fn is_chat(self) -> bool {
        matches!(self, Wire::OpenAiChat | Wire::LlamaCpp | Wire::Mistral)
    }

    /// The fields a request asking for a final answer without tools must carry, written
    /// from each provider's documentation (not from the codecs).
    pub fn forbid_fields(self) -> Vec<(&'static str, Value)> {
        match self {
            Wire::Anthropic => vec![("tool_choice", json!({"type": "none"}))],
            Wire::Gemini => vec![(
                "toolConfig",
                json!({"functionCallingConfig": {"mode": "NONE"}}),
            )],
            Wire::Ollama => vec![("tools", Value::Null)],
            Wire::OpenAiChat | Wire::Responses | Wire::LlamaCpp | Wire::Mistral => {
                vec![("tool_choice", json!("none"))]
            }
        }
    }

    /// One scripted assistant turn, as this wire streams it. `usage`: (input, output).
    pub fn turn(self, parts: &[Part], usage: (u64, u64)) -> Reply {
        let calls = parts.iter().any(|p| matches!(p, Part::Call { .. }));
        match self {
            Wire::OpenAiChat | Wire::LlamaCpp | Wire::Mistral => {
                Reply::sse(chat_body(parts, calls, usage))
            }
            Wire::Responses => Reply::sse(responses_body(parts, usage)),
            Wire::Anthropic => Reply::sse(anthropic_body(parts, calls, usage)),
            Wire::Gemini => Reply::sse(gemini_body(parts, usage)),
            Wire::Ollama => Reply::new(200, ollama_body(parts, usage))
                .with_header("content-type", "application/x-ndjson")
                .with_slicing(Slicing::Irregular { seed: 7, max: 40 }),
        }
    }

    /// A turn that only says `t`.
    pub fn answer(self, t: &str) -> Reply {
        self.turn(&[text(t)], (10, 3))
    }

    /// The conversation of a request body, read back into neutral items.
    pub fn items(self, body: &Value) -> Vec<Item> {
        match self {
            Wire::OpenAiChat | Wire::LlamaCpp | Wire::Mistral => chat_items(body),
            Wire::Responses => responses_items(body),
            Wire::Anthropic => anthropic_items(body),
            Wire::Gemini => gemini_items(body),
            Wire::Ollama => ollama_items(body),
        }
    }

    /// The tool definitions of a request body: (name, description, schema).
    pub fn tool_specs(self, body: &Value) -> Vec<ToolSpec> {
        let spec = |name: &Value, description: &Value, schema: &Value| ToolSpec {
            name: name.as_str().unwrap_or_default().to_owned(),
            description: description.as_str().unwrap_or_default().to_owned(),
            input_schema: schema.clone(),
        };
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        match self {
            Wire::OpenAiChat | Wire::LlamaCpp | Wire::Mistral | Wire::Ollama => tools
                .iter()
                .map(|t| {
                    let f = &t["function"];
                    spec(&f["name"], &f["description"], &f["parameters"])
                })
                .collect(),
            Wire::Responses => tools
                .iter()
                .map(|t| spec(&t["name"], &t["description"], &t["parameters"]))
                .collect(),
            Wire::Anthropic => tools
                .iter()
                .map(|t| spec(&t["name"], &t["description"], &t["input_schema"]))
                .collect(),
            Wire::Gemini => tools
                .iter()
                .flat_map(|t| {
                    t["functionDeclarations"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
                .map(|f| spec(&f["name"], &f["description"], &f["parameters"]))
                .collect(),
        }
    }
}

fn chat_body(parts: &[Part], calls: bool, usage: (u64, u64)) -> String {
    let chunk = |delta: Value, finish: Value| {
        sse(
            None,
            &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                    "model": "m", "choices": [{"index": 0, "delta": delta,
                    "finish_reason": finish, "logprobs": null}]}),
        )
    };
    let mut body = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    let mut index = 0;
    for part in parts {
        match part {
            Part::Thinking { text, .. } => {
                body += &chunk(json!({"reasoning_content": text}), Value::Null)
            }
            Part::Text(t) => body += &chunk(json!({"content": t}), Value::Null),
            Part::Call { id, name, args, .. } => {
                body += &chunk(
                    json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                        "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                );
                let (a, b) = halves(args);
                for piece in [a, b] {
                    body += &chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        Value::Null,
                    );
                }
                index += 1;
            }
        }
    }
    body += &chunk(json!({}), json!(if calls { "tool_calls" } else { "stop" }));
    body += &sse(
        None,
        &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                "model": "m", "choices": [], "usage": {"prompt_tokens": usage.0,
                "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1}}),
    );
    body + "data: [DONE]\n\n"
}

fn anthropic_body(parts: &[Part], calls: bool, usage: (u64, u64)) -> String {
    let ev = |data: Value| sse(Some(data["type"].as_str().unwrap()), &data);
    let mut body = ev(json!({"type": "message_start", "message": {"id": "msg_1",
        "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": usage.0, "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}));
    for (index, part) in parts.iter().enumerate() {
        let delta = |delta: Value| {
            ev(json!({"type": "content_block_delta", "index": index, "delta": delta}))
        };
        match part {
            Part::Thinking { text, signature } => {
                body += &ev(json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}));
                body += &delta(json!({"type": "thinking_delta", "thinking": text}));
                if let Some(signature) = signature {
                    body += &delta(json!({"type": "signature_delta", "signature": signature}));
                }
            }
            Part::Text(t) => {
                body += &ev(json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}));
                body += &delta(json!({"type": "text_delta", "text": t}));
            }
            Part::Call { id, name, args, .. } => {
                body += &ev(json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": id, "name": name,
                                      "input": {}}}));
                let (a, b) = halves(args);
                for piece in ["", a, b] {
                    body += &delta(json!({"type": "input_json_delta", "partial_json": piece}));
                }
            }
        }
        body += &ev(json!({"type": "content_block_stop", "index": index}));
    }
    body += &ev(json!({"type": "message_delta",
        "delta": {"stop_reason": if calls { "tool_use" } else { "end_turn" },
                  "stop_sequence": null},
        "usage": {"output_tokens": usage.1}}));
    body + &ev(json!({"type": "message_stop"}))
}

fn gemini_body(parts: &[Part], usage: (u64, u64)) -> String {
    let mut body = String::new();
    for (at, part) in parts.iter().enumerate() {
        let mut wire = match part {
            Part::Thinking { text, signature } => {
                let mut p = json!({"text": text, "thought": true});
                if let Some(s) = signature {
                    p["thoughtSignature"] = json!(s);
                }
                p
            }
            Part::Text(t) => json!({"text": t}),
            Part::Call {
                name,
                args,
                signature,
                ..
            } => {
                let args: Value =
                    serde_json::from_str(args).expect("Gemini sends arguments as an object");
                let mut p = json!({"functionCall": {"name": name, "args": args}});
                if let Some(s) = signature {
                    p["thoughtSignature"] = json!(s);
                }
                p
            }
        };
        let mut candidate = json!({"content": {"parts": [wire.take()], "role": "model"},
                                   "index": 0});
        let mut frame = json!({"candidates": [], "modelVersion": "gemini-2.5-flash",
                               "responseId": "resp-1"});
        if at + 1 == parts.len() {
            candidate["finishReason"] = json!("STOP");
            frame["usageMetadata"] = json!({"promptTokenCount": usage.0,
                "candidatesTokenCount": usage.1, "totalTokenCount": usage.0 + usage.1});
        }
        frame["candidates"] = json!([candidate]);
        body += &format!("data: {frame}\r\n\r\n");
    }
    body
}

fn ollama_body(parts: &[Part], usage: (u64, u64)) -> String {
    let line = |message: Value| {
        format!(
            "{}\n",
            json!({"model": "qwen3:4b", "created_at": "2026-08-04T19:59:07.278934Z",
                   "message": message, "done": false})
        )
    };
    let mut body = String::new();
    let mut calls = Vec::new();
    for part in parts {
        match part {
            Part::Thinking { text, .. } => {
                body += &line(json!({"role": "assistant", "content": "", "thinking": text}))
            }
            Part::Text(t) => body += &line(json!({"role": "assistant", "content": t})),
            Part::Call { id, name, args, .. } => {
                let args: Value =
                    serde_json::from_str(args).expect("Ollama sends arguments as an object");
                calls.push(
                    json!({"id": id, "function": {"index": calls.len(), "name": name,
                                  "arguments": args}}),
                );
            }
        }
    }
    if !calls.is_empty() {
        body += &line(json!({"role": "assistant", "content": "", "tool_calls": calls}));
    }
    body + &format!(
        "{}\n",
        json!({"model": "qwen3:4b", "created_at": "2026-08-04T19:59:07.304583Z",
               "message": {"role": "assistant", "content": ""}, "done": true,
               "done_reason": "stop", "total_duration": 5362333583u64,
               "prompt_eval_count": usage.0, "eval_count": usage.1})
    )
}

fn responses_body(parts: &[Part], usage: (u64, u64)) -> String {
    let ev = |data: Value| sse(Some(data["type"].as_str().unwrap()), &data);
    let mut seq = 0;
    let mut next = || {
        seq += 1;
        seq
    };
    let response = |status: &str, output: Value| {
        json!({"id": "resp_1", "object": "response", "created_at": 0, "status": status,
               "model": "gpt-5.2", "output": output, "parallel_tool_calls": true,
               "tool_choice": "auto", "store": false})
    };
    let mut body = ev(
        json!({"type": "response.created", "sequence_number": next(),
                             "response": response("in_progress", json!([]))}),
    );
    let mut done_items = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let (added, deltas, done) = match part {
            Part::Thinking { text, signature } => {
                let id = format!("rs_{index}");
                let mut added = json!({"type": "reasoning", "id": id, "summary": []});
                let mut done = json!({"type": "reasoning", "id": id,
                    "summary": [{"type": "summary_text", "text": text}]});
                if let Some(s) = signature {
                    added["encrypted_content"] = json!(s);
                    done["encrypted_content"] = json!(s);
                }
                let deltas = vec![
                    json!({"type": "response.reasoning_summary_part.added", "item_id": id,
                           "output_index": index, "summary_index": 0,
                           "part": {"type": "summary_text", "text": ""}}),
                    json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
                           "output_index": index, "summary_index": 0, "delta": text}),
                    json!({"type": "response.reasoning_summary_text.done", "item_id": id,
                           "output_index": index, "summary_index": 0, "text": text}),
                ];
                (added, deltas, done)
            }
            Part::Text(t) => {
                let id = format!("msg_{index}");
                let added = json!({"type": "message", "id": id, "role": "assistant",
                                   "status": "in_progress", "content": []});
                let done = json!({"type": "message", "id": id, "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": t, "annotations": []}]});
                let deltas = vec![
                    json!({"type": "response.output_text.delta", "item_id": id,
                           "output_index": index, "content_index": 0, "delta": t}),
                    json!({"type": "response.output_text.done", "item_id": id,
                           "output_index": index, "content_index": 0, "text": t}),
                ];
                (added, deltas, done)
            }
            Part::Call { id, name, args, .. } => {
                let item_id = format!("fc_{index}");
                let added = json!({"type": "function_call", "id": item_id, "call_id": id,
                                   "name": name, "arguments": "", "status": "in_progress"});
                let done = json!({"type": "function_call", "id": item_id, "call_id": id,
                                  "name": name, "arguments": args, "status": "completed"});
                let (a, b) = halves(args);
                let deltas = vec![
                    json!({"type": "response.function_call_arguments.delta",
                           "item_id": item_id, "output_index": index, "delta": a}),
                    json!({"type": "response.function_call_arguments.delta",
                           "item_id": item_id, "output_index": index, "delta": b}),
                    json!({"type": "response.function_call_arguments.done",
                           "item_id": item_id, "output_index": index, "arguments": args}),
                ];
                (added, deltas, done)
            }
        };
        body += &ev(
            json!({"type": "response.output_item.added", "sequence_number": next(),
                           "output_index": index, "item": added}),
        );
        for mut delta in deltas {
            delta["sequence_number"] = json!(next());
            body += &ev(delta);
        }
        body += &ev(
            json!({"type": "response.output_item.done", "sequence_number": next(),
                           "output_index": index, "item": done.clone()}),
        );
        done_items.push(done);
    }
    let mut completed = response("completed", Value::Array(done_items));
    completed["usage"] = json!({"input_tokens": usage.0, "output_tokens": usage.1,
        "total_tokens": usage.0 + usage.1, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0}});
    body + &ev(
        json!({"type": "response.completed", "sequence_number": next(),
                      "response": completed}),
    )
}

// ---------------------------------------------------------------------------------------
// Reading requests back
// ---------------------------------------------------------------------------------------

/// One item of a conversation as a request carries it, whatever the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    System(String),
    User(String),
    Assistant {
        text: String,
        signature: Option<String>,
    },
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Call {
        /// `None` where the wire carried no id (Gemini 2.x).
        id: Option<String>,
        name: String,
        /// Parsed arguments, or the raw text as a JSON string when it was not JSON.
        args: Value,
        signature: Option<String>,
    },
    Result {
        id: Option<String>,
        text: String,
        is_error: bool,
    },
}

impl Item {
    pub fn is_call(&self) -> bool {
        matches!(self, Item::Call { .. })
    }

    pub fn is_result(&self) -> bool {
        matches!(self, Item::Result { .. })
    }

    pub fn signature(&self) -> Option<&str> {
        match self {
            Item::Assistant { signature, .. }
            | Item::Thinking { signature, .. }
            | Item::Call { signature, .. } => signature.as_deref(),
            _ => None,
        }
    }
}

fn string_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Text of a content that is a string or an array of text parts.
fn content_text(v: &Value) -> String {
    match v {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => string_of(other),
    }
}

/// Arguments sent as a JSON string (Chat Completions, Responses).
fn args_from_text(v: &Value) -> Value {
    let raw = string_of(v);
    serde_json::from_str(&raw).unwrap_or(Value::String(raw))
}

/// `Error: ` marks a failed tool on wires without an error flag.
fn result_from_text(id: Option<String>, text: String) -> Item {
    match text.strip_prefix("Error: ") {
        Some(rest) => Item::Result {
            id,
            text: rest.to_owned(),
            is_error: true,
        },
        None => Item::Result {
            id,
            text,
            is_error: false,
        },
    }
}

fn chat_items(body: &Value) -> Vec<Item> {
    let mut items = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        match m["role"].as_str() {
            Some("system") | Some("developer") => {
                items.push(Item::System(content_text(&m["content"])))
            }
            Some("user") => items.push(Item::User(content_text(&m["content"]))),
            Some("assistant") => {
                if let Some(r) = m["reasoning_content"].as_str().filter(|r| !r.is_empty()) {
                    items.push(Item::Thinking {
                        text: r.to_owned(),
                        signature: None,
                    });
                }
                let t = content_text(&m["content"]);
                if !t.is_empty() {
                    items.push(Item::Assistant {
                        text: t,
                        signature: None,
                    });
                }
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    items.push(Item::Call {
                        id: c["id"].as_str().map(str::to_owned),
                        name: string_of(&c["function"]["name"]),
                        args: args_from_text(&c["function"]["arguments"]),
                        signature: None,
                    });
                }
            }
            Some("tool") => items.push(result_from_text(
                m["tool_call_id"].as_str().map(str::to_owned),
                content_text(&m["content"]),
            )),
            other => panic!("unknown chat role {other:?} in {m}"),
        }
    }
    items
}

fn responses_items(body: &Value) -> Vec<Item> {
    let mut items = Vec::new();
    if let Some(i) = body["instructions"].as_str() {
        items.push(Item::System(i.to_owned()));
    }
    for it in body["input"].as_array().into_iter().flatten() {
        let kind = it["type"].as_str().unwrap_or("message");
        match kind {
            "message" => {
                let t = content_text(&it["content"]);
                match it["role"].as_str() {
                    Some("user") => items.push(Item::User(t)),
                    Some("assistant") => items.push(Item::Assistant {
                        text: t,
                        signature: None,
                    }),
                    _ => items.push(Item::System(t)),
                }
            }
            "reasoning" => {
                let summary = content_text(&it["summary"]);
                let content = content_text(&it["content"]);
                items.push(Item::Thinking {
                    text: if summary.is_empty() { content } else { summary },
                    signature: it["encrypted_content"].as_str().map(str::to_owned),
                });
            }
            "function_call" => items.push(Item::Call {
                id: it["call_id"].as_str().map(str::to_owned),
                name: string_of(&it["name"]),
                args: args_from_text(&it["arguments"]),
                signature: None,
            }),
            "function_call_output" => items.push(result_from_text(
                it["call_id"].as_str().map(str::to_owned),
                content_text(&it["output"]),
            )),
            other => panic!("unknown Responses input item {other:?}: {it}"),
        }
    }
    items
}

fn anthropic_items(body: &Value) -> Vec<Item> {
    let mut items = Vec::new();
    match &body["system"] {
        Value::String(s) => items.push(Item::System(s.clone())),
        Value::Array(blocks) => {
            for b in blocks {
                items.push(Item::System(string_of(&b["text"])));
            }
        }
        _ => {}
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        let user = m["role"] == "user";
        let blocks = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(blocks) => blocks.clone(),
            other => panic!("unexpected Anthropic content {other}"),
        };
        for b in blocks {
            match b["type"].as_str() {
                Some("text") if user => items.push(Item::User(string_of(&b["text"]))),
                Some("text") => items.push(Item::Assistant {
                    text: string_of(&b["text"]),
                    signature: None,
                }),
                Some("thinking") => items.push(Item::Thinking {
                    text: string_of(&b["thinking"]),
                    signature: b["signature"].as_str().map(str::to_owned),
                }),
                Some("redacted_thinking") => items.push(Item::Thinking {
                    text: String::new(),
                    signature: b["data"].as_str().map(str::to_owned),
                }),
                Some("tool_use") => items.push(Item::Call {
                    id: b["id"].as_str().map(str::to_owned),
                    name: string_of(&b["name"]),
                    args: b["input"].clone(),
                    signature: None,
                }),
                Some("tool_result") => items.push(Item::Result {
                    id: b["tool_use_id"].as_str().map(str::to_owned),
                    text: content_text(&b["content"]),
                    is_error: b["is_error"] == json!(true),
                }),
                other => panic!("unexpected Anthropic block {other:?}: {b}"),
            }
        }
    }
    items
}

fn gemini_items(body: &Value) -> Vec<Item> {
    let mut items = Vec::new();
    for p in body["systemInstruction"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        items.push(Item::System(string_of(&p["text"])));
    }
    for c in body["contents"].as_array().into_iter().flatten() {
        let user = c["role"] == "user";
        for p in c["parts"].as_array().into_iter().flatten() {
            let signature = p["thoughtSignature"].as_str().map(str::to_owned);
            if let Some(f) = p.get("functionCall") {
                items.push(Item::Call {
                    id: f["id"].as_str().map(str::to_owned),
                    name: string_of(&f["name"]),
                    args: f["args"].clone(),
                    signature,
                });
            } else if let Some(f) = p.get("functionResponse") {
                let response = &f["response"];
                let (text, is_error) = match (response.get("error"), response.get("result")) {
                    (Some(e), _) => (string_of(e), true),
                    (None, Some(r)) => (string_of(r), false),
                    (None, None) => (response.to_string(), false),
                };
                items.push(Item::Result {
                    id: f["id"].as_str().map(str::to_owned),
                    text,
                    is_error,
                });
            } else if p["thought"] == json!(true) {
                items.push(Item::Thinking {
                    text: string_of(&p["text"]),
                    signature,
                });
            } else if user {
                items.push(Item::User(string_of(&p["text"])));
            } else {
                items.push(Item::Assistant {
                    text: string_of(&p["text"]),
                    signature,
                });
            }
        }
    }
    items
}

fn ollama_items(body: &Value) -> Vec<Item> {
    let mut items = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        match m["role"].as_str() {
            Some("system") => items.push(Item::System(string_of(&m["content"]))),
            Some("user") => items.push(Item::User(string_of(&m["content"]))),
            Some("assistant") => {
                if let Some(t) = m["thinking"].as_str().filter(|t| !t.is_empty()) {
                    items.push(Item::Thinking {
                        text: t.to_owned(),
                        signature: None,
                    });
                }
                let t = string_of(&m["content"]);
                if !t.is_empty() {
                    items.push(Item::Assistant {
                        text: t,
                        signature: None,
                    });
                }
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    items.push(Item::Call {
                        id: c["id"].as_str().map(str::to_owned),
                        name: string_of(&c["function"]["name"]),
                        args: c["function"]["arguments"].clone(),
                        signature: None,
                    });
                }
            }
            Some("tool") => items.push(result_from_text(
                m["tool_call_id"].as_str().map(str::to_owned),
                string_of(&m["content"]),
            )),
            other => panic!("unknown Ollama role {other:?} in {m}"),
        }
    }
    items
}

/// Every call of a request's conversation is answered before anything else is said, in call
/// order (by id where the wire has ids, else by position), and no result answers nothing.
pub fn assert_no_orphans(items: &[Item], what: &str) {
    let mut pending: VecDeque<&Option<String>> = VecDeque::new();
    let mut answering = false;
    for (at, item) in items.iter().enumerate() {
        match item {
            Item::Call { id, .. } => {
                assert!(
                    !answering || pending.is_empty(),
                    "{what}: item {at}: a new call before {pending:?} were answered"
                );
                answering = false;
                pending.push_back(id);
            }
            Item::Thinking { .. } | Item::Assistant { .. } => {
                assert!(
                    !answering || pending.is_empty(),
                    "{what}: item {at}: the assistant speaks before {pending:?} were answered"
                );
                answering = false;
            }
            Item::Result { id, .. } => {
                answering = true;
                let expected = pending
                    .pop_front()
                    .unwrap_or_else(|| panic!("{what}: item {at}: a result for no call: {item:?}"));
                if let (Some(expected), Some(id)) = (expected, id) {
                    assert_eq!(id, expected, "{what}: item {at}: results out of call order");
                }
            }
            Item::User(_) | Item::System(_) => {
                assert!(
                    pending.is_empty(),
                    "{what}: item {at}: calls {pending:?} were never answered"
                );
                answering = false;
            }
        }
    }
    assert!(
        pending.is_empty(),
        "{what}: calls {pending:?} were never answered"
    );
}

/// The calls of `items` as (id, name, args).
pub fn calls_of(items: &[Item]) -> Vec<(Option<String>, String, Value)> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Call { id, name, args, .. } => Some((id.clone(), name.clone(), args.clone())),
            _ => None,
        })
        .collect()
}

/// The results of `items` as (id, text, is_error).
pub fn results_of(items: &[Item]) -> Vec<(Option<String>, String, bool)> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Result { id, text, is_error } => Some((id.clone(), text.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The byte-stable prefix
// ---------------------------------------------------------------------------------------

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end (exclusive) of the JSON value starting at `i`.
fn skip_value(b: &[u8], i: usize) -> usize {
    let i = skip_ws(b, i);
    match b[i] {
        b'"' => {
            let mut j = i + 1;
            while b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        }
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b[j] {
                    b'"' => {
                        j = skip_value(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !b[j].is_ascii_whitespace()
            {
                j += 1;
            }
            j
        }
    }
}

/// The byte range of the value of top-level field `key` of the JSON object `b`.
pub fn field_span(b: &[u8], key: &str) -> Option<(usize, usize)> {
    let mut i = skip_ws(b, 0);
    assert_eq!(b[i], b'{', "the body is not a JSON object");
    i += 1;
    loop {
        i = skip_ws(b, i);
        if b[i] == b'}' {
            return None;
        }
        let key_end = skip_value(b, i);
        let name: String = serde_json::from_slice(&b[i..key_end]).expect("a key");
        i = skip_ws(b, key_end);
        assert_eq!(b[i], b':');
        let start = skip_ws(b, i + 1);
        let end = skip_value(b, start);
        if name == key {
            return Some((start, end));
        }
        i = skip_ws(b, end);
        if b[i] == b',' {
            i += 1;
        }
    }
}

/// `next` continues `prev`: the bytes of `prev` up to the end of its last conversation
/// element are exactly the first bytes of `next`, and `next` adds elements right there. The
/// rest of the body (tools, system, options) is byte-identical too, unless `changed` names
/// fields that may differ (the round-limit request); then the rest must be equal as JSON
/// apart from those fields.
pub fn assert_prefix_stable(prev: &[u8], next: &[u8], key: &str, changed: &[&str], what: &str) {
    let (_, prev_end) = field_span(prev, key).unwrap_or_else(|| panic!("{what}: no {key}"));
    let (_, next_end) = field_span(next, key).unwrap_or_else(|| panic!("{what}: no {key}"));
    let close = prev_end - 1;
    assert_eq!(prev[close], b']', "{what}: {key} is not an array");
    let common = prev.iter().zip(next).take_while(|(a, b)| a == b).count();
    assert!(
        common >= close,
        "{what}: the continuation differs from the previous request at byte {common} \
         (before the end of the previous {key} at {close}):\n previous: …{}…\n next:     …{}…",
        String::from_utf8_lossy(&prev[common.saturating_sub(80)..(common + 80).min(prev.len())]),
        String::from_utf8_lossy(&next[common.saturating_sub(80)..(common + 80).min(next.len())]),
    );
    assert_eq!(
        next[close], b',',
        "{what}: the continuation adds no element to {key}"
    );
    if changed.is_empty() {
        assert_eq!(
            String::from_utf8_lossy(&prev[prev_end..]),
            String::from_utf8_lossy(&next[next_end..]),
            "{what}: the fields after {key} changed"
        );
    } else {
        let strip = |b: &[u8]| {
            let mut v: Value = serde_json::from_slice(b).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove(key);
            for k in changed {
                o.remove(*k);
            }
            v
        };
        assert_eq!(
            strip(prev),
            strip(next),
            "{what}: fields besides {changed:?} changed"
        );
    }
}
