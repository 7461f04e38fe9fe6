//! `qore chat` scripted through stdin: the real binary, a real SQLite file in a temp
//! `QORE_DATA_DIR`, a loopback server replaying recorded answers cut at awkward places.
//! Checked: what the binary prints, what it sends (the second request carries the first
//! turn), what the store holds. Crashes and Ctrl-C: `cli_chat_interrupted.rs`.

mod common;

use common::chat::{answering, of_type, pairs, roles_and_texts, stored_turns, Dirs, MODEL};
use common::config::ConfigDir;
use common::live::run_with_stdin;
use common::turns::{answer, turn};
use common::wire;
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

#[tokio::test]
async fn a_scripted_chat_carries_the_first_turn_runs_commands_and_resumes() {
    // Five turns, and the model listing /tokens asks for the context window.
    let Some((server, url, ex)) = answering(6).await else {
        return;
    };
    let recorded = wire(&ex.response_body).text;
    let dirs = Dirs::new();
    let export = dirs.project.path().join("out.json");
    let input = format!(
        "What is an eclipse?\n/tokens\n/hlep\n\n/agent no-such-agent\n/switch nope\nAnd a lunar one?\n/sessions\n/export {}\n",
        export.display()
    );
    let run = run_with_stdin(dirs.chat(&url, &["--json"]), &input).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    assert_eq!(
        lines[0]["type"], "session",
        "the session line comes first: {run:?}"
    );
    let id = lines[0]["id"].as_str().expect("a session id").to_owned();
    // Two turns, each ending in a result; the second result holds the whole conversation.
    let results = of_type(&lines, "result");
    assert_eq!(results.len(), 2, "{run:?}");
    assert_eq!(results[1]["text"], recorded.as_str());
    let conversation = [
        ("user", "What is an eclipse?"),
        ("assistant", recorded.as_str()),
        ("user", "And a lunar one?"),
        ("assistant", recorded.as_str()),
    ];
    let messages = results[1]["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 4, "{}", results[1]);
    // The second request carries the first turn; /tokens asked the listing for the window.
    let all = server.requests();
    let listings = all.iter().filter(|r| r.method == "GET").count();
    assert_eq!((all.len(), listings), (3, 1), "{all:?}");
    let requests: Vec<_> = all.into_iter().filter(|r| r.method == "POST").collect();
    let second = requests[1].json().expect("JSON body");
    assert_eq!(roles_and_texts(&second), pairs(&conversation[..3]));
    assert_eq!(second["model"], MODEL);
    // The commands answered in between, and a typo got a suggestion, not a request.
    let tokens = of_type(&lines, "tokens");
    assert_eq!(tokens.len(), 1, "{run:?}");
    let usage = wire(&ex.response_body).usage.expect("recorded usage");
    assert_eq!(
        tokens[0]["estimate"]["used"].as_u64().map(|n| n > 0),
        Some(true),
        "{}",
        tokens[0]
    );
    assert_eq!(
        tokens[0]["last_usage"]["input_tokens"],
        usage["prompt_tokens"]
    );
    assert!(run.stderr.contains("did you mean /help?"), "{}", run.stderr);
    // A command that fails says why on stderr and the chat goes on, on the same model.
    assert!(run.stderr.contains("no-such-agent"), "{}", run.stderr);
    assert!(
        run.stderr.contains("no such session: 'nope'"),
        "{}",
        run.stderr
    );
    let sessions = of_type(&lines, "sessions");
    assert_eq!(sessions.len(), 1, "{run:?}");
    assert_eq!(sessions[0]["sessions"][0]["id"], id.as_str());
    assert_eq!(sessions[0]["sessions"][0]["turns"], 2);
    assert_eq!(sessions[0]["sessions"][0]["current"], true);
    let exported: Value =
        serde_json::from_str(&std::fs::read_to_string(&export).expect("export written"))
            .expect("export is JSON");
    // qore's transcript format, as `qore sessions export` writes it.
    assert_eq!(exported["format"], "qore-session", "{exported}");
    assert_eq!(exported["session"]["id"], id.as_str(), "{exported}");
    assert_eq!(exported["turns"].as_array().map(Vec::len), Some(2));
    // The store holds both turns, whole.
    let (check, turns) = stored_turns(&dirs.db(), &id);
    assert_eq!(check, "ok");
    let finished = |seq| (seq, "finished".to_owned(), 2);
    assert_eq!(turns, vec![finished(1), finished(2)]);

    // Resumed by a unique id prefix: the next request carries both earlier turns, on the
    // model /model chose; /new starts empty; /switch comes back.
    let script = format!(
        "/model other-model\nThanks.\n/new\nFresh.\n/switch {}\nBack.\n",
        &id[..12]
    );
    let resumed = run_with_stdin(
        dirs.chat(&url, &["--json", "--session", &id[..12]]),
        &script,
    )
    .await;
    assert_eq!(resumed.code, Some(0), "{resumed:?}");
    let lines = resumed.json_lines();
    let announced: Vec<&Value> = of_type(&lines, "session")
        .iter()
        .map(|l| &l["id"])
        .collect();
    assert_eq!(announced.len(), 3, "{resumed:?}");
    assert_eq!(announced[0], id.as_str());
    assert_ne!(announced[1], id.as_str());
    assert_eq!(announced[2], id.as_str());
    let bodies: Vec<Value> = (server.requests().iter().skip(3))
        .map(|r| r.json().expect("JSON body"))
        .collect();
    assert_eq!(bodies.len(), 3);
    let mut expected = pairs(&conversation);
    expected.extend(pairs(&[("user", "Thanks.")]));
    assert_eq!(roles_and_texts(&bodies[0]), expected);
    assert_eq!(bodies[0]["model"], "other-model");
    assert_eq!(roles_and_texts(&bodies[1]), pairs(&[("user", "Fresh.")]));
    expected.extend(pairs(&[
        ("assistant", recorded.as_str()),
        ("user", "Back."),
    ]));
    assert_eq!(roles_and_texts(&bodies[2]), expected);

    // -c continues the project's session written last: the one switched back to.
    let continued = run_with_stdin(dirs.chat(&url, &["--json", "-c"]), "/sessions\n").await;
    let lines = continued.json_lines();
    assert_eq!(lines[0]["id"], id.as_str(), "{continued:?}");
    let listed = lines[1]["sessions"].as_array().expect("sessions");
    let turns: Vec<&Value> = listed.iter().map(|s| &s["turns"]).collect();
    assert_eq!(turns, [4, 1], "newest first: {continued:?}");
}

#[tokio::test]
async fn piped_json_chat_reads_approvals_from_the_same_stdin() {
    let call = json!({"path": "a.txt", "content": "A"});
    let server = ReplayServer::start(vec![
        turn("", &[("call_a", "write_file", call)]),
        answer("Written."),
        answer("Bye."),
    ])
    .await
    .expect("server");
    let dirs = Dirs::new();
    let url = format!("{}/v1", server.url());
    let input = "Write a.\n{\"id\": \"call_a\", \"decision\": \"allow_once\"}\nBye.\n";
    let run = run_with_stdin(dirs.chat(&url, &["--json", "--tools", "confirm"]), input).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    assert_eq!(of_type(&lines, "approval_request").len(), 1, "{run:?}");
    assert_eq!(of_type(&lines, "result").len(), 2, "{run:?}");
    let written = std::fs::read_to_string(dirs.project.path().join("a.txt"));
    assert_eq!(written.ok().as_deref(), Some("A"));
    // The decision line was not sent as a message: the last request ends with "Bye.".
    let last = server.requests()[2].json().expect("JSON body");
    let roles: Vec<String> = roles_and_texts(&last).into_iter().map(|(r, _)| r).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
}

/// A config dir with the provider `loop` at `url` and `files`.
fn with_loop_provider(url: &str, files: &[(&str, &str)]) -> ConfigDir {
    let provider = format!("name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"{url}\"\n");
    let mut all = vec![("providers/loop.toml", provider.as_str())];
    all.extend_from_slice(files);
    ConfigDir::new(&all)
}

#[tokio::test]
async fn agent_goes_on_with_the_same_session_on_the_agents_model_and_prompt() {
    let server = ReplayServer::start(vec![answer("One."), answer("Two.")])
        .await
        .expect("server");
    let url = format!("{}/v1", server.url());
    let agent = "name = \"brief\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"tiny\"\nsystem_prompt = \"Agent rules\"\n";
    let config = with_loop_provider(&url, &[("agents/brief.toml", agent)]);
    let dirs = Dirs::new();
    let mut cmd = dirs.chat(&url, &["--json"]);
    cmd.env("QORE_CONFIG_DIR", &config.0);
    let run = run_with_stdin(cmd, "First.\n/agent brief\nSecond.\n").await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    assert_eq!(of_type(&lines, "session").len(), 1, "one session: {run:?}");
    let second = server.requests()[1].json().expect("JSON body");
    assert_eq!(second["model"], "tiny");
    let expected = [
        ("system", "Agent rules"),
        ("user", "First."),
        ("assistant", "One."),
        ("user", "Second."),
    ];
    assert_eq!(roles_and_texts(&second), pairs(&expected));
}

/// The compression roster: agent `squeeze` (model `small`) on the loop provider.
const SQUEEZE: [(&str, &str); 2] = [
    (
        "agents/squeeze.toml",
        "name = \"squeeze\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"small\"\n",
    ),
    ("pipelines.toml", "compression = [\"squeeze\"]\n"),
];

#[tokio::test]
async fn after_agent_the_session_still_compresses_itself_before_a_send() {
    let replies = ["A1.", "A2.", "A3.", "Summary.", "A4."].map(answer);
    let server = ReplayServer::start(replies.to_vec()).await.expect("server");
    let url = format!("{}/v1", server.url());
    let brief = "name = \"brief\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"tiny\"\ncontext_window = 100\n";
    let mut files = SQUEEZE.to_vec();
    files.push(("agents/brief.toml", brief));
    let config = with_loop_provider(&url, &files);
    let dirs = Dirs::new();
    let mut cmd = dirs.chat(&url, &["--json"]);
    cmd.env("QORE_CONFIG_DIR", &config.0);
    cmd.env("QORE_COMPRESS_AT", "80%");
    let long: String = (0..60).map(|i| format!(" word{i}")).collect();
    let script = format!("One.\nTwo.\nThree.\n/agent brief\nNow:{long}\n");
    let run = run_with_stdin(cmd, &script).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    let sessions = of_type(&lines, "session");
    assert_eq!(sessions.len(), 2, "{run:?}");
    assert_eq!(sessions[1]["compressed_from"], sessions[0]["id"], "{run:?}");
    let models: Vec<Value> = (server.requests().iter())
        .map(|r| r.json().expect("JSON body")["model"].clone())
        .collect();
    assert_eq!(models, [MODEL, MODEL, MODEL, "small", "tiny"], "{run:?}");
}

#[tokio::test]
async fn compress_goes_on_in_a_summary_session_and_keeps_the_original() {
    let replies = ["A1.", "A2.", "A3.", "Summary.", "A4."]
        .map(answer)
        .to_vec();
    let server = ReplayServer::start(replies).await.expect("server");
    let url = format!("{}/v1", server.url());
    let config = with_loop_provider(&url, &SQUEEZE);
    let dirs = Dirs::new();
    let mut cmd = dirs.chat(&url, &["--json"]);
    cmd.env("QORE_CONFIG_DIR", &config.0);
    let run = run_with_stdin(cmd, "One.\nTwo.\nThree.\n/compress\nFour.\n").await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    let original = lines[0]["id"].as_str().expect("id");
    let compressed = of_type(&lines, "compressed");
    assert_eq!(compressed.len(), 1, "{run:?}");
    assert_eq!(compressed[0]["original"], original);
    assert_eq!(compressed[0]["summarised_turns"], 1);
    assert_eq!(compressed[0]["kept_turns"], 2);
    let sessions = of_type(&lines, "session");
    assert_eq!(sessions[1]["id"], compressed[0]["session"], "{run:?}");
    assert_eq!(sessions[1]["compressed_from"], original, "{run:?}");
    let bodies: Vec<Value> = (server.requests().iter())
        .map(|r| r.json().expect("JSON body"))
        .collect();
    assert_eq!(
        bodies[3]["model"], "small",
        "the compression agent summarises"
    );
    // The next request: the summary, the two kept turns, the new message.
    let sent = roles_and_texts(&bodies[4]);
    let roles: Vec<&str> = sent.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user"
        ]
    );
    assert_eq!(sent[1].1, "Summary.");
    assert_eq!(sent[2].1, "Two.");
    assert_eq!(sent[6].1, "Four.");
    // The original is untouched.
    let (check, turns) = stored_turns(&dirs.db(), original);
    assert_eq!((check.as_str(), turns.len()), ("ok", 3));
}

