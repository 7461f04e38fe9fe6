//! The `session_sqlite` example run twice against a loopback Chat Completions server and a
//! real SQLite file: the first run lists the project with a built-in tool and saves the
//! turn; the second continues the session by an id prefix and sends the first turn again.

#[path = "../examples/session_sqlite.rs"]
#[allow(dead_code)]
mod session_sqlite;

use qore_session::TurnOutcome;
use qore_testkit::chat::{chat_answer, chat_tool_call, sent_messages};
use qore_testkit::ReplayServer;
use session_sqlite::{chat_in_session, Setup};

#[tokio::test]
async fn a_session_runs_a_tool_is_stored_and_continues_by_id_prefix() {
    let server = ReplayServer::start(vec![
        chat_tool_call("call_1", "list_files", "{}"),
        chat_answer("One file: notes.txt."),
        chat_answer("It holds a shopping list."),
    ])
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("notes.txt"), "milk\n").unwrap();
    let setup = Setup {
        db: dir.path().join("sessions.db"),
        url: format!("{}/v1", server.url()),
        model: "tiny".into(),
        project,
    };

    let (id, outcome) = chat_in_session(&setup, None, "Which files are here?")
        .await
        .expect("the first run");
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert!(id.len() > 8, "a stored session has an id: {id:?}");
    let (again, outcome) = chat_in_session(&setup, Some(&id[..8]), "What is in it?")
        .await
        .expect("the second run");
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(again, id);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The tool ran in the project: its listing went back to the model.
    let second = sent_messages(&requests[1]);
    let (role, listing) = second.last().unwrap();
    assert_eq!(role, "tool");
    assert!(listing.contains("notes.txt"), "{listing}");
    // The continued session sent the stored turn (question, call, result, answer) first.
    let third = sent_messages(&requests[2]);
    let roles: Vec<&str> = third.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(third[1].1, "Which files are here?");
    assert_eq!(third[4].1, "One file: notes.txt.");
    assert_eq!(third[5].1, "What is in it?");
}
