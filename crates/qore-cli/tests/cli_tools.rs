//! `qore run` with tools: the real binary against a loopback server that serves hand-written
//! Chat Completions streams in order (a turn calling tools, then a text answer). Each test
//! checks what the binary printed and what it sent back to the model (the tool results in
//! the next request, read from the request body), and what happened in the project.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::live::Live;
#[cfg(target_os = "linux")]
use common::pty::{has_script, in_pty, read_until_count};
use common::turns::{answer, offered, tool_results, turn, MODEL};
use common::{command, content_text, run_cmd, run_with_limit, Run};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::process::Child;

// ---------------------------------------------------------------------------------------
// Model turns, the server, the project
// ---------------------------------------------------------------------------------------

async fn server(replies: Vec<Reply>) -> ReplayServer {
    ReplayServer::start(replies).await.expect("replay server")
}

/// The request bodies the server received, in order.
fn bodies(server: &ReplayServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .map(|r| r.json().expect("a JSON request body"))
        .collect()
}

/// A project directory, removed when dropped.
struct Project(PathBuf);

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "qore-cli-tools-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the project");
        for (name, text) in files {
            std::fs::write(dir.join(name), text).expect("write a project file");
        }
        Project(dir)
    }

    fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(name)).ok()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `qore run --url SERVER/v1 --model m --project P EXTRA... PROMPT`, prepared.
fn qore_run(server: &ReplayServer, project: &Path, extra: &[&str]) -> tokio::process::Command {
    let url = format!("{}/v1", server.url());
    let mut args = vec!["run", "--url", url.as_str(), "--model", MODEL, "--project"];
    args.push(project.to_str().expect("UTF-8 path"));
    args.extend_from_slice(extra);
    args.push("Work on the project.");
    command(&args)
}

