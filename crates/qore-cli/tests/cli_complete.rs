//! `qore complete FILE:LINE:COL` as an editor meets it: the real binary, a config dir of its
//! own, and a loopback server. A code-completion agent asks llama.cpp's `/infill` with the
//! file's prefix and suffix; a chat agent gets the `<cursor>` prompt and its fenced answer is
//! cleaned; a position past the file is clamped; a missing file is one error line.

mod common;

use common::config::{qore_in, ConfigDir};
use common::Run;
use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply, Slicing};
use serde_json::{json, Value};

/// An `/infill` stream as llama.cpp sends it: content chunks, then the closing summary.
fn infill_stream(pieces: &[&str]) -> String {
    let chunk = |content: &str, predicted: usize| {
        json!({"index": 0, "content": content, "tokens": [1], "stop": false, "id_slot": -1,
               "tokens_predicted": predicted, "tokens_evaluated": 24})
    };
    let last = json!({"index": 0, "content": "", "tokens": [], "id_slot": 0, "stop": true,
        "model": "qwen2.5-coder", "tokens_predicted": pieces.len(), "tokens_evaluated": 24,
        "stop_type": "eos", "stopping_word": "", "tokens_cached": 26,
        "timings": {"cache_n": 20, "prompt_n": 4, "predicted_n": pieces.len()}});
    let mut out: String = (pieces.iter().enumerate())
        .map(|(i, p)| format!("data: {}\n\n", chunk(p, i + 1)))
        .collect();
    out.push_str(&format!("data: {last}\n\n"));
    out
}

/// A config dir whose `loop` provider (`protocol`) is `url`, with agent `agent_toml`.
fn config_for(url: &str, protocol: &str, agent_toml: &str) -> ConfigDir {
    ConfigDir::new(&[
        (
            "providers/loop.toml",
            &format!("name = \"loop\"\nprotocol = \"{protocol}\"\nurl = \"{url}/v1\"\n"),
        ),
        ("agents/mine.toml", agent_toml),
        (
            "source/add.py",
            "def add(a, b):\n    return \n\nprint(add(1, 2))\n",
        ),
    ])
}

const FIM_AGENT: &str =
    "name = \"mine\"\nextends = \"llamacpp-completion\"\nprovider = \"loop\"\nmodel = \"qwen\"\n";
const CHAT_AGENT: &str =
    "name = \"mine\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"tiny\"\n";

/// Exit 1, nothing on stdout, one line on stderr holding each of `words`.
fn failed_saying(run: &Run, words: &[&str]) {
    assert_eq!((run.code, run.stdout.as_str()), (Some(1), ""), "{run:?}");
    assert_eq!(run.stderr.trim().lines().count(), 1, "{run:?}");
    assert!(words.iter().all(|w| run.stderr.contains(w)), "{run:?}");
}

fn file(config: &ConfigDir, at: &str) -> String {
    format!("{}:{at}", config.0.join("source/add.py").display())
}

/// `qore complete` at `at` (LINE:COL) with the chat agent, whose model answers `answer`.
async fn chat_complete(answer: &str, at: &str) -> (ReplayServer, ConfigDir, Run) {
    let server = ReplayServer::start(vec![chat_answer(answer)])
        .await
        .unwrap();
    let config = config_for(&server.url(), "openai-chat", CHAT_AGENT);
    let position = file(&config, at);
    let run = qore_in(&config, &["complete", &position, "--agent", "mine"]).await;
    (server, config, run)
}

#[tokio::test]
async fn a_fim_agent_sends_prefix_and_suffix_to_infill() {
    let reply = Reply::sse(infill_stream(&["a", " + ", "b"]))
        .with_slicing(Slicing::Irregular { seed: 5, max: 6 });
    let server = ReplayServer::start(vec![reply]).await.unwrap();
    let config = config_for(&server.url(), "llamacpp", FIM_AGENT);
    let position = file(&config, "2:12");
    let run = qore_in(
        &config,
        &["complete", &position, "--agent", "mine", "--json"],
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let line: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON line");
    assert_eq!(line["text"], "a + b", "{run:?}");
    assert_eq!(
        (line["agent"].as_str(), line["range"].as_str()),
        (Some("mine"), Some("2:12-2:12"))
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].path, "/infill");
    let body = requests[0].json().expect("a JSON body");
    assert_eq!(
        body["input_prefix"], "def add(a, b):\n    return ",
        "{body}"
    );
    assert_eq!(body["input_suffix"], "\n\nprint(add(1, 2))\n", "{body}");
}

#[tokio::test]
async fn a_chat_agent_gets_the_cursor_prompt_and_its_answer_is_cleaned() {
    let answer = "Here is the completion:\n```python\na + b\n```\nThis adds the numbers.";
    let (server, _config, run) = chat_complete(answer, "2:12").await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), "a + b"),
        "{run:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let body = String::from_utf8_lossy(&requests[0].body);
    assert!(body.contains("<cursor>"), "{body}");
    assert!(body.contains("return <cursor>"), "{body}");
}

#[tokio::test]
async fn json_names_the_range_the_text_overwrites_at_the_clamped_cursor() {
    let cases = [
        ("2:12", "2:12-2:12"),
        ("99:99", "5:1-5:1"),
        ("1:999", "1:15-1:15"),
    ];
    for (at, range) in cases {
        let server = ReplayServer::start(vec![chat_answer("x")]).await.unwrap();
        let config = config_for(&server.url(), "openai-chat", CHAT_AGENT);
        let position = file(&config, at);
        let args = ["complete", &position, "--agent", "mine", "--json"];
        let run = qore_in(&config, &args).await;
        let line: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON line");
        assert_eq!(line["range"], range, "{at}: {run:?}");
        assert_eq!(line["text"], "x", "{at}: {run:?}");
    }
}

