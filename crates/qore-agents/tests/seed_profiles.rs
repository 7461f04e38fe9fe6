//! The seed's worked-example profiles (`tests/seed_profiles/`, copied verbatim from
//! agent-templates-design.md) load unchanged from a config dir written the seed's way —
//! providers with `client_api` and `api_key_ref`, `agent_models.json`, `agent_roles/*.json`
//! — and each sends, over loopback HTTP, to the path its vendor documents, with the vendor's
//! headers and the body the profile describes (the model and the tools added as the seed's
//! session adds them).

use std::path::{Path, PathBuf};

use qore_agents::config::Config;
use qore_client::{CancellationToken, ChatRequest, Client, RequestOptions};
use qore_core::{History, Message, StreamOutcome, ToolSpec};
use qore_testkit::{RecordedRequest, ReplayServer, Reply, Slicing};
use serde_json::{json, Value};

/// The verbatim files: (file name, text).
fn seed() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seed_profiles");
    let mut files: Vec<(String, String)> = (std::fs::read_dir(dir).unwrap())
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 5, "the five worked examples");
    files
}

/// Children written for this test (the seed shows them only as a tree): concrete agents on
/// the abstract bases, prompt caching, and tools switched off.
const CHILDREN: &[(&str, &str)] = &[
    (
        "openai_chat.toml",
        "extends = \"OpenAI Base Chat\"\nname = \"OpenAI Chat\"\n",
    ),
    (
        "openai_quiet.toml",
        "extends = \"OpenAI Chat\"\nname = \"OpenAI Quiet\"\nenable_tools = false\n",
    ),
    (
        "gemini_chat.toml",
        "extends = \"Google Base Chat\"\nname = \"Gemini Chat\"\n",
    ),
    (
        "claude_cached.toml",
        "extends = \"Claude Sonnet\"\nname = \"Claude Cached\"\ncache_prompt = true\ncache_ttl = \"1h\"\n",
    ),
];

const ROLE: &str = "You develop \"carefully\" (the seed's role file).";

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One loopback server per vendor, replying with a one-word answer in its wire.
struct Servers {
    openai: ReplayServer,
    mistral: ReplayServer,
    claude: ReplayServer,
    google: ReplayServer,
}

fn sse(frames: &[Value]) -> Reply {
    let body: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
    Reply::sse(body).with_slicing(Slicing::Irregular { seed: 7, max: 9 })
}

fn openai_reply() -> Reply {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut reply = sse(&[
        chunk(json!({"role": "assistant", "content": "hi"}), Value::Null),
        chunk(json!({}), json!("stop")),
    ]);
    reply.body = [&reply.body[..], b"data: [DONE]\n\n"].concat().into();
    reply
}

