//! What the tool-loop bench runs: the scripted model (Chat Completions SSE bodies written
//! here, in the shape the providers stream), two instant tools, an approver that is never
//! asked, and the conversation every run starts from.
//!
//! A tool-call turn of round `r` with `c` calls: a role chunk, one short text delta, then per
//! call a header chunk (id, name) and the arguments in three pieces, `finish_reason:
//! "tool_calls"`, a usage chunk and `[DONE]`. Call `j` is `lookup` (read-only, parallel-safe)
//! when `j` is even and `record` (destructive, run one at a time, allowed by `Auto` approval)
//! when odd, so one call per round is one `lookup` and four are two of each. Every round's
//! arguments differ (the repetition guard never fires) and have the same length (every round's
//! body is as long as the first). The final answer: six text deltas, `finish_reason: "stop"`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use qore_client::tool_loop::{ApprovalDecision, ApprovalRequest, Approver};
use qore_core::{CancellationToken, History, Message, Tool, ToolFuture, ToolOutput, ToolSpec};
use serde_json::{json, Value};

pub const MODEL: &str = "bench-model";

/// The text every run ends with.
pub const FINAL_TEXT: &str =
    "All items are recorded. The lookups returned the expected values and nothing is missing.";

/// What each tool result says after its key (about 300 bytes, a small realistic result).
const RESULT_TEXT: &str = "status=ok; owner=team-storage; updated=2024-11-02T10:14:03Z; \
    size=18.2 KiB; checksum=9f2c1e7ab0d44e51; notes=The entry exists and matches the schema. \
    Related entries: item-a, item-b, item-c. No conflicts were found in the last 30 days of \
    changes; the current revision is 7 and it was reviewed.";

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn chunk(delta: Value, finish: Value) -> String {
    sse(&json!({
        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_730_000_000,
        "model": MODEL, "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    }))
}

fn tail(finish: &str, usage: (u64, u64)) -> String {
    let mut body = chunk(json!({}), json!(finish));
    body += &sse(&json!({
        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_730_000_000,
        "model": MODEL, "system_fingerprint": "fp_bench", "choices": [],
        "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1,
                  "total_tokens": usage.0 + usage.1},
    }));
    body + "data: [DONE]\n\n"
}

/// The id of call `j` of round `round` (1-based rounds).
pub fn call_id(round: u32, j: usize) -> String {
    format!("call_{round:04}_{j}")
}

/// The tool name and argument text of call `j` of round `round`.
pub fn call_args(round: u32, j: usize) -> (&'static str, String) {
    let key = format!("item-{round:04}-{j}");
    if j.is_multiple_of(2) {
        ("lookup", json!({"key": key}).to_string())
    } else {
        (
            "record",
            json!({"key": key, "value": format!("checked in round {round:04}")}).to_string(),
        )
    }
}

/// The streamed assistant turn of round `round` with `calls` tool calls.
pub fn tool_turn(round: u32, calls: usize) -> String {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    body += &chunk(json!({"content": "Let me check."}), Value::Null);
    for j in 0..calls {
        let (name, args) = call_args(round, j);
        body += &chunk(
            json!({"tool_calls": [{"index": j, "id": call_id(round, j), "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        );
        let (a, rest) = args.split_at(args.len() / 3);
        let (b, c) = rest.split_at(rest.len() / 2);
        for piece in [a, b, c] {
            body += &chunk(
                json!({"tool_calls": [{"index": j, "function": {"arguments": piece}}]}),
                Value::Null,
            );
        }
    }
    body + &tail("tool_calls", (1200, 20 * calls as u64))
}

/// The streamed final answer (no tool calls).
pub fn final_answer() -> String {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    let words: Vec<&str> = FINAL_TEXT.split_inclusive(' ').collect();
    for piece in words.chunks(words.len().div_ceil(6)) {
        body += &chunk(json!({"content": piece.concat()}), Value::Null);
    }
    body + &tail("stop", (1500, 18))
}

/// The conversation each run starts from: a system prompt of agent size and a user turn.
pub fn start_history() -> History {
    let mut system = String::from(
        "You are a careful engineering assistant working in a repository. Use the tools to \
         look things up before you answer; record what you checked.\n",
    );
    for n in 1..=12 {
        system += &format!(
            "Rule {n}: keep answers short, cite the entries you used, never invent keys, and \
             ask for a lookup when an entry may have changed since the last round.\n"
        );
    }
    History::from(vec![
        Message::system(system),
        Message::user("Check every item of the release list and record the result of each."),
    ])
}

/// An instant tool: answers at once with `<name> <key>: <RESULT_TEXT>`.
pub struct InstantTool {
    spec: ToolSpec,
    destructive: bool,
    parallel_safe: bool,
}

impl InstantTool {
    fn lookup() -> Self {
        InstantTool {
            spec: ToolSpec {
                name: "lookup".into(),
                description: "Look an entry up by key and return its current state.".into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {"key": {"type": "string", "description": "The entry key."}},
                    "required": ["key"],
                    "additionalProperties": false,
                }),
            },
            destructive: false,
            parallel_safe: true,
        }
    }

    fn record() -> Self {
        InstantTool {
            spec: ToolSpec {
                name: "record".into(),
                description: "Record a value for an entry (changes the store).".into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "key": {"type": "string", "description": "The entry key."},
                        "value": {"type": "string", "description": "What to record."},
                    },
                    "required": ["key", "value"],
                    "additionalProperties": false,
                }),
            },
            destructive: true,
            parallel_safe: false,
        }
    }
}

impl Tool for InstantTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn destructive(&self) -> bool {
        self.destructive
    }

    fn parallel_safe(&self) -> bool {
        self.parallel_safe
    }

    fn call(&self, input: Value, _cancel: CancellationToken) -> ToolFuture {
        let key = input.get("key").and_then(Value::as_str).unwrap_or("?");
        let text = format!("{} {key}: {RESULT_TEXT}", self.spec.name);
        Box::pin(std::future::ready(ToolOutput::text(text)))
    }
}

/// Both tools.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(InstantTool::lookup()),
        Arc::new(InstantTool::record()),
    ]
}

/// Denies and counts: with `Auto` approval it must never be asked.
#[derive(Default)]
pub struct CountingApprover {
    pub asked: AtomicUsize,
}

impl Approver for CountingApprover {
    fn decide<'a>(
        &'a self,
        _request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        Box::pin(std::future::ready(ApprovalDecision::Deny {
            reason: Some("the bench approves nothing by hand".into()),
        }))
    }
}
