//! A templated agent runs the tool loop over real loopback HTTP: every request (the first
//! and each continuation) is rendered from history by the bundled profile, says what the
//! codec's own encoder says, and continues the previous request byte for byte.

use std::path::Path;
use std::sync::Arc;

use qore_agents::profile::ProfileFile;
use qore_agents::providers::Providers;
use qore_agents::render::AgentRenderer;
use qore_agents::{Catalog, Partials};
use qore_client::tool_loop::{
    ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRequest, Approver, LoopConfig,
    ToolLoopRunner, ToolRegistry, TurnOutcome,
};
use qore_client::{CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions};
use qore_core::{History, Message, Tool, ToolFuture, ToolOutput, ToolSpec};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

fn chunk(delta: Value, finish: Value) -> String {
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {chunk}\n\n")
}

fn call_turn(id: &str, path: &str) -> Reply {
    let args = json!({"path": path}).to_string();
    let mut body = chunk(
        json!({"role": "assistant", "content": "Looking \"there\"."}),
        Value::Null,
    );
    body += &chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": "read_file", "arguments": args}}]}),
        Value::Null,
    );
    body += &chunk(json!({}), json!("tool_calls"));
    body += "data: [DONE]\n\n";
    Reply::sse(body)
}

fn answer(text: &str) -> Reply {
    let mut body = chunk(json!({"role": "assistant", "content": text}), Value::Null);
    body += &chunk(json!({}), json!("stop"));
    body += "data: [DONE]\n\n";
    Reply::sse(body)
}

struct ReadFile(ToolSpec);

impl Tool for ReadFile {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn destructive(&self) -> bool {
        false
    }
    fn call(&self, input: Value, _: CancellationToken) -> ToolFuture {
        Box::pin(async move {
            ToolOutput::text(format!("contents of {} — \"quoted\"\n", input["path"]))
        })
    }
}

struct Nobody;

impl Approver for Nobody {
    fn decide<'a>(
        &'a self,
        _: &'a ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ApprovalDecision> + Send + 'a>> {
        Box::pin(async { ApprovalDecision::Deny { reason: None } })
    }
}

/// The bundled profiles plus `extra` (a user profile).
fn catalog(extra: &str) -> Catalog {
    let catalog = Catalog::with_user_files(vec![
        ProfileFile::parse(Path::new("user.toml"), extra).unwrap()
    ]);
    assert!(catalog.errors.is_empty(), "{:?}", catalog.errors);
    catalog
}

/// The index of the `]` closing the array after `key` (string-aware).
fn array_close(body: &[u8], key: &[u8]) -> usize {
    let start = body
        .windows(key.len())
        .position(|w| w == key)
        .expect("the key")
        + key.len();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in body.iter().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    panic!("unclosed array")
}

#[tokio::test]
async fn a_templated_agent_runs_the_loop_and_every_request_continues_the_last() {
    let server = ReplayServer::start(vec![
        call_turn("call_1", "a.rs"),
        call_turn("call_2", "b.rs"),
        answer("Both read."),
    ])
    .await
    .unwrap();
    // A two-line variant of a bundled agent: a different temperature.
    let catalog =
        catalog("name = \"mine\"\nextends = \"openai-chat\"\n[body]\ntemperature = 0.25\n");
    let agent = catalog.get("mine").unwrap();
    let providers = Providers::load(None);
    let protocol =
        qore_client::protocols::by_name(&providers.get("openai").unwrap().protocol).unwrap();
    let renderer = Arc::new(
        AgentRenderer::new(agent, protocol.clone(), "gpt-x".into(), Partials::default()).unwrap(),
    );
    let client = Client::new(
        protocol.clone(),
        ClientConfig::new(format!("{}/v1", server.url())),
    )
    .unwrap()
    .with_renderer(renderer.clone());

    let mut registry = ToolRegistry::new();
    let spec = ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    };
    registry.add(Arc::new(ReadFile(spec))).unwrap();
    let mut policy = ApprovalPolicy::new(ApprovalMode::Auto);
    let mut history = History::from(vec![
        Message::system("Be brief."),
        Message::user("Read a.rs and b.rs."),
    ]);
    let options = RequestOptions::default();
    let mut runner = ToolLoopRunner {
        client: &client,
        registry: &mut registry,
        policy: &mut policy,
        approver: &Nobody,
        config: LoopConfig {
            max_rounds: 1,
            ..LoopConfig::default()
        },
    };
    let outcome = runner
        .run(
            "gpt-x",
            &mut history,
            &options,
            &CancellationToken::new(),
            |_| {},
        )
        .await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { rounds: 2, .. }),
        "{outcome:?}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for (n, request) in requests.iter().enumerate() {
        let body: Value = request.json().expect("JSON");
        // The profile's literal fields are there, and the conversation is what the codec
        // itself would send for the history as it was at that request.
        assert_eq!(body["temperature"], json!(0.25), "request {n}");
        assert_eq!(body["model"], json!("gpt-x"));
        assert_eq!(body["tools"][0]["function"]["name"], json!("read_file"));
        let so_far = History::from(history.messages()[..2 + 2 * n].to_vec());
        let encoded = protocol
            .encode(&ChatRequest {
                model: "gpt-x",
                history: &so_far,
                tools: registry.specs(),
                options: &options,
            })
            .unwrap();
        assert_eq!(body["messages"], encoded["messages"], "request {n}");
        if n > 0 {
            // Byte-identical up to the end of the previous conversation.
            let prev = &requests[n - 1].body;
            let close = array_close(prev, b"\"messages\":");
            let end = prev[..close]
                .iter()
                .rposition(|b| *b == b'}')
                .expect("a message")
                + 1;
            assert_eq!(
                String::from_utf8_lossy(&prev[..end]),
                String::from_utf8_lossy(&request.body[..end]),
                "request {n} continues the last"
            );
            assert_eq!(
                request.body[end..]
                    .iter()
                    .find(|b| !b.is_ascii_whitespace()),
                Some(&b',')
            );
        }
    }
    // The round limit: the last request forbids tool calls, appended to the template's body.
    let last: Value = requests[2].json().unwrap();
    assert_eq!(last["tool_choice"], json!("none"));
    assert_eq!(requests[1].json().unwrap()["tool_choice"], json!("auto"));
}
