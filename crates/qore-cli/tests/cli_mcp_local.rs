//! MCP tools on the local model (SmolLM2-135M), through `qore run` and `qore chat`. The
//! tiny model would not pick a tool by itself, so each test holds its first answer to a
//! call of `py__greet` with what the server honours in the request body; the call is still
//! the model's own output (it picks the name to greet), and qore parses it, runs it against
//! the Python MCP server and sends the result back with the call's id:
//! - the text protocol on llama.cpp (no tool calling there): a GBNF `grammar`, sent only
//!   while the conversation holds no `<tool_result>` yet, makes the first reply one
//!   `<tool_call>` block; the next request carries the block and its `<tool_result>`;
//! - native tool calling on `scripts/tool-model.sh` (llama-cpp-python's function calling):
//!   a profile names the tool in `tool_choice`.
//!
//! The model is tiny: the tests assert structure, never words.

mod common;

use std::time::Duration;

use common::config::ConfigDir;
use common::live::run_with_stdin_within;
use common::local::{proxied_local_server, proxied_tool_server, proxy_port};
use common::{command, content_text, run_with_limit, Run};
use qore_testkit::mcp_env::{mcp_env, PY_SERVER};
use qore_testkit::RecordingProxy;
use serde_json::{json, Value};

const PROMPT: &str = "Greet qore with the greet tool.";
const LIMIT: Duration = Duration::from_secs(300);

/// `qore run FLAGS --tools auto --max-rounds 1 --json --project P PROMPT`, or for `front`
/// "chat" `qore chat --ephemeral FLAGS …` with the prompt its one line of stdin, with the
/// Python MCP server as `py` in a config dir that also holds `files`, and `env` set.
async fn run_with_py(
    front: &str,
    files: &[(&str, &str)],
    flags: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let mut all = vec![("server.py", PY_SERVER), ("project/a.txt", "a")];
    all.extend_from_slice(files);
    let config = ConfigDir::new(&all);
    let mcp = json!({"mcpServers": {"py": {"command": python, "args": [config.0.join("server.py"), config.0.join("project")]}}});
    std::fs::write(config.0.join("mcp.json"), mcp.to_string()).unwrap();
    let project = config.0.join("project");
    let mut args = vec![front];
    if front == "chat" {
        args.push("--ephemeral");
    }
    args.extend_from_slice(flags);
    args.extend([
        "--tools",
        "auto",
        "--max-rounds",
        "1",
        "--json",
        "--project",
    ]);
    args.push(project.to_str().unwrap());
    if front == "run" {
        args.push(PROMPT);
    }
    let mut cmd = command(&args);
    cmd.env("QORE_CONFIG_DIR", &config.0)
        .envs(env.iter().copied());
    match front {
        "chat" => run_with_stdin_within(cmd, &format!("{PROMPT}\n"), LIMIT).await,
        _ => run_with_limit(cmd, LIMIT).await,
    }
}

/// The Chat Completions bodies the proxy saw.
fn chats(proxy: &RecordingProxy) -> Vec<Value> {
    (proxy.requests().iter())
        .filter(|r| r.path.ends_with("/chat/completions"))
        .filter_map(|r| r.json())
        .collect()
}

/// The first JSON line of `run` of type `kind` that `pick` accepts.
fn line(run: &Run, kind: &str, pick: impl Fn(&Value) -> bool) -> Value {
    (run.json_lines().into_iter())
        .find(|l| l["type"] == kind && pick(l))
        .unwrap_or_else(|| panic!("no {kind} line in {run:?}"))
}

/// `(role, text)` of each message of a request body.
fn texts(body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    (messages.iter())
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                content_text(&m["content"]),
            )
        })
        .collect()
}

/// The local model's profile: a grammar holds its first answer to one text-protocol call
/// of `py__greet` (the name to greet is the model's choice); once a `<tool_result>` is in
/// the conversation, no grammar.
const GRAMMAR_GREET: &str = r#"schema_version = 1
name = "greeter"
extends = "local-chat"
description = "The local model, its first answer held to a text-protocol call of py__greet."

[body]
temperature = 0
max_tokens = 48
grammar = '''{% if '<tool_result' not in (ctx.history|last).content %}{% set g %}root ::= "<tool_call>{\"name\": \"py__greet\", \"arguments\": {\"name\": \"" [a-z]{1,12} "\"}}</tool_call>"{% endset %}{{ tojson(g) }}{% endif %}'''
"#;