#[tokio::test]
async fn a_position_past_the_file_is_clamped_and_a_missing_file_is_one_line() {
    let (server, config, run) = chat_complete("# done", "99:99").await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), "# done"),
        "{run:?}"
    );
    let body = String::from_utf8_lossy(&server.requests()[0].body).into_owned();
    assert!(body.contains("print(add(1, 2))\\n<cursor>"), "{body}");
    let missing = format!("{}:1:1", config.0.join("nope.py").display());
    let run = qore_in(&config, &["complete", &missing, "--agent", "mine"]).await;
    failed_saying(&run, &["cannot read", "nope.py"]);
    let position = file(&config, "2:12");
    let other = config.0.join("gone.py").display().to_string();
    let args = ["complete", &position, "--agent", "mine", "--open", &other];
    let run = qore_in(&config, &args).await;
    failed_saying(&run, &["cannot read", "gone.py"]);
    assert_eq!(server.requests().len(), 1, "nothing more is sent");
}

#[tokio::test]
async fn an_empty_completion_prints_nothing_and_fails_with_a_note() {
    let (_server, _config, run) = chat_complete("```\n\n```", "2:12").await;
    failed_saying(&run, &["empty"]);
}

#[tokio::test]
async fn without_agent_the_code_completion_roster_picks_and_a_chat_endpoint_refuses_fim() {
    let server = ReplayServer::start(vec![]).await.unwrap();
    let on_chat = format!("{FIM_AGENT}endpoint = \"chat/completions\"\n");
    let config = config_for(&server.url(), "openai-chat", &on_chat);
    let pipelines = config.0.join("pipelines.toml");
    std::fs::write(pipelines, "code_completion = [\"mine\"]\n").unwrap();
    let position = file(&config, "2:12");
    let run = qore_in(&config, &["complete", &position]).await;
    failed_saying(
        &run,
        &["\"mine\"", "fill-in-the-middle", "is a chat endpoint"],
    );
    assert!(server.requests().is_empty());
}

/// (what, protocol, agent profile, reply, the one request's path; `None`: refused, nothing
/// sent). The code_completion roster names the agent; what its `[body]` reads decides FIM or
/// chat, never its `completion` tag.
const BY_BODY: &[(&str, &str, &str, Option<&str>)] = &[
    (
        "a chat body tagged completion is asked by chat",
        "openai-chat",
        "name = \"mine\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"tiny\"\n\
         tags = [\"completion\"]\n",
        Some("/v1/chat/completions"),
    ),
    (
        "a FIM body with no tag fills in the middle",
        "llamacpp",
        "name = \"mine\"\nprovider = \"loop\"\nmodel = \"qwen\"\nendpoint = \"../infill\"\n\
         [body]\ninput_prefix = \"{{ tojson(ctx.prefix) }}\"\n\
         input_suffix = \"{{ tojson(ctx.suffix) }}\"\nstream = true\n",
        Some("/infill"),
    ),
    (
        "a completion-tagged body that reads neither is refused at load",
        "llamacpp",
        "name = \"mine\"\nprovider = \"loop\"\nmodel = \"qwen\"\ntags = [\"completion\"]\n\
         [body]\nprompt = \"def \"\nstream = true\n",
        None,
    ),
];

#[tokio::test]
async fn the_body_not_the_tag_decides_fim_or_chat() {
    for (what, protocol, agent, path) in BY_BODY {
        let reply = match *protocol {
            "llamacpp" => Reply::sse(infill_stream(&["a + b"])),
            _ => chat_answer("```python\na + b\n```"),
        };
        let server = ReplayServer::start(vec![reply]).await.unwrap();
        let config = config_for(&server.url(), protocol, agent);
        std::fs::write(
            config.0.join("pipelines.toml"),
            "code_completion = [\"mine\"]\n",
        )
        .unwrap();
        let run = qore_in(&config, &["complete", &file(&config, "2:12")]).await;
        let requests = server.requests();
        let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, Vec::from_iter(*path), "{what}: {run:?}");
        match path {
            Some("/infill") => {
                let body = requests[0].json().expect("a JSON body");
                assert_eq!(
                    body["input_prefix"], "def add(a, b):\n    return ",
                    "{what}"
                );
                assert_eq!(
                    (run.code, run.stdout.as_str()),
                    (Some(0), "a + b"),
                    "{what}"
                );
            }
            Some(_) => {
                let body = String::from_utf8_lossy(&requests[0].body);
                assert!(body.contains("return <cursor>"), "{what}: {body}");
                assert_eq!(
                    (run.code, run.stdout.as_str()),
                    (Some(0), "a + b"),
                    "{what}"
                );
            }
            None => {
                let mine = config.0.join("agents/mine.toml");
                let at = format!("{}:5:", mine.display());
                failed_saying(&run, &[&at, "tagged \"completion\"", "neither ctx.prefix"]);
            }
        }
    }
    // Neither tagged nor in the roster, it loads; named by --agent, it cannot complete.
    let server = ReplayServer::start(vec![]).await.unwrap();
    let neither =
        "name = \"mine\"\nprovider = \"loop\"\nmodel = \"qwen\"\n[body]\nprompt = \"def \"\n";
    let config = config_for(&server.url(), "llamacpp", neither);
    let args = ["complete", &file(&config, "2:12"), "--agent", "mine"];
    let run = qore_in(&config, &args).await;
    failed_saying(
        &run,
        &["\"mine\" cannot complete code", "neither ctx.prefix"],
    );
    assert!(server.requests().is_empty());
}
