//! A real model calling a real tool: SmolLM2-135M-Instruct under llama-cpp-python's server
//! with `--chat_format chatml-function-calling` (`scripts/tool-model.sh`), which answers a
//! request with tools and `tool_choice: "auto"` with a tool call whenever it is not streamed.
//! The loop runs a built-in read-only tool (`qore_tools::ReadFile` over a temporary project)
//! until the round limit forces a final answer with tools forbidden.
//!
//! Requests go through a loopback [`RecordingProxy`], so the checks see the bytes the engine
//! sent. The model is tiny: the tests assert structure, never words. The first run builds
//! llama-cpp-python into a venv under the cache dir (minutes); when that fails the tests
//! are skipped with the reason printed, except under `CI`, where they fail.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use qore_client::tool_loop::{
    ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRequest, Approver, AtRoundLimit,
    CallReport, LoopConfig, LoopEvent, ToolLoopRunner, ToolRegistry, TurnOutcome,
};
use qore_client::{
    protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions, RetryPolicy,
};
use qore_core::{
    ContentBlock, ErrorCategory, History, Message, Role, StreamOutcome, ToolResultPart,
};
use qore_testkit::{RecordedRequest, RecordingProxy};
use serde_json::{json, Value};

const MODEL: &str = "smollm2-135m-instruct";

/// The tool server's address, started once per test binary; `None` (after printing why)
/// when it cannot be installed or started outside CI.
fn server() -> Option<SocketAddr> {
    static SERVER: OnceLock<Result<SocketAddr, String>> = OnceLock::new();
    let started = SERVER.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/tool-model.sh");
        let status = Command::new("bash")
            .args([script, "start"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()
            .map_err(|err| format!("cannot run bash: {err}"))?;
        if !status.success() {
            return Err(format!("`{script} start` failed ({status})"));
        }
        let port = std::env::var("QORE_TOOL_PORT").unwrap_or_else(|_| "18081".into());
        format!("127.0.0.1:{port}")
            .parse()
            .map_err(|err| format!("bad QORE_TOOL_PORT: {err}"))
    });
    match started {
        Ok(addr) => Some(*addr),
        Err(why) if std::env::var_os("CI").is_some() => panic!("the tool model server: {why}"),
        Err(why) => {
            eprintln!("skipping: the tool model server is not available: {why}");
            None
        }
    }
}

/// A client for the server, through a fresh recording proxy. No retries: every request the
/// proxy sees is one the loop made.
async fn client(server: SocketAddr) -> (Client, RecordingProxy) {
    let proxy = RecordingProxy::start(server).await.unwrap();
    let config = ClientConfig {
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
        ..ClientConfig::new(format!("{}/v1", proxy.url()))
    };
    let client = Client::new(protocols::by_name("openai-chat").unwrap(), config).unwrap();
    (client, proxy)
}

/// `tool_choice: "auto"` (this server offers no tool calls without it), temperature 0.
fn options(stream: bool) -> RequestOptions {
    let mut options = RequestOptions {
        stream,
        max_tokens: Some(48),
        temperature: Some(0.0),
        ..RequestOptions::default()
    };
    options.extra.insert("tool_choice".into(), json!("auto"));
    options
}

/// A small project: two files and a directory.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# demo\nA demo project.\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    dir
}

fn registry(root: &std::path::Path) -> ToolRegistry {
    let sandbox = Arc::new(qore_tools::Sandbox::new(root).unwrap());
    let options = Arc::new(qore_tools::ToolOptions::default());
    let mut registry = ToolRegistry::new();
    registry
        .add(Arc::new(qore_tools::ReadFile::new(sandbox, options)))
        .unwrap();
    registry
}

/// The model picks the arguments (the server constrains them to the tool's schema): asked
/// to read `README.md`, it reads `README.md`; asked about a directory, it invents paths. The
/// checks below hold whatever it picks, except that one call must have succeeded.
fn history() -> History {
    History::from(vec![
        Message::system("You are a coding assistant. Use the tools to look at the project."),
        Message::user("Read the file README.md."),
    ])
}

/// Approval is never asked in Auto mode; answering would be a bug.
struct NeverAsked;

impl Approver for NeverAsked {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ApprovalDecision> + Send + 'a>> {
        panic!("approval asked in Auto mode: {request:?}")
    }
}

fn tool_calls(message: &Message) -> Vec<&str> {
    message
        .blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect()
}

fn body(request: &RecordedRequest) -> Value {
    request.json().expect("a JSON request body")
}