/// `qore run` and `qore chat` on llama.cpp with the text protocol: the model writes the
/// call, qore runs it on the MCP server, and the next request carries the model's block
/// and the result under the call's id.
#[tokio::test]
async fn the_local_model_calls_an_mcp_tool_with_the_text_protocol_through_qore_run_and_chat() {
    let proxy = proxied_local_server().await;
    let port = proxy_port(&proxy);
    let files = [("agents/greeter.toml", GRAMMAR_GREET)];
    let flags = ["--agent", "greeter", "--tool-protocol", "text"];
    for front in ["run", "chat"] {
        let seen = chats(&proxy).len();
        let run = run_with_py(front, &files, &flags, &[("QORE_LOCAL_PORT", &port)]).await;
        assert_eq!(run.code, Some(0), "{front}: {run:?}");
        let call = line(&run, "tool_call", |_| true);
        assert_eq!(call["tool"], "py__greet", "{front}: {run:?}");
        let id = call["id"].as_str().unwrap_or_default();
        let result = line(&run, "tool_result", |l| l["id"] == id);
        assert_eq!(result["is_error"], false, "{front}: {result}");
        let greeted = call["arguments"]["name"].as_str().unwrap_or_default();
        let content = format!("hello {greeted}");
        assert_eq!(result["content"], content, "{front}: {result}");

        let bodies = chats(&proxy).split_off(seen);
        assert!(bodies.len() >= 2, "{front}: {run:?}");
        assert_eq!(
            bodies[0].get("tools"),
            None,
            "{front}: no native definitions"
        );
        assert!(bodies[0]["grammar"].is_string(), "{front}: {}", bodies[0]);
        let system = content_text(&bodies[0]["messages"][0]["content"]);
        for tool in ["py__greet", "Greet someone.", "read_file"] {
            assert!(system.contains(tool), "{front}: {tool} not in {system}");
        }
        assert_eq!(bodies[1].get("grammar"), None, "{front}: {}", bodies[1]);
        let written = format!(
            "<tool_call>{{\"name\": \"py__greet\", \"arguments\": {{\"name\": \"{greeted}\"}}}}</tool_call>"
        );
        let answered =
            format!("<tool_result name=\"py__greet\" id=\"{id}\">\n{content}\n</tool_result>");
        let sent = texts(&bodies[1]);
        let tail = &sent[sent.len().saturating_sub(2)..];
        let expected = [("assistant", written), ("user", answered)].map(|(r, t)| (r.into(), t));
        assert_eq!(tail, expected, "{front}");
    }
}

/// A profile for the tool server, made to call `py__greet` (see the module doc), not
/// streamed (the server streams no tool calls).
const FORCED_GREET: &str = r#"schema_version = 1
name = "greeter"
extends = "base-openai-chat"
description = "The local tool model, made to call py__greet."
provider = "toolmodel"
model = "smollm2-135m-instruct"

[body]
stream = false
stream_options = ""
max_tokens = 48
temperature = 0
tool_choice = "{% if ctx.tools %}{\"type\": \"function\", \"function\": {\"name\": \"py__greet\"}}{% endif %}"
"#;

/// `qore run` and `qore chat` on the tool model: the model calls `py__greet`, the server
/// answers, and the next request carries the answer with the call's id.
#[tokio::test]
async fn the_local_tool_model_calls_an_mcp_tool_through_qore_run_and_chat() {
    let proxy = proxied_tool_server().await;
    let provider = format!(
        "name = \"toolmodel\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
        proxy.url()
    );
    let files = [
        ("agents/greeter.toml", FORCED_GREET),
        ("providers/toolmodel.toml", provider.as_str()),
    ];
    let flags = ["--agent", "greeter", "--tool-protocol", "native"];
    for front in ["run", "chat"] {
        let seen = chats(&proxy).len();
        let run = run_with_py(front, &files, &flags, &[]).await;
        assert_eq!(run.code, Some(0), "{front}: {run:?}");
        let bodies = chats(&proxy).split_off(seen);
        assert!(bodies.len() >= 2, "{front}: {run:?}");
        let offered: Vec<&str> = (bodies[0]["tools"].as_array().unwrap().iter())
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        assert!(offered.contains(&"py__greet"), "{front}: {offered:?}");
        let messages = bodies[1]["messages"].as_array().unwrap();
        let call = (messages.iter())
            .find_map(|m| m["tool_calls"].as_array().and_then(|c| c.first()))
            .unwrap_or_else(|| panic!("{front}: no tool call in {}", bodies[1]));
        assert_eq!(call["function"]["name"], "py__greet", "{front}");
        let answered = (messages.iter())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call["id"])
            .unwrap_or_else(|| panic!("{front}: no result for {call} in {}", bodies[1]));
        let content = answered["content"].as_str().unwrap_or_default();
        assert!(content.starts_with("hello "), "{front}: {content}");
    }
}