/// The JSON lines of a run's stdout of one type.
fn lines_of(run: &Run, kind: &str) -> Vec<Value> {
    run.json_lines()
        .into_iter()
        .filter(|l| l["type"] == kind)
        .collect()
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn auto_runs_read_file_and_the_next_request_carries_its_content() {
    let project = Project::new(&[("notes.txt", "alpha line\nbeta line\n")]);
    let server = server(vec![
        turn(
            "Let me look.",
            &[("call_r", "read_file", json!({"path": "notes.txt"}))],
        ),
        answer("The notes say alpha and beta."),
    ])
    .await;
    let run = run_cmd(qore_run(&server, &project.0, &["--tools", "auto"])).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    // Both turns' text, each on its own line.
    assert_eq!(run.stdout, "Let me look.\nThe notes say alpha and beta.\n");
    // Tool activity on stderr: the call, then a one-line summary of its result.
    let stderr: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(stderr.len(), 2, "{}", run.stderr);
    assert_eq!(stderr[0], r#"qore: tool read_file {"path":"notes.txt"}"#);
    assert!(
        stderr[1].starts_with("qore: read_file -> 2 lines, ") && stderr[1].contains("alpha line"),
        "{}",
        stderr[1]
    );

    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2, "{bodies:#?}");
    for tool in ["read_file", "write_file", "edit_file", "run_command"] {
        assert!(offered(&bodies[0]).contains(&tool.to_owned()), "{tool}");
    }
    assert!(tool_results(&bodies[0]).is_empty());
    let results = tool_results(&bodies[1]);
    assert_eq!(results.len(), 1, "{}", bodies[1]);
    let (id, content) = &results[0];
    assert_eq!(id, "call_r");
    assert!(!content.starts_with("Error: "), "{content}");
    assert!(
        content.contains("alpha line") && content.contains("beta line"),
        "{content}"
    );
    // The assistant's call precedes its result.
    let messages = bodies[1]["messages"].as_array().expect("messages");
    let call_at = messages
        .iter()
        .position(|m| m["tool_calls"][0]["id"] == "call_r")
        .expect("the assistant call is sent back");
    assert_eq!(messages[call_at + 1]["role"], "tool");
}

#[tokio::test]
async fn auto_and_yes_run_destructive_tools_without_asking() {
    for extra in [
        &["--tools", "auto"][..],
        &["--yes"],
        &["--tools", "confirm", "--yes", "--json"],
    ] {
        let project = Project::new(&[]);
        let server = server(vec![
            turn(
                "",
                &[(
                    "call_w",
                    "write_file",
                    json!({"path": "out.txt", "content": "hello"}),
                )],
            ),
            answer("Written."),
        ])
        .await;
        let run = run_cmd(qore_run(&server, &project.0, extra)).await;
        assert_eq!(run.code, Some(0), "{extra:?}: {run:?}");
        assert_eq!(
            project.file("out.txt").as_deref(),
            Some("hello"),
            "{extra:?}"
        );
        assert!(!run.stdout.contains("approval_request"), "{extra:?}");
        let results = tool_results(&bodies(&server)[1]);
        assert_eq!(results.len(), 1, "{extra:?}");
        assert!(
            !results[0].1.starts_with("Error: "),
            "{extra:?}: {}",
            results[0].1
        );
    }
}

#[tokio::test]
async fn json_mode_reports_calls_and_results_and_the_result_holds_the_whole_run() {
    let project = Project::new(&[("notes.txt", "alpha\n")]);
    let server = server(vec![
        turn("", &[("call_r", "read_file", json!({"path": "notes.txt"}))]),
        answer("Done."),
    ])
    .await;
    let run = run_cmd(qore_run(
        &server,
        &project.0,
        &["--tools", "auto", "--json"],
    ))
    .await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stderr, "");
    let lines = run.json_lines();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    let at = |kind: &str| {
        types
            .iter()
            .position(|t| *t == kind)
            .unwrap_or_else(|| panic!("no {kind} in {types:?}"))
    };
    // Between the two turns' events, in this order.
    assert!(at("tool_call_end") < at("tool_call"), "{types:?}");
    assert!(at("tool_call") < at("tool_result"), "{types:?}");
    assert_eq!(types.iter().filter(|t| **t == "message_start").count(), 2);
    let second_turn = types.iter().rposition(|t| *t == "message_start").unwrap();
    assert!(at("tool_result") < second_turn, "{types:?}");
    assert_eq!(
        lines_of(&run, "tool_call"),
        [
            json!({"type": "tool_call", "id": "call_r", "tool": "read_file",
                "arguments": {"path": "notes.txt"}})
        ]
    );
    let result = &lines[at("tool_result")];
    assert_eq!(result["id"], "call_r");
    assert_eq!(result["tool"], "read_file");
    assert_eq!(result["is_error"], false);
    assert!(
        result["content"].as_str().unwrap().contains("alpha"),
        "{result}"
    );

    let last = run.last_json();
    assert_eq!(last["type"], "result");
    assert_eq!(last["text"], "Done.");
    let messages = last["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"], "{last}");
    assert_eq!(messages[1]["blocks"][0]["type"], "tool_use");
    assert_eq!(messages[2]["blocks"][0]["type"], "tool_result");
    assert_eq!(messages[2]["blocks"][0]["tool_use_id"], "call_r");
    // Usage of both turns.
    assert_eq!(last["usage"]["input_tokens"], 20);
    assert_eq!(last["usage"]["output_tokens"], 10);
}

