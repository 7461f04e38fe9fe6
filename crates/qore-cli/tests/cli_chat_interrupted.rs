//! `qore chat` cut short: `kill -9` mid-stream, Ctrl-C mid-stream, a store that cannot be
//! opened. The real binary, a real SQLite file in a temp `QORE_DATA_DIR`, a loopback
//! server replaying a recorded answer and stalling one mid-stream.

mod common;

use std::time::Duration;

use common::chat::{roles_and_texts, stored_turns, Dirs, ANSWER};
use common::live::Live;
use common::{base_url, exchange, run_with_limit, IRREGULAR};
use qore_testkit::{reply_from_exchange, ReplayServer, Reply};

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
    let store = qore_store::SqliteStore::open(dirs.db()).expect("reopen");
    let history = qore_store::Store::history(&store, &id)
        .await
        .expect("history");
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
