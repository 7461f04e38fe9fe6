//! `qore chat` scripted through stdin: the real binary, a real SQLite file in a temp
//! `QORE_DATA_DIR`, a loopback server replaying recorded answers cut at awkward places.
//! Checked: what the binary prints, what it sends (the second request carries the first
//! turn), what the store holds, and that a `kill -9` mid-stream loses nothing earlier.

mod common;

use std::path::Path;
use std::time::Duration;

use common::live::Live;
use common::turns::{answer, turn};
use common::{base_url, command, exchange, run_with_limit, run_with_stdin, wire, IRREGULAR};
use qore_testkit::{reply_from_exchange, Exchange, ReplayServer, Reply};
use serde_json::{json, Value};

const MODEL: &str = "test-model";
/// A recorded streamed text answer.
const ANSWER: &str = "openai/regression/chat_compat_finish_reason_natural.yaml";

/// A temp data dir and project dir.
struct Dirs {
    data: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Dirs {
        Dirs {
            data: tempfile::tempdir().expect("data dir"),
            project: tempfile::tempdir().expect("project dir"),
        }
    }

    fn db(&self) -> std::path::PathBuf {
        self.data.path().join("qore.db")
    }

    /// `qore chat --url … --model … --project … EXTRA` with this data dir.
    fn chat(&self, url: &str, extra: &[&str]) -> tokio::process::Command {
        let project = self.project.path().to_str().expect("UTF-8 path");
        let mut args = vec!["chat", "--url", url, "--model", MODEL, "--project", project];
        args.extend_from_slice(extra);
        let mut cmd = command(&args);
        cmd.env("QORE_DATA_DIR", self.data.path());
        cmd
    }
}

/// A server replaying the recorded answer `times` times, and its base URL.
async fn answering(times: usize) -> Option<(ReplayServer, String, Exchange)> {
    let ex = exchange(ANSWER)?;
    let replies = (0..times)
        .map(|_| reply_from_exchange(&ex, IRREGULAR))
        .collect();
    let server = ReplayServer::start(replies).await.expect("server starts");
    let url = base_url(&server, &ex, "/chat/completions");
    Some((server, url, ex))
}

/// `(role, text)` of each message of a request body (string or text-part content).
fn roles_and_texts(body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().expect("messages");
    messages
        .iter()
        .map(|m| {
            let role = m["role"].as_str().expect("role").to_owned();
            (role, common::content_text(&m["content"]))
        })
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    (expected.iter())
        .map(|(role, text)| (role.to_string(), text.to_string()))
        .collect()
}