#[tokio::test]
async fn undo_puts_back_the_files_the_last_turn_changed() {
    let write = |content: &str| json!({"path": "notes.txt", "content": content});
    let server = ReplayServer::start(vec![
        turn("", &[("call_1", "write_file", write("second"))]),
        answer("Written."),
        turn("", &[("call_2", "write_file", write("third"))]),
        answer("Written again."),
    ])
    .await
    .expect("server");
    let dirs = Dirs::new();
    let notes = dirs.project.path().join("notes.txt");
    std::fs::write(&notes, "first").expect("write");
    let url = format!("{}/v1", server.url());
    let tools = ["--json", "--tools", "auto"];
    let run = run_with_stdin(dirs.chat(&url, &tools), "Write.\n/undo\n").await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(&notes).ok().as_deref(),
        Some("first")
    );
    let lines = run.json_lines();
    let undone = of_type(&lines, "undone");
    assert_eq!(undone.len(), 1, "{run:?}");
    assert_eq!(
        undone[0]["files"],
        json!([{"path": "notes.txt", "done": "restored"}])
    );
    // A file changed after the turn is not overwritten: the undo is refused, naming it.
    let id = lines[0]["id"].as_str().expect("id");
    let again = ["--json", "--tools", "auto", "--session", id];
    let run = run_with_stdin(dirs.chat(&url, &again), "Write again.\n").await;
    assert_eq!(run.code, Some(0), "{run:?}");
    std::fs::write(&notes, "mine").expect("write");
    let run = run_with_stdin(dirs.chat(&url, &again), "/undo\n").await;
    assert!(run.stderr.contains("notes.txt"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&notes).ok().as_deref(),
        Some("mine")
    );
}