#[tokio::test]
async fn read_only_refuses_write_file_and_tells_the_model_why() {
    // `--tools read-only`, and `--tools confirm` when nobody can answer (stdin is not a
    // terminal, no --json), which says so on stderr.
    for (mode, note) in [("read-only", false), ("confirm", true)] {
        let project = Project::new(&[]);
        let server = server(vec![
            turn(
                "",
                &[(
                    "call_w",
                    "write_file",
                    json!({"path": "out.txt", "content": "hello"}),
                )],
            ),
            answer("I could not write it."),
        ])
        .await;
        let run = run_cmd(qore_run(&server, &project.0, &["--tools", mode])).await;
        assert_eq!(run.code, Some(0), "{mode}: {run:?}");
        assert_eq!(
            project.file("out.txt"),
            None,
            "{mode}: the file was written"
        );
        let bodies = bodies(&server);
        assert_eq!(bodies.len(), 2, "{mode}");
        assert!(offered(&bodies[0]).contains(&"write_file".to_owned()));
        let results = tool_results(&bodies[1]);
        assert_eq!(results.len(), 1, "{mode}");
        let (id, content) = &results[0];
        assert_eq!(id, "call_w");
        assert!(
            content.starts_with("Error: Not run: write_file") && content.contains("read-only"),
            "{mode}: {content}"
        );
        let notes = run
            .stderr
            .lines()
            .filter(|l| l.contains("cannot be confirmed"))
            .count();
        assert_eq!(notes, usize::from(note), "{mode}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("qore: write_file -> Not run: write_file can change files"),
            "{mode}: {}",
            run.stderr
        );
    }
}

#[tokio::test]
async fn json_confirm_asks_and_a_denial_goes_back_with_its_reason() {
    let project = Project::new(&[]);
    let server = server(vec![
        turn(
            "",
            &[(
                "call_w",
                "write_file",
                json!({"path": "out.txt", "content": "hello"}),
            )],
        ),
        answer("Understood."),
    ])
    .await;
    let mut live = Live::spawn(qore_run(
        &server,
        &project.0,
        &["--tools", "confirm", "--json"],
    ));
    let request = live.next_of("approval_request").await;
    assert_eq!(
        request,
        json!({"type": "approval_request", "id": "call_w", "tool": "write_file",
               "arguments": {"path": "out.txt", "content": "hello"},
               "diff": "--- a/out.txt\n+++ b/out.txt\n@@ -0,0 +1 @@\n+hello\n\\ No newline at end of file\n"})
    );
    live.send(json!({"id": "call_w", "decision": "deny", "reason": "not in this repo"}))
        .await;
    let run = live.finish().await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(project.file("out.txt"), None);
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2);
    let results = tool_results(&bodies[1]);
    assert_eq!(results.len(), 1);
    let (id, content) = &results[0];
    assert_eq!(id, "call_w");
    assert!(
        content.starts_with("Error: ")
            && content.contains("declined")
            && content.contains("not in this repo"),
        "{content}"
    );
    let reported = lines_of(&run, "tool_result");
    assert_eq!(reported.len(), 1);
    assert_eq!(reported[0]["ran"], false);
    assert_eq!(reported[0]["is_error"], true);
    assert_eq!(run.last_json()["type"], "result");
}

#[tokio::test]
async fn json_confirm_allow_once_runs_the_call_and_asks_again_next_time() {
    let project = Project::new(&[]);
    let server = server(vec![
        turn(
            "",
            &[(
                "call_a",
                "write_file",
                json!({"path": "a.txt", "content": "first"}),
            )],
        ),
        turn(
            "",
            &[(
                "call_b",
                "write_file",
                json!({"path": "b.txt", "content": "second"}),
            )],
        ),
        answer("Wrote a.txt."),
    ])
    .await;
    let mut live = Live::spawn(qore_run(
        &server,
        &project.0,
        &["--tools", "confirm", "--json"],
    ));
    let first = live.next_of("approval_request").await;
    assert_eq!(first["id"], "call_a");
    live.send(json!({"id": "call_a", "decision": "allow_once"}))
        .await;
    // Allowed once only: the next call of the same tool is asked about again.
    let second = live.next_of("approval_request").await;
    assert_eq!(second["id"], "call_b");
    assert_eq!(project.file("a.txt").as_deref(), Some("first"));
    live.send(json!({"id": "call_b", "decision": "deny"})).await;
    let run = live.finish().await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(project.file("b.txt"), None);

    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 3);
    let results = tool_results(&bodies[1]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_a");
    assert!(!results[0].1.starts_with("Error: "), "{}", results[0].1);
    let results = tool_results(&bodies[2]);
    assert_eq!(results.len(), 2);
    assert_eq!(results[1].0, "call_b");
    assert!(
        results[1].1.starts_with("Error: ") && results[1].1.contains("declined"),
        "{}",
        results[1].1
    );
    let reported = lines_of(&run, "tool_result");
    let ran: Vec<&Value> = reported.iter().map(|r| &r["ran"]).collect();
    assert_eq!(ran, [&json!(true), &json!(false)]);
}