/// `PRAGMA integrity_check` of the database, and its turns as `(seq, status, messages)`.
fn stored_turns(db: &Path, session: &str) -> (String, Vec<(i64, String, i64)>) {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("integrity_check");
    let mut query = conn
        .prepare(
            "SELECT t.seq, t.status, (SELECT count(*) FROM messages m WHERE m.turn_id = t.id)
             FROM turns t WHERE t.session_id = ?1 ORDER BY t.seq",
        )
        .expect("prepare");
    let turns = query
        .query_map([session], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    (check, turns)
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

#[tokio::test]
async fn a_scripted_chat_carries_the_first_turn_runs_commands_and_resumes() {
    let Some((server, url, ex)) = answering(5).await else {
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
    // The second request carries the first turn.
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let second = requests[1].json().expect("JSON body");
    assert_eq!(roles_and_texts(&second), pairs(&conversation[..3]));
    assert_eq!(second["model"], MODEL);
    // The commands answered in between, and a typo got a suggestion, not a request.
    let tokens = of_type(&lines, "tokens");
    assert_eq!(tokens.len(), 1, "{run:?}");
    let usage = wire(&ex.response_body).usage.expect("recorded usage");
    assert_eq!(
        tokens[0]["last_usage"]["input_tokens"],
        usage["prompt_tokens"]
    );
    assert!(run.stderr.contains("did you mean /help?"), "{}", run.stderr);
    // A command that fails says why on stderr and the chat goes on, on the same model.
    assert!(run.stderr.contains("no-such-agent"), "{}", run.stderr);
    assert!(
        run.stderr.contains("no session matches 'nope'"),
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
    assert_eq!(exported["messages"].as_array().map(Vec::len), Some(4));
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
    let bodies: Vec<Value> = (server.requests().iter().skip(2))
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

/// A server that answers the first request in full, stalls the second mid-stream and
/// answers the third in full, and
/// `qore chat --json` on it, past the second turn's first text.
async fn stalled_second_turn(dirs: &Dirs, extra: &[&str]) -> Option<(ReplayServer, Live, String)> {
    let ex = exchange(ANSWER)?;
    let whole = reply_from_exchange(&ex, IRREGULAR);
    // The first chunks (a few words of text), then silence with the connection open.
    let cut = ex.response_body.match_indices("data:").nth(3)?.0;
    let stalled: Reply = reply_from_exchange(&ex, IRREGULAR).stall_after(cut);
    let third = reply_from_exchange(&ex, IRREGULAR);
    let server = ReplayServer::start(vec![whole, stalled, third])
        .await
        .expect("server starts");
    let url = base_url(&server, &ex, "/chat/completions");
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let mut live = Live::spawn(dirs.chat(&url, &args));
    let id = live.next_of("session").await["id"]
        .as_str()
        .expect("id")
        .to_owned();
    live.send_text("What is an eclipse?\n").await;
    live.next_of("result").await;
    live.send_text("And a lunar one?\n").await;
    live.next_of("text_delta").await;
    Some((server, live, id))
}

#[tokio::test]
async fn kill_9_mid_stream_keeps_every_earlier_turn() {
    let dirs = Dirs::new();
    let Some((_server, mut live, id)) = stalled_second_turn(&dirs, &[]).await else {
        return;
    };
    live.child.start_kill().expect("SIGKILL");
    live.child.wait().await.expect("wait");
    let (check, turns) = stored_turns(&dirs.db(), &id);
    assert_eq!(check, "ok");
    assert_eq!(turns, vec![(1, "finished".to_owned(), 2)]);
    // Reopened through the store: the history is the first turn, well-formed.
    let store = qore_store::Store::open(dirs.db()).expect("reopen");
    let history = store.history(&id).expect("history");
    let messages: Vec<_> = history.iter().collect();
    qore_store::check_well_formed(&messages).expect("well-formed");
    assert_eq!(messages.len(), 2);
}

#[tokio::test]
async fn ctrl_c_cancels_the_turn_in_flight_and_the_chat_goes_on() {
    let dirs = Dirs::new();
    let Some((server, mut live, id)) = stalled_second_turn(&dirs, &[]).await else {
        return;
    };
    live.interrupt();
    live.next_of("cancelled").await;
    live.send_text("Go on.\n").await;
    live.next_of("result").await;
    let run = live.finish().await;
    assert_eq!(
        run.code,
        Some(0),
        "the chat ends at the end of stdin: {run:?}"
    );
    // The third request carries the first turn, then the cancelled turn's question and the
    // new one as one user message (the session merges them for the wire).
    let third = server.requests()[2].json().expect("JSON body");
    let sent = roles_and_texts(&third);
    let roles: Vec<&str> = sent.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let last = &sent[2].1;
    assert!(
        last.contains("And a lunar one?") && last.contains("Go on."),
        "{last:?}"
    );
    let (check, turns) = stored_turns(&dirs.db(), &id);
    assert_eq!(check, "ok");
    // The cancelled turn keeps the user's message, not the partial answer.
    assert_eq!(
        turns,
        vec![
            (1, "finished".to_owned(), 2),
            (2, "cancelled".to_owned(), 1),
            (3, "finished".to_owned(), 2)
        ]
    );
}

#[tokio::test]
async fn a_bad_store_is_one_clear_error() {
    let dirs = Dirs::new();
    std::fs::write(dirs.db(), "not a database").expect("write");
    let run = run_with_limit(
        dirs.chat("http://127.0.0.1:9/v1", &[]),
        Duration::from_secs(30),
    )
    .await;
    assert_eq!(run.code, Some(1), "{run:?}");
    let line = run.one_stderr_line();
    assert!(
        line.contains("session store") && line.contains("--ephemeral"),
        "{line}"
    );
}