#[tokio::test]
async fn the_loop_runs_a_real_tool_then_the_round_limit_forces_a_final_answer() {
    let Some(server) = server() else { return };
    let (client, proxy) = client(server).await;
    let project = project();
    let mut registry = registry(project.path());
    let mut policy = ApprovalPolicy::new(ApprovalMode::Auto);
    let mut runner = ToolLoopRunner {
        client: &client,
        registry: &mut registry,
        policy: &mut policy,
        approver: &NeverAsked,
        config: LoopConfig {
            max_rounds: 1,
            at_round_limit: AtRoundLimit::FinalAnswer,
            repeat_limit: 3,
            ..LoopConfig::default()
        },
    };
    let mut history = history();
    let mut reports: Vec<CallReport> = Vec::new();
    let outcome = tokio::time::timeout(
        Duration::from_secs(300),
        runner.run(
            MODEL,
            &mut history,
            &options(false),
            &CancellationToken::new(),
            |event| {
                if let LoopEvent::ToolFinished(report) = event {
                    reports.push(report.clone());
                }
            },
        ),
    )
    .await
    .expect("the loop ends within 5 minutes");

    // It finished after the forced final answer (one round ran; the next round's calls
    // were answered "not run").
    assert!(
        matches!(outcome, TurnOutcome::Finished { rounds: 2, .. }),
        "{outcome:?}\n{history:#?}"
    );

    // A real tool ran and returned non-error content.
    let ran: Vec<&CallReport> = reports.iter().filter(|r| r.ran).collect();
    assert!(!ran.is_empty(), "no tool ran: {reports:#?}");
    for report in &ran {
        assert_eq!(report.name, "read_file");
        assert!(!report.output.is_error, "{report:#?}");
        assert!(
            !report.output.text_content().trim().is_empty(),
            "{report:#?}"
        );
    }
    assert!(reports.iter().any(|r| !r.ran), "{reports:#?}");

    // The last message is the assistant's, with no tool calls.
    let last = history.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert!(tool_calls(last).is_empty(), "{last:#?}");

    // Every call in history has exactly one result, with its id, in the next message.
    let messages: Vec<&Message> = history.iter().collect();
    let mut results: HashMap<&str, usize> = HashMap::new();
    for message in &messages {
        for block in &message.blocks {
            if let ContentBlock::ToolResult { tool_use_id, .. } = block {
                *results.entry(tool_use_id.as_str()).or_default() += 1;
            }
        }
    }
    let mut calls = 0;
    for (i, message) in messages.iter().enumerate() {
        for id in tool_calls(message) {
            calls += 1;
            assert_eq!(results.get(id), Some(&1), "call {id}: {history:#?}");
            let next = messages.get(i + 1).expect("a message after the calls");
            assert!(
                next.blocks.iter().any(|b| matches!(b,
                    ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id)),
                "{history:#?}"
            );
        }
    }
    assert_eq!(
        calls,
        results.len(),
        "a result without its call: {history:#?}"
    );
    assert!(calls >= 2, "{history:#?}");
    let real_result = messages.iter().flat_map(|m| &m.blocks).any(|b| {
        matches!(b, ContentBlock::ToolResult { content, is_error: false, .. }
            if content.iter().any(|p| matches!(p, ToolResultPart::Text { text } if !text.is_empty())))
    });
    assert!(real_result, "{history:#?}");

    // What was sent: three non-streamed requests with the tool on offer; the first two let
    // the model choose, the last forbade tool calls. Assistant turns with only tool calls
    // carry `content: ""` (this server answers null or an absent `content` with a 500).
    let requests = proxy.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    for (n, request) in requests.iter().enumerate() {
        let body = body(request);
        assert_eq!(body["stream"], false, "request {n}");
        assert_eq!(body["tools"][0]["function"]["name"], "read_file");
        let expected = if n == 2 { "none" } else { "auto" };
        assert_eq!(body["tool_choice"], expected, "request {n}");
        for message in body["messages"].as_array().unwrap() {
            if message["role"] == "assistant" && message.get("tool_calls").is_some() {
                assert!(message["content"].is_string(), "request {n}: {message}");
            }
        }
    }
}

#[tokio::test]
async fn a_streamed_auto_request_is_a_clear_empty_response_error() {
    let Some(server) = server() else { return };
    let (client, proxy) = client(server).await;
    let project = project();
    let registry = registry(project.path());
    let history = history();
    let options = options(true);
    let request = ChatRequest {
        model: MODEL,
        history: &history,
        tools: registry.specs(),
        options: &options,
    };
    let outcome = client
        .stream(&request, CancellationToken::new())
        .finish()
        .await;
    match outcome {
        StreamOutcome::Failed { error, .. } => {
            assert_eq!(error.category, ErrorCategory::Provider, "{error:?}");
            assert!(error.message.contains("empty response"), "{error:?}");
        }
        other => panic!("not a clear failure: {other:?}"),
    }
    assert_eq!(proxy.requests().len(), 1);
}