#[tokio::test]
async fn max_rounds_forbids_tool_calls_in_the_last_request_and_a_model_that_insists_is_stopped() {
    for json_mode in [false, true] {
        let project = Project::new(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")]);
        let read =
            |id: &'static str, path: &str| turn("", &[(id, "read_file", json!({"path": path}))]);
        let server = server(vec![
            read("call_1", "a.txt"),
            read("call_2", "b.txt"),
            read("call_3", "c.txt"),
        ])
        .await;
        let mut extra = vec!["--tools", "auto", "--max-rounds", "1"];
        if json_mode {
            extra.push("--json");
        }
        let run = run_cmd(qore_run(&server, &project.0, &extra)).await;
        assert_eq!(run.code, Some(1), "json {json_mode}: {run:?}");

        let bodies = bodies(&server);
        assert_eq!(bodies.len(), 3, "json {json_mode}");
        assert_eq!(bodies[0]["tool_choice"], "auto", "{}", bodies[0]);
        assert_eq!(bodies[1]["tool_choice"], "auto", "{}", bodies[1]);
        assert_eq!(bodies[2]["tool_choice"], "none", "{}", bodies[2]);
        // Round 1 ran; the call over the limit was answered without running.
        let results = tool_results(&bodies[2]);
        assert_eq!(results.len(), 2);
        assert!(
            !results[0].1.starts_with("Error: ") && results[0].1.contains("1\ta"),
            "{}",
            results[0].1
        );
        assert_eq!(results[1].0, "call_2");
        assert!(
            results[1].1.starts_with("Error: Not run: tool round limit"),
            "{}",
            results[1].1
        );

        let last_err = run.stderr.lines().last().unwrap_or_default();
        assert!(
            last_err.starts_with("qore: stopped: ") && last_err.contains("--max-rounds"),
            "{}",
            run.stderr
        );
        if json_mode {
            let last = run.last_json();
            assert_eq!(last["type"], "stopped", "{last}");
            assert_eq!(last["reason"], "round_limit");
            // The whole history: user, then three assistant turns each answered.
            assert_eq!(last["messages"].as_array().map(Vec::len), Some(7), "{last}");
            assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
            // Each call once, the ones answered without running too, with their arguments.
            let calls: Vec<Value> = lines_of(&run, "tool_call")
                .iter()
                .map(|c| json!([c["id"], c["arguments"]["path"]]))
                .collect();
            assert_eq!(
                calls,
                [
                    json!(["call_1", "a.txt"]),
                    json!(["call_2", "b.txt"]),
                    json!(["call_3", "c.txt"])
                ]
            );
            let ran: Vec<Value> = lines_of(&run, "tool_result")
                .iter()
                .map(|r| r["ran"].clone())
                .collect();
            assert_eq!(ran, [json!(true), json!(false), json!(false)]);
        } else {
            // Text mode: each call, then its result, on stderr.
            let lines: Vec<&str> = run.stderr.lines().collect();
            assert_eq!(lines.len(), 7, "{}", run.stderr);
            assert_eq!(lines[2], r#"qore: tool read_file {"path":"b.txt"}"#);
            assert!(
                lines[3].starts_with("qore: read_file -> Not run: tool round limit"),
                "{}",
                lines[3]
            );
        }
    }
}

#[tokio::test]
async fn ctrl_c_while_an_approval_is_pending_answers_the_call_and_exits_130() {
    let project = Project::new(&[]);
    let server = server(vec![
        turn(
            "",
            &[(
                "call_w",
                "write_file",
                json!({"path": "out.txt", "content": "hello"}),
            )],
        ),
        answer("never sent"),
    ])
    .await;
    let mut live = Live::spawn(qore_run(
        &server,
        &project.0,
        &["--tools", "confirm", "--json"],
    ));
    live.next_of("approval_request").await;
    live.interrupt();
    let result = live.next_of("tool_result").await;
    assert_eq!(result["id"], "call_w");
    assert_eq!(result["ran"], false);
    assert!(
        result["content"].as_str().unwrap().contains("cancelled"),
        "{result}"
    );
    let run = live.finish().await;
    assert_eq!(run.code, Some(130), "{run:?}");
    assert_eq!(run.last_json(), json!({"type": "cancelled"}));
    assert_eq!(server.requests().len(), 1, "nothing is sent after Ctrl-C");
    assert_eq!(project.file("out.txt"), None);
}

#[tokio::test]
async fn without_tools_no_tools_are_offered_and_bad_tool_options_are_refused() {
    let project = Project::new(&[]);

    // Stdin is not a terminal: the default is off, the request offers nothing.
    let server = server(vec![answer("Hi."), answer("Hi.")]).await;
    let run = run_cmd(qore_run(&server, &project.0, &[])).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let run_off = run_cmd(qore_run(&server, &project.0, &["--tools", "off"])).await;
    assert_eq!(run_off.code, Some(0), "{run_off:?}");
    for body in bodies(&server) {
        assert!(body.get("tools").is_none(), "{body}");
    }
    // `--yes` alone means auto: tools are offered.
    let server = server_with_one_answer().await;
    let run = run_cmd(qore_run(&server, &project.0, &["--yes"])).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(offered(&bodies(&server)[0]).contains(&"write_file".to_owned()));

    let server = server_with_one_answer().await;
    // A project that does not exist.
    let missing = project.0.join("missing");
    let run = run_cmd(qore_run(&server, &missing, &["--tools", "auto"])).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.one_stderr_line().contains("--project"), "{run:?}");
    assert!(server.requests().is_empty());

    // --yes with tools off or read-only is a usage error.
    for mode in ["off", "read-only"] {
        let run = run_with_limit(
            qore_run(&server, &project.0, &["--tools", mode, "--yes"]),
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(run.code, Some(2), "{mode}: {run:?}");
        assert!(run.stderr.contains("--yes"), "{mode}: {run:?}");
    }
    assert!(server.requests().is_empty());
}

/// The text of the system and user messages of a Chat Completions body.
fn texts_of(body: &Value, role: &str) -> Vec<String> {
    (body["messages"].as_array().expect("messages").iter())
        .filter(|m| m["role"] == role)
        .map(|m| content_text(&m["content"]))
        .collect()
}

const TEXT_CALL: &str = "Let me look.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>";

/// A text-protocol run: no native tools offered, the protocol in the system message, the
/// call run, its result back as a `<tool_result>` block, and the block not printed.
fn assert_text_protocol_run(run: &Run, chat: &[Value]) {
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Let me look.\nIt says alpha.\n", "{run:?}");
    assert!(
        run.stderr
            .contains(r#"qore: tool read_file {"path":"notes.txt"}"#),
        "{run:?}"
    );
    assert_eq!(chat.len(), 2, "{chat:#?}");
    for body in chat {
        assert!(offered(body).is_empty(), "{body}");
        assert!(body.get("tool_choice").is_none(), "{body}");
        let system = texts_of(body, "system").join("\n");
        assert!(
            system.contains("Tool-use protocol") && system.contains("#### read_file"),
            "{system}"
        );
    }
    let users = texts_of(&chat[1], "user");
    let last = users.last().expect("a user message");
    assert!(
        last.starts_with("<tool_result name=\"read_file\" id=\"")
            && last.contains("alpha line")
            && last.ends_with("</tool_result>"),
        "{last}"
    );
    assert!(texts_of(&chat[1], "assistant").contains(&TEXT_CALL.to_owned()));
}

#[tokio::test]
async fn the_text_protocol_runs_calls_written_in_the_reply() {
    let project = Project::new(&[("notes.txt", "alpha line\n")]);
    let server = server(vec![answer(TEXT_CALL), answer("It says alpha.")]).await;
    let run = run_cmd(qore_run(
        &server,
        &project.0,
        &["--tools", "auto", "--tool-protocol", "text"],
    ))
    .await;
    assert_text_protocol_run(&run, &bodies(&server));
}

#[tokio::test]
async fn auto_picks_the_text_protocol_for_a_model_listed_without_tool_calling() {
    let project = Project::new(&[("notes.txt", "alpha line\n")]);
    let listing = r#"{"object": "list", "data": [{"id": "m", "object": "model", "capabilities": {"function_calling": false}}]}"#;
    let server = server(vec![
        Reply::json(200, listing),
        answer(TEXT_CALL),
        answer("It says alpha."),
    ])
    .await;
    let url = format!("{}/v1", server.url());
    let project_dir = project.0.to_str().expect("UTF-8 path");
    let run = run_cmd(command(&[
        "run",
        "--url",
        &url,
        "--project",
        project_dir,
        "--tools",
        "auto",
        "Look.",
    ]))
    .await;
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/models");
    let chat: Vec<Value> = (requests[1..].iter())
        .map(|r| r.json().expect("a JSON body"))
        .collect();
    assert_text_protocol_run(&run, &chat);
}

async fn server_with_one_answer() -> ReplayServer {
    server(vec![answer("Hi.")]).await
}

/// `qore run` against `server` on `project`, in a pseudo-terminal: what is written to the
/// child's stdin is typed on the terminal, its stdout is what the terminal shows.
#[cfg(target_os = "linux")]
fn on_a_terminal(server: &ReplayServer, project: &Project) -> Child {
    let url = format!("{}/v1", server.url());
    let qore = [
        common::QORE,
        "run",
        "--url",
        &url,
        "--model",
        MODEL,
        "--project",
        project.0.to_str().expect("UTF-8 path"),
        "Work on the project.",
    ];
    in_pty(&qore, &[])
}

/// On a terminal (a pseudo-terminal from util-linux `script`), tools default to confirm and
/// the terminal asks: `a` allows the tool for the rest of the run, `n REASON` denies with a
/// reason the model gets.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn on_a_terminal_confirm_is_the_default_and_asks_y_a_n() {
    if !has_script() {
        return;
    }
    let project = Project::new(&[]);
    let write = |id: &'static str, path: &str| {
        turn(
            "",
            &[(id, "write_file", json!({"path": path, "content": id}))],
        )
    };
    let server = server(vec![
        write("call_a", "a.txt"),
        write("call_b", "b.txt"),
        turn(
            "",
            &[("call_c", "run_command", json!({"argv": ["echo", "hi"]}))],
        ),
        answer("All done."),
    ])
    .await;
    let mut child = on_a_terminal(&server, &project);
    let mut terminal = child.stdout.take().expect("stdout");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut seen = String::new();
    const PROMPT: &str = "[y] yes, [a] always for ";

    read_until_count(&mut terminal, &mut seen, PROMPT, 1).await;
    assert!(
        seen.contains(r#"qore: run write_file {"content":"call_a","path":"a.txt"}?"#),
        "{seen}"
    );
    stdin.write_all(b"a\n").await.expect("answer");
    stdin.flush().await.expect("flush");
    // write_file is allowed for the rest of the run: the next prompt is run_command's.
    read_until_count(&mut terminal, &mut seen, PROMPT, 2).await;
    assert!(seen.contains("qore: run run_command "), "{seen}");
    stdin.write_all(b"n not today\n").await.expect("answer");
    stdin.flush().await.expect("flush");
    read_until_count(&mut terminal, &mut seen, "All done.", 1).await;
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("qore ends")
        .expect("wait");
    assert!(status.success(), "{status:?}: {seen}");
    assert_eq!(seen.matches(PROMPT).count(), 2, "{seen}");

    assert_eq!(project.file("a.txt").as_deref(), Some("call_a"));
    assert_eq!(project.file("b.txt").as_deref(), Some("call_b"));
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 4);
    assert!(offered(&bodies[0]).contains(&"write_file".to_owned()));
    let results = tool_results(&bodies[3]);
    assert_eq!(results.len(), 3);
    assert!(!results[1].1.starts_with("Error: "), "{}", results[1].1);
    assert_eq!(results[2].0, "call_c");
    assert!(
        results[2].1.starts_with("Error: ")
            && results[2].1.contains("declined")
            && results[2].1.contains("not today"),
        "{}",
        results[2].1
    );
}

/// Ctrl-C typed while the terminal asks: the question's line is ended, the call is answered
/// "not run", nothing more is sent, exit code 130.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn ctrl_c_at_the_terminal_prompt_cancels_cleanly() {
    if !has_script() {
        return;
    }
    let project = Project::new(&[]);
    let server = server(vec![
        turn(
            "",
            &[(
                "call_w",
                "write_file",
                json!({"path": "out.txt", "content": "x"}),
            )],
        ),
        answer("never sent"),
    ])
    .await;
    let mut child = on_a_terminal(&server, &project);
    let mut terminal = child.stdout.take().expect("stdout");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut seen = String::new();
    read_until_count(
        &mut terminal,
        &mut seen,
        "(n REASON tells the model why): ",
        1,
    )
    .await;
    // The terminal's interrupt character.
    stdin.write_all(b"\x03").await.expect("type Ctrl-C");
    stdin.flush().await.expect("flush");
    read_until_count(&mut terminal, &mut seen, "qore: cancelled", 1).await;
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("qore ends")
        .expect("wait");
    assert_eq!(status.code(), Some(130), "{seen}");
    let lines: Vec<&str> = seen.lines().map(str::trim_end).collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("qore: write_file -> "))
        .unwrap_or_else(|| panic!("no result line: {seen}"));
    assert_eq!(
        lines[at], "qore: write_file -> Not run: cancelled.",
        "{seen}"
    );
    assert!(
        lines[at - 1].ends_with("(n REASON tells the model why): ^C")
            || lines[at - 1].ends_with("(n REASON tells the model why): "),
        "the prompt's line is ended: {seen}"
    );
    assert_eq!(lines[at + 1], "qore: cancelled", "{seen}");
    assert_eq!(server.requests().len(), 1, "nothing is sent after Ctrl-C");
    assert_eq!(project.file("out.txt"), None);
}