#[tokio::test]
async fn undo_takes_the_last_turn_out_of_the_history() {
    let Some((server, url, ex)) = answering(3).await else {
        return;
    };
    let recorded = wire(&ex.response_body).text;
    let dirs = Dirs::new();
    let script = "First.\nSecond.\n/undo\nThird.\n/undo\n/undo\n/undo\n";
    let run = run_with_stdin(dirs.chat(&url, &["--json"]), script).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    let id = lines[0]["id"].as_str().expect("id");
    let undone: Vec<&Value> = of_type(&lines, "undone")
        .iter()
        .map(|l| &l["turn"])
        .collect();
    // Turn 2, then the third turn (seq 3), then turn 1; then nothing is left.
    assert_eq!(undone, [2, 3, 1], "{run:?}");
    assert!(run.stderr.contains("nothing to undo"), "{}", run.stderr);
    // The third request does not carry the undone second turn.
    let third = server.requests()[2].json().expect("JSON body");
    let expected = [
        ("user", "First."),
        ("assistant", recorded.as_str()),
        ("user", "Third."),
    ];
    assert_eq!(roles_and_texts(&third), pairs(&expected));
    let conn = rusqlite::Connection::open(dirs.db()).expect("open");
    let flags: Vec<i64> = (conn
        .prepare("SELECT undone FROM turns WHERE session_id = ?1 ORDER BY seq"))
    .expect("prepare")
    .query_map([id], |row| row.get(0))
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows");
    assert_eq!(flags, [1, 1, 1], "undone turns stay in the store, marked");
}