fn claude_reply() -> Reply {
    sse(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": [], "usage": {"input_tokens": 5}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ])
}

fn google_reply() -> Reply {
    sse(&[
        json!({"candidates": [{"content": {"parts": [{"text": "hi"}], "role": "model"}, "finishReason": "STOP"}]}),
    ])
}

/// The config dir: the seed's profiles, seed-style provider files pointing at `servers`
/// with the URLs the seed gives, model overrides and the developer role.
fn config_dir(servers: &Servers) -> TempDir {
    let dir = std::env::temp_dir().join(format!("qore-seed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let children = CHILDREN.iter().map(|(n, t)| (n.to_string(), t.to_string()));
    for (name, text) in seed().into_iter().chain(children) {
        write(&dir, &format!("agents/{name}"), &text);
    }
    let providers = [
        (
            "openai",
            "OpenAI (Chat Completions)",
            format!("{}/v1", servers.openai.url()),
        ),
        ("mistral", "Mistral AI", servers.mistral.url()),
        ("claude", "Claude", servers.claude.url()),
        (
            "google",
            "Google AI",
            format!("{}/v1beta", servers.google.url()),
        ),
    ];
    for (file, name, url) in providers {
        let key = dir.join(format!("keys/{file}"));
        write(&dir, &format!("keys/{file}"), &format!("sk-{file}\n"));
        let text = format!(
            "name = {name:?}\nclient_api = {name:?}\nurl = {url:?}\napi_key_ref = \"file:{}\"\n",
            key.display()
        );
        write(&dir, &format!("providers/{file}.toml"), &text);
    }
    let models = json!({"OpenAI Chat": "gpt-4.1", "OpenAI Quiet": "gpt-4.1",
        "Mistral Reasoning Chat": "magistral-medium-latest", "Claude Sonnet": "claude-sonnet-4-5",
        "Claude Cached": "claude-haiku-4-5", "Gemini Chat": "gemini-2.5-pro"});
    write(&dir, "agent_models.json", &models.to_string());
    let role = json!({"name": "Developer", "systemPrompt": ROLE});
    write(&dir, "agent_roles/developer.json", &role.to_string());
    TempDir(dir)
}

/// Send one chat turn as `name` (with `model` when given, as `--model` does); the request
/// the server received.
async fn send(
    config: &Config,
    server: &ReplayServer,
    name: &str,
    model: Option<&str>,
) -> RecordedRequest {
    let agent = config.catalog.get(name).expect(name);
    config
        .validate(agent)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let resolved = config
        .resolve(name, model)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let renderer = resolved.renderer;
    let client_config = resolved
        .provider
        .client_config(renderer.endpoint.clone())
        .unwrap();
    let client = Client::new(renderer.protocol.clone(), client_config)
        .unwrap()
        .with_renderer(renderer.clone());
    let system = config
        .system_prompt(agent, None)
        .unwrap()
        .expect("a system prompt");
    let history = History::from(vec![
        Message::system(system),
        Message::user("Hello \"seed\""),
    ]);
    let tools = [ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }];
    let before = server.requests().len();
    let request = ChatRequest {
        model: &renderer.model,
        history: &history,
        tools: &tools,
        options: &RequestOptions::default(),
    };
    let outcome = client
        .stream(&request, CancellationToken::new())
        .finish()
        .await;
    assert!(
        matches!(outcome, StreamOutcome::Finished { .. }),
        "{name}: {outcome:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), before + 1, "{name}: one request");
    requests[before].clone()
}

fn header<'r>(request: &'r RecordedRequest, name: &str) -> &'r str {
    request
        .header(name)
        .unwrap_or_else(|| panic!("no {name} header"))
}

#[tokio::test]
async fn the_seed_profiles_load_unchanged_and_send_what_the_vendors_document() {
    let servers = Servers {
        openai: ReplayServer::start_repeating(openai_reply()).await.unwrap(),
        mistral: ReplayServer::start_repeating(openai_reply()).await.unwrap(),
        claude: ReplayServer::start_repeating(claude_reply()).await.unwrap(),
        google: ReplayServer::start_repeating(google_reply()).await.unwrap(),
    };
    let dir = config_dir(&servers);
    let config = Config::load(Some(&dir.0));
    assert!(config.errors.is_empty(), "{:?}", config.errors);
    assert!(
        config.catalog.errors.is_empty(),
        "{:?}",
        config.catalog.errors
    );
    assert!(
        config.catalog.warnings.is_empty(),
        "{:?}",
        config.catalog.warnings
    );

    // OpenAI: `https://api.openai.com/v1` + `/chat/completions`.
    let sent = send(&config, &servers.openai, "OpenAI Chat", None).await;
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(header(&sent, "authorization"), "Bearer sk-openai");
    assert_eq!(header(&sent, "content-type"), "application/json");
    let body = sent.json().expect("JSON");
    assert_eq!(body["model"], "gpt-4.1", "agent_models.json");
    assert_eq!(
        (
            body["max_tokens"].clone(),
            body["temperature"].clone(),
            body["stream"].clone()
        ),
        (json!(8192), json!(0.7), json!(true))
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": ROLE}, {"role": "user", "content": "Hello \"seed\""}])
    );
    assert_eq!(
        body["tools"][0]["function"]["name"], "read_file",
        "enable_tools"
    );
    let flagged = send(&config, &servers.openai, "OpenAI Chat", Some("gpt-5")).await;
    assert_eq!(flagged.json().unwrap()["model"], "gpt-5", "--model wins");
    let quiet = send(&config, &servers.openai, "OpenAI Quiet", None)
        .await
        .json()
        .unwrap();
    assert!(
        quiet.get("tools").is_none(),
        "enable_tools = false: {quiet}"
    );

    // Mistral: `https://api.mistral.ai` + `/v1/chat/completions`, the OpenAI body plus the delta.
    let sent = send(&config, &servers.mistral, "Mistral Reasoning Chat", None).await;
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(header(&sent, "authorization"), "Bearer sk-mistral");
    let body = sent.json().unwrap();
    assert_eq!(body["model"], "magistral-medium-latest");
    assert_eq!(
        (
            body["reasoning_effort"].clone(),
            body["temperature"].clone()
        ),
        (json!("medium"), json!(0.7))
    );
    assert_eq!(body["messages"][0]["content"], ROLE);
    assert!(
        config
            .catalog
            .get("Mistral Reasoning Chat")
            .unwrap()
            .enable_thinking
    );

    // Claude: `https://api.anthropic.com` + `/v1/messages`; the Sonnet delta on the base.
    let sent = send(&config, &servers.claude, "Claude Sonnet", None).await;
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(header(&sent, "x-api-key"), "sk-claude");
    assert_eq!(header(&sent, "anthropic-version"), "2023-06-01");
    let body = sent.json().unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(
        body["thinking"],
        json!({"type": "adaptive", "display": "summarized"})
    );
    assert_eq!(body["output_config"], json!({"effort": "medium"}));
    assert_eq!(
        (body["max_tokens"].clone(), body["temperature"].clone()),
        (json!(16000), json!(1))
    );
    assert_eq!(body["system"], ROLE);
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Hello \"seed\""}]}])
    );
    assert_eq!(
        body["tools"],
        json!([{"name": "read_file", "description": "Read a file.", "input_schema": tools_schema()}])
    );

    // Prompt caching on the same profile: the stable prefix marked, with the TTL.
    let body = send(&config, &servers.claude, "Claude Cached", None)
        .await
        .json()
        .unwrap();
    let mark = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": ROLE, "cache_control": mark}])
    );
    assert_eq!(body["tools"][0]["cache_control"], mark);
    assert_eq!(body["messages"][0]["content"][0]["cache_control"], mark);
    assert_eq!(body["model"], "claude-haiku-4-5");

    // Google: `https://generativelanguage.googleapis.com/v1beta` + `/models/${MODEL}:…`.
    let sent = send(&config, &servers.google, "Gemini Chat", None).await;
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(header(&sent, "x-goog-api-key"), "sk-google");
    let body = sent.json().unwrap();
    assert!(
        body.get("model").is_none(),
        "Gemini's model is in the URL: {body}"
    );
    assert_eq!(
        body["system_instruction"],
        json!({"parts": [{"text": ROLE}]})
    );
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "Hello \"seed\""}]}])
    );
    assert_eq!(
        body["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingBudget": 8192})
    );
    assert_eq!(
        body["tools"][0]["functionDeclarations"][0]["name"],
        "read_file"
    );
}

