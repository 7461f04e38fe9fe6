//! `qore` as a new user first meets it: agent flags that reach the wire, prompts from
//! stdin and files, usage errors that say what is valid, completions, `--quiet`, and
//! failures that say what qore was doing. The real binary against loopback servers that
//! record what they received.

mod common;

use common::config::{qore_in, ConfigDir};
use common::live::run_with_stdin;
use common::{command, qore, run_cmd, unused_port};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// A streamed Chat Completions answer saying `text`, with `reasoning` before it.
fn sse_answer(reasoning: &str, text: &str) -> Reply {
    let chunk = |delta: Value, finish: Value| {
        let chunk = json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {chunk}\n\n")
    };
    let mut body = String::new();
    if !reasoning.is_empty() {
        body += &chunk(json!({"reasoning_content": reasoning}), Value::Null);
    }
    body += &chunk(json!({"content": text}), Value::Null);
    body += &chunk(json!({}), json!("stop"));
    Reply::sse(body + "data: [DONE]\n\n")
}

/// A whole (not streamed) Chat Completions answer.
fn json_answer(text: &str) -> Reply {
    let body = json!({"id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
        "finish_reason": "stop"}]});
    Reply::json(200, body.to_string())
}

#[tokio::test]
async fn agent_flags_override_the_profile_and_rosters_do_not_forbid() {
    let server = ReplayServer::start(vec![json_answer("Big."), sse_answer("", "Tiny.")])
        .await
        .expect("server");
    let provider = format!(
        "name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
        server.url()
    );
    let config = ConfigDir::new(&[
        ("providers/loop.toml", &provider),
        (
            "agents/brief.toml",
            "name = \"brief\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"tiny\"\nsystem_prompt = \"Agent rules\"\nenable_tool = false\n[body]\ntemperature = 0.125\nmax_completion_tokens = 100\n",
        ),
        // `brief` is in no roster: rosters choose defaults, they do not forbid.
        ("pipelines.toml", "chat = [\"openai-chat\"]\n"),
        ("agent_models.toml", "[models]\nbrief = \"persisted\"\n"),
    ]);
    let flags = [
        "run",
        "--agent",
        "brief",
        "--tools",
        "off",
        "--model",
        "big",
        "--max-tokens",
        "33",
        "--temperature",
        "0.5",
        "--system",
        "Mine",
        "--no-stream",
        "Hi",
    ];
    let run = qore_in(&config, &flags).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Big.\n");
    let run = qore_in(
        &config,
        &["run", "--agent", "brief", "--tools", "off", "Hi"],
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Tiny.\n");
    let typo = "unknown key `enable_tool` (typo? did you mean `enable_tools`?)";
    assert_eq!(
        run.stderr.matches(typo).count(),
        1,
        "the typo, once: {run:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let with_flags = requests[0].json().expect("JSON body");
    assert_eq!(with_flags["model"], "big", "--model wins over the override");
    assert_eq!(
        with_flags["max_completion_tokens"], 33,
        "the body's own key"
    );
    assert_eq!(with_flags.get("max_tokens"), None, "{with_flags}");
    assert_eq!(with_flags["temperature"], 0.5);
    assert_eq!(with_flags["stream"], false);
    assert_eq!(with_flags.get("stream_options"), None, "{with_flags}");
    assert_eq!(
        with_flags["messages"],
        json!([{"role": "system", "content": "Mine"}, {"role": "user", "content": "Hi"}])
    );
    let plain = requests[1].json().expect("JSON body");
    assert_eq!(plain["model"], "persisted");
    assert_eq!(plain["max_completion_tokens"], 100);
    assert_eq!(plain["temperature"], 0.125);
    assert_eq!(plain["stream"], true);
    assert_eq!(plain["messages"][0]["content"], "Agent rules");
}

#[tokio::test]
async fn a_flag_an_agent_cannot_carry_is_refused() {
    let config = ConfigDir::new(&[]);
    // Gemini's endpoint decides streaming: --no-stream cannot change it.
    let run = qore_in(
        &config,
        &["run", "--agent", "gemini-chat", "--no-stream", "Hi"],
    )
    .await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.one_stderr_line().contains("--no-stream"), "{run:?}");
}

#[tokio::test]
async fn the_prompt_comes_from_arguments_stdin_and_files() {
    let server = ReplayServer::start_repeating(sse_answer("", "Ok."))
        .await
        .expect("server");
    let url = format!("{}/v1", server.url());
    let dir = ConfigDir::new(&[("PROMPT.md", "Prompt from the file.\n")]);
    let file = dir.0.join("PROMPT.md");
    let file = file.to_str().expect("UTF-8 path");
    let base = ["run", "--url", url.as_str(), "--model", "m"];
    // (extra arguments, stdin, the user message sent)
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["Explain", "this"],
            "fn main() {}\n",
            "fn main() {}\n\nExplain this",
        ),
        (&["-"], "From stdin.\n", "From stdin."),
        (&[], "Only stdin.", "Only stdin."),
        (
            &["--file", file, "Then", "this"],
            "",
            "Prompt from the file.\n\nThen this",
        ),
        // Approval answers on stdin are not a prompt.
        (
            &["--tools", "confirm", "--json", "Q"],
            "{\"id\": \"x\", \"decision\": \"deny\"}\n",
            "Q",
        ),
    ];
    for (extra, stdin, sent) in cases {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        let run = run_with_stdin(command(&args), stdin).await;
        assert_eq!(run.code, Some(0), "{extra:?}: {run:?}");
        let request = server.take_requests().pop().expect("a request");
        let body = request.json().expect("JSON body");
        let messages = body["messages"].as_array().expect("messages");
        let user = messages.last().expect("a message");
        assert_eq!(user["content"], *sent, "{extra:?}");
    }
    // Nothing to send: a usage error, and nothing is sent.
    for (extra, stdin) in [(&[][..], ""), (&["  "][..], " \n")] {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        let run = run_with_stdin(command(&args), stdin).await;
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains("the prompt is empty"), "{run:?}");
    }
    assert!(server.take_requests().is_empty());
    let run = qore(&[
        "run",
        "--url",
        &url,
        "--model",
        "m",
        "--file",
        "/no/such/file",
    ])
    .await;
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("/no/such/file"), "{run:?}");
}

