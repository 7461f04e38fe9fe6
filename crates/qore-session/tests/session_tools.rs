//! A session with tools over a real loopback server and a real store: a turn ended by a
//! tool-loop limit is one failed outcome, and what it stored is well-formed history that
//! the next send carries.

use qore_client::tool_loop::{ApprovalMode, LoopConfig};
use qore_client::{protocols, CancellationToken, Client, ClientConfig};
use qore_core::{ContentBlock, ErrorCategory, Message, Role};
use qore_session::TurnOutcome;
use qore_session::{LoopStop, NobodyAsked, SessionManager, SessionSetup, Target, ToolSet};
use qore_store::{NewSession, SqliteStore, Store};
use qore_testkit::chat::{chat_answer, chat_tool_call};
use qore_testkit::{ReplayServer, Reply};

/// An answer that calls `list_files` on `.` (always the same call).
fn list_call(id: &str) -> Reply {
    chat_tool_call(id, "list_files", r#"{"path":"."}"#)
}

#[tokio::test]
async fn a_turn_stopped_by_a_limit_fails_and_stores_well_formed_history() {
    let replies = vec![
        list_call("a"),
        list_call("b"),
        list_call("c"),
        chat_answer("Fine."),
    ];
    let server = ReplayServer::start(replies).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("notes.md"), "hello").unwrap();
    let db = dir.path().join("qore.db");
    let manager = SessionManager::new(
        Some(std::sync::Arc::new(SqliteStore::open(&db).unwrap())),
        qore_agents::config::Config::load(None),
        qore_session::traced_notes(),
    );
    let config = ClientConfig {
        base_url: format!("{}/v1", server.url()),
        ..ClientConfig::default()
    };
    let client = Client::new(protocols::by_name("openai-chat").unwrap(), config).unwrap();
    let mut setup = SessionSetup::new(Target::new(client, "tiny"));
    let tools = ToolSet::builtin(
        &project,
        ApprovalMode::Auto,
        Box::new(NobodyAsked),
        LoopConfig::default(),
        false,
    );
    setup.tools = Some(tools.unwrap());
    let session = manager.create(&NewSession::default(), setup).await.unwrap();
    let cancel = CancellationToken::new();
    let mut ran = 0;
    let outcome = session
        .send(Message::user("Look around."), &cancel, |event| {
            ran += usize::from(matches!(
                event,
                qore_client::tool_loop::LoopEvent::ToolFinished(_)
            ));
        })
        .await;
    let TurnOutcome::Failed {
        error,
        limit,
        rounds,
        ..
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Limit, "{error:?}");
    assert_eq!(
        limit,
        &Some(LoopStop::RepeatedCall {
            tool: "list_files".into(),
            times: 3
        })
    );
    assert_eq!(
        (*rounds, ran),
        (3, 3),
        "three rounds, every call answered (the third: not run)"
    );
    // Stored: the user message, then three (call, result) pairs: well-formed.
    let id = session.id().unwrap();
    let stored = SqliteStore::open(&db).unwrap().history(id).await.unwrap();
    let roles: Vec<Role> = stored.iter().map(|m| m.role).collect();
    use Role::{Assistant as A, User as U};
    assert_eq!(roles, [U, A, U, A, U, A, U]);
    let last = stored.last().unwrap();
    assert!(
        matches!(&last.blocks[0], ContentBlock::ToolResult { content, .. }
            if format!("{content:?}").contains("Not run")),
        "{last:?}"
    );
    // The next send carries all of it, and the new message after the results.
    let outcome = (session.send(Message::user("Stop now."), &cancel, |_| {})).await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
    let body = server.requests()[3].json().unwrap();
    let roles: Vec<&str> = (body["messages"].as_array().unwrap().iter())
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "user"
        ]
    );
}