fn tools_schema() -> Value {
    json!({"type": "object", "properties": {"path": {"type": "string"}}})
}

#[test]
fn against_the_built_in_instances_the_seed_profiles_reach_the_documented_urls() {
    let dir = std::env::temp_dir().join(format!("qore-seed-built-in-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let children = CHILDREN.iter().map(|(n, t)| (n.to_string(), t.to_string()));
    for (name, text) in seed().into_iter().chain(children) {
        write(&dir, &format!("agents/{name}"), &text);
    }
    let dir = TempDir(dir);
    let config = Config::load(Some(&dir.0));
    assert!(
        config.catalog.errors.is_empty(),
        "{:?}",
        config.catalog.errors
    );
    for (agent, model, url) in [
        ("OpenAI Chat", "gpt-4.1", "https://api.openai.com/v1/chat/completions"),
        ("Mistral Reasoning Chat", "magistral-medium-latest", "https://api.mistral.ai/v1/chat/completions"),
        ("Claude Sonnet", "claude-sonnet-4-5", "https://api.anthropic.com/v1/messages"),
        ("Gemini Chat", "gemini-2.5-pro", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"),
    ] {
        let resolved = config.resolve(agent, Some(model)).unwrap();
        assert_eq!(resolved.provider.source, Path::new("<built-in>"), "{agent}");
        let endpoint = resolved.renderer.endpoint.as_deref().unwrap();
        assert_eq!(qore_client::join_endpoint(&resolved.provider.url, endpoint), url, "{agent}");
    }
}