#[tokio::test]
async fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_qore()"),
        ("zsh", "#compdef qore"),
        ("fish", "complete -c qore"),
    ] {
        let run = qore(&["completions", shell]).await;
        assert_eq!(run.code, Some(0), "{shell}: {run:?}");
        assert!(run.stdout.contains(marker), "{shell}: {}", run.stdout);
        assert!(run.stdout.contains("idle-timeout"), "{shell}");
    }
}

#[tokio::test]
async fn quiet_prints_the_answer_and_nothing_else() {
    let server = ReplayServer::start_repeating(sse_answer("Thinking it over.", "Yes."))
        .await
        .expect("server");
    let url = format!("{}/v1", server.url());
    let args = [
        "run",
        "--url",
        url.as_str(),
        "--model",
        "m",
        "--tools",
        "confirm",
        "Sure?",
    ];
    let loud = qore(&args).await;
    assert_eq!(loud.code, Some(0), "{loud:?}");
    assert!(loud.stderr.contains("Thinking it over."), "{loud:?}");
    assert!(loud.stderr.contains("read-only"), "{loud:?}");
    let quiet: Vec<&str> = ["-q"].into_iter().chain(args).collect();
    let quiet = qore(&quiet).await;
    assert_eq!(quiet.code, Some(0), "{quiet:?}");
    assert_eq!(quiet.stdout, "Yes.\n");
    assert_eq!(quiet.stderr, "", "{quiet:?}");
}

#[tokio::test]
async fn counts_are_singular_for_one() {
    let listing = json!({"object": "list", "data": [{"id": "only", "object": "model"}]});
    let server = ReplayServer::start(vec![Reply::json(200, listing.to_string())])
        .await
        .expect("server");
    let provider = format!(
        "name = \"one\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
        server.url()
    );
    let config = ConfigDir::new(&[("providers/one.toml", &provider)]);
    let run = qore_in(&config, &["providers", "test", "one"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "one: ok, 1 model\n");
    let dir = ConfigDir::new(&[("a.toml", "name = \"a\"\nextends = \"openai-chat\"\n")]);
    let file = dir.0.join("a.toml");
    let run = qore_in(
        &config,
        &["agents", "validate", file.to_str().expect("path")],
    )
    .await;
    assert_eq!(run.stdout, "1 agent valid\n", "{run:?}");
}

#[tokio::test]
async fn a_failure_says_what_qore_was_doing() {
    let url = format!("http://127.0.0.1:{}/v1", unused_port());
    let mut cmd = command(&["run", "--url", &url, "--model", "m", "hi"]);
    cmd.env("QORE_CONFIG_DIR", "/nonexistent");
    let run = run_cmd(cmd).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    let line = run.one_stderr_line();
    assert!(
        line.contains(&format!("connecting to {url}/chat/completions")),
        "{line}"
    );
}
