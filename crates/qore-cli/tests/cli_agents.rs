//! `qore agents …`, `qore providers …`, `qore config init` and `qore run --agent`, as a
//! user meets them: the real binary, a config dir of its own, and a loopback server that
//! records what a templated agent sends.

mod common;

use common::config::{qore_in, ConfigDir};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

#[tokio::test]
async fn the_bundled_agents_validate_and_list() {
    let config = ConfigDir::new(&[]);
    let run = qore_in(&config, &["agents", "validate"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("agents valid"), "{run:?}");
    let run = qore_in(&config, &["agents", "list"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        (run.stdout.lines()).any(|l| l.starts_with("claude-chat ") && l.ends_with("(tags: chat)")),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("base-anthropic"),
        "abstract agents only with --all"
    );
    let all = qore_in(&config, &["agents", "list", "--all"]).await;
    assert!(all.stdout.contains("base-anthropic") && all.stdout.contains("(abstract"));
}

#[tokio::test]
async fn agents_list_columns_stay_aligned_past_a_long_name() {
    let long = "an-agent-whose-name-is-longer-than-any-column-width";
    let profile = format!("name = \"{long}\"\nextends = \"openai-chat\"\n");
    let config = ConfigDir::new(&[("agents/long.toml", profile.as_str())]);
    let run = qore_in(&config, &["agents", "list"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    // Each row's provider starts where the header's PROVIDER does.
    let column = |line: &str, word: &str| line.find(word);
    let header = run.stdout.lines().next().unwrap_or_default();
    let at = column(header, "PROVIDER");
    for (agent, provider) in [(long, " openai "), ("claude-chat", " anthropic ")] {
        let row = (run.stdout.lines()).find(|l| l.starts_with(&format!("{agent} ")));
        let row = row.unwrap_or_else(|| panic!("no row for {agent}: {}", run.stdout));
        assert_eq!(
            column(row, provider).map(|i| i + 1),
            at,
            "{agent}:\n{}",
            run.stdout
        );
    }
}

#[tokio::test]
async fn a_broken_profile_is_refused_with_its_file_and_line_or_body_key() {
    let config = ConfigDir::new(&[
        ("agents/typo.toml", "name = \"typo\"\nextends = \"openai-chat\"\nenable_tool = true\n"),
        ("broken/toml.toml", "name = \"a\"\nmodel = \n"),
        (
            "broken/body.toml",
            "name = \"b\"\nextends = \"openai-chat\"\n[body]\nmessages = \"[{% for m in ctx.history %}{{ m.content }},{% endfor %}]\"\n",
        ),
    ]);
    let toml_file = config.0.join("broken/toml.toml");
    let run = qore_in(
        &config,
        &["agents", "validate", toml_file.to_str().unwrap()],
    )
    .await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains(&format!("{}:2:", toml_file.display())),
        "{run:?}"
    );
    let body_file = config.0.join("broken/body.toml");
    let run = qore_in(
        &config,
        &["agents", "validate", body_file.to_str().unwrap()],
    )
    .await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("{}: [body] messages:", body_file.display())),
        "{run:?}"
    );
    // The whole config: the typo is a warning with its line, and everything validates.
    let run = qore_in(&config, &["agents", "validate"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let typo = config.0.join("agents/typo.toml");
    assert!(
        run.stderr.contains(&format!(
            "warning: {}:3: unknown key `enable_tool` (typo? did you mean `enable_tools`?)",
            typo.display()
        )),
        "{run:?}"
    );
}

#[tokio::test]
async fn show_says_what_a_user_profile_replaces_and_set_model_persists() {
    let config = ConfigDir::new(&[(
        "agents/chat.toml",
        "name = \"openai-chat\"\nextends = \"base-openai-chat\"\nprovider = \"openai\"\nmodel = \"gpt-mine\"\n",
    )]);
    let run = qore_in(&config, &["agents", "show", "openai-chat"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .contains("# replaces the bundled profile <bundled>/agents/openai_chat.toml"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("model = \"gpt-mine\""));

    let run = qore_in(
        &config,
        &["agents", "set-model", "openai-chat", "gpt-override"],
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let render = qore_in(
        &config,
        &[
            "agents",
            "render",
            "openai-chat",
            "--prompt",
            "Hi \"there\"",
        ],
    )
    .await;
    assert_eq!(render.code, Some(0), "{render:?}");
    let body: Value = serde_json::from_str(&render.stdout).expect("the body is JSON");
    assert_eq!(body["model"], "gpt-override");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "user", "content": "Hi \"there\""})
    );
    assert_eq!(messages[0]["role"], "system", "the agent's system prompt");
}

#[tokio::test]
async fn providers_show_names_the_key_source_never_the_key() {
    let config = ConfigDir::new(&[
        ("keys/corp", "sk-secret-value\n"),
        ("providers/corp.toml", ""),
    ]);
    let key = config.0.join("keys/corp");
    std::fs::write(
        config.0.join("providers/corp.toml"),
        format!("name = \"corp\"\nprotocol = \"openai-chat\"\nurl = \"http://127.0.0.1:9/v1\"\napi_key_file = {:?}\n[headers]\nX-Secret = \"hdr-secret\"\n", key.to_str().unwrap()),
    )
    .unwrap();
    let run = qore_in(&config, &["providers", "show", "corp"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains(&format!("file {}", key.display())),
        "{run:?}"
    );
    assert!(
        !run.stdout.contains("sk-secret") && !run.stdout.contains("hdr-secret"),
        "{run:?}"
    );
    let run = qore_in(&config, &["providers", "test", "corp"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(!run.stderr.contains("sk-secret"), "{run:?}");
}

#[tokio::test]
async fn config_init_writes_a_starter_that_validates() {
    let config = ConfigDir::new(&[]);
    let run = qore_in(&config, &["config", "init"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(config.0.join("agents/my-chat.toml").is_file());
    assert!(config.0.join("pipelines.toml").is_file());
    let run = qore_in(&config, &["agents", "validate"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let again = qore_in(&config, &["config", "init"]).await;
    assert!(again.stdout.contains("nothing written"), "{again:?}");
}

fn sse_answer(text: &str) -> Reply {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let body = chunk(json!({"role": "assistant", "content": text}), Value::Null)
        + &chunk(json!({}), json!("stop"))
        + "data: [DONE]\n\n";
    Reply::sse(body)
}

#[tokio::test]
async fn run_with_an_agent_sends_its_rendered_body_to_its_provider() {
    let server = ReplayServer::start(vec![sse_answer("Blue.")])
        .await
        .unwrap();
    let project = ConfigDir::new(&[("AGENTS.md", "Answer in one word.")]);
    let config = ConfigDir::new(&[
        (
            "providers/loop.toml",
            &format!("name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n", server.url()),
        ),
        (
            "agents/brief.toml",
            "name = \"brief\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"tiny\"\nsystem_prompt = \"Rules: {{ agents_md }}\"\n[body]\ntemperature = 0.125\n",
        ),
    ]);
    let run = qore_in(
        &config,
        &[
            "run",
            "--agent",
            "brief",
            "--tools",
            "off",
            "--project",
            project.0.to_str().unwrap(),
            "Name a colour.",
        ],
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Blue.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let body: Value = requests[0].json().unwrap();
    assert_eq!(body["model"], "tiny");
    assert_eq!(body["temperature"], 0.125);
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "Rules: Answer in one word."}, {"role": "user", "content": "Name a colour."}])
    );
    assert!(body.get("tools").is_none(), "--tools off offers none");
}

#[tokio::test]
async fn routing_picks_the_first_matching_agent() {
    let config = ConfigDir::new(&[
        (
            "agents/rust.toml",
            "name = \"rust-fim\"\nextends = \"codestral-completion\"\n[match]\nfile_patterns = [\"*.rs\"]\nproject_names = [\"qore\"]\n",
        ),
        (
            "pipelines.toml",
            "code_completion = [\"rust-fim\", \"codestral-completion\"]\nchat = [\"openai-chat\"]\n",
        ),
    ]);
    let route = |file: &'static str, project: &'static str| {
        let config = &config;
        async move {
            qore_in(config, &["agents", "route", "--project", project, file])
                .await
                .stdout
        }
    };
    assert_eq!(route("/w/src/Main.RS", "qore").await, "rust-fim\n");
    assert_eq!(
        route("/w/src/main.rs", "other").await,
        "codestral-completion\n"
    );
    assert_eq!(
        route("/w/src/main.py", "qore").await,
        "codestral-completion\n"
    );
}

#[tokio::test]
async fn run_with_an_unknown_or_abstract_agent_says_what_to_do() {
    let config = ConfigDir::new(&[]);
    let run = qore_in(&config, &["run", "--agent", "nope", "hi"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("qore agents list"), "{run:?}");
    let run = qore_in(&config, &["run", "--agent", "base-openai-chat", "hi"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("abstract"), "{run:?}");
    let run = qore_in(&config, &["run", "--agent", "codestral-completion", "hi"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("code-completion agent"), "{run:?}");
}