/// Ctrl-C while a tool runs (`cat` on a FIFO nobody writes: it blocks until stopped): the
/// call is stopped and answered, nothing more is sent, exit code 130.
#[cfg(unix)]
#[tokio::test]
async fn ctrl_c_while_a_tool_runs_stops_it_and_exits_130() {
    let project = Project::new(&[]);
    let made = std::process::Command::new("mkfifo")
        .arg(project.0.join("fifo"))
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let server = server(vec![
        turn(
            "",
            &[("call_c", "run_command", json!({"argv": ["cat", "fifo"]}))],
        ),
        answer("never sent"),
    ])
    .await;
    let mut live = Live::spawn(qore_run(
        &server,
        &project.0,
        &["--tools", "auto", "--json"],
    ));
    // Nothing to answer: stdin is closed (else it would be read as the prompt's context).
    drop(live.child.stdin.take());
    live.next_of("tool_call").await;
    // Let the command start and block.
    tokio::time::sleep(Duration::from_millis(500)).await;
    live.interrupt();
    let result = live.next_of("tool_result").await;
    assert_eq!(result["id"], "call_c");
    assert_eq!(result["ran"], true, "{result}");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result["content"].as_str().unwrap().contains("cancelled"),
        "{result}"
    );
    let run = live.finish().await;
    assert_eq!(run.code, Some(130), "{run:?}");
    assert_eq!(run.last_json(), json!({"type": "cancelled"}));
    assert_eq!(server.requests().len(), 1, "nothing is sent after Ctrl-C");
}
