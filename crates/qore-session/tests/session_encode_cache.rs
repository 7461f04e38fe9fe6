//! The session keeps its encode cache across turns, and it never serves stale bytes: a
//! script of turns (and `/compress`) run on ONE session sends exactly the bytes the same
//! script sends when every step runs on a session freshly opened from the store (a new
//! cache each time). Real parts: a config dir whose agent talks to a loopback server, a
//! real SQLite store; the request bodies compared are the ones the servers recorded.
//! The cases change history between turns the ways a session does: a failed turn, tool
//! calls nothing answered (kept in memory, dropped from the wire by sanitizing), the tool
//! loop's rounds, and a compression that replaces the older turns with a summary.

mod session_compress_common;

use qore_client::tool_loop::{ApprovalMode, LoopConfig};
use qore_client::CancellationToken;
use qore_core::Message;
use qore_session::{
    Compressing, NobodyAsked, Session, SessionManager, SessionSetup, TargetSpec, ToolSet,
};
use qore_testkit::chat::{chat_answer, chat_tool_call};
use qore_testkit::{ReplayServer, Reply};
use session_compress_common::{fixture, SUMMARY};

#[derive(Clone, Copy)]
enum Step {
    Send(&'static str),
    Compress,
}

struct Case {
    name: &'static str,
    /// What the chat server answers, in order.
    replies: fn() -> Vec<Reply>,
    /// Whether the session offers the built-in tools.
    tools: bool,
    steps: &'static [Step],
}

fn answers(texts: &[&str]) -> Vec<Reply> {
    texts.iter().map(|text| chat_answer(text)).collect()
}

fn bad_request() -> Reply {
    Reply::json(
        400,
        r#"{"error":{"message":"no","type":"invalid_request_error"}}"#,
    )
}

fn list_call() -> Reply {
    chat_tool_call("call_1", "list_files", r#"{"path":"."}"#)
}

/// Answers to four sends whose second is answered with `odd`.
fn second_is(odd: Reply) -> Vec<Reply> {
    let mut replies = answers(&["Red."]);
    replies.push(odd);
    replies.extend(answers(&["Green.", "Blue."]));
    replies
}

const FOUR_SENDS: &[Step] = &[
    Step::Send("One?"),
    Step::Send("Two?"),
    Step::Send("Three?"),
    Step::Send("Four?"),
];

const CASES: &[Case] = &[
    Case {
        name: "plain turns",
        replies: || answers(&["Red.", "Green.", "Blue."]),
        tools: false,
        steps: &[Step::Send("One?"), Step::Send("Two?"), Step::Send("Three?")],
    },
    Case {
        name: "a failed turn in between",
        replies: || second_is(bad_request()),
        tools: false,
        steps: FOUR_SENDS,
    },
    Case {
        name: "tool calls nothing answered",
        replies: || second_is(list_call()),
        tools: false,
        steps: FOUR_SENDS,
    },
    Case {
        name: "the tool loop's rounds",
        replies: || {
            let mut replies = vec![list_call()];
            replies.extend(answers(&["Two files.", "Yes."]));
            replies
        },
        tools: true,
        steps: &[Step::Send("Look around."), Step::Send("Sure?")],
    },
    Case {
        name: "compressed between turns",
        replies: || answers(&["Red.", "Green.", "Blue.", "Grey."]),
        tools: false,
        steps: &[
            Step::Send("One?"),
            Step::Send("Two?"),
            Step::Send("Three?"),
            Step::Compress,
            Step::Send("Four?"),
        ],
    },
];

/// The bodies each server received: (chat, compression).
type Sent = (Vec<String>, Vec<String>);

/// The bodies `server` received, the run's original session id (which a summary names)
/// written as `ORIGINAL`.
fn bodies(server: &ReplayServer, original: &str) -> Vec<String> {
    (server.requests().iter())
        .map(|r| String::from_utf8_lossy(&r.body).replace(original, "ORIGINAL"))
        .collect()
}

/// The setup of the fixture's agent, with the built-in tools over `project` when `tools`.
async fn setup(manager: &SessionManager, project: &std::path::Path, tools: bool) -> SessionSetup {
    let spec = TargetSpec {
        agent: Some("talker".into()),
        project: Some(project.to_owned()),
        ..TargetSpec::default()
    };
    let mut setup = SessionSetup::new(manager.reach(&spec).await.unwrap());
    if tools {
        let config = LoopConfig::default();
        let builtin = ToolSet::builtin(
            project,
            ApprovalMode::Auto,
            Box::new(NobodyAsked),
            config,
            false,
        );
        setup.tools = Some(builtin.unwrap());
    }
    setup
}

/// One step on `session`: a send (it may fail: the script says what the server answers) or
/// a compression it continues after.
async fn step(manager: &SessionManager, session: &Session, step: Step) {
    let cancel = CancellationToken::new();
    match step {
        Step::Send(text) => drop(session.send(Message::user(text), &cancel, |_| {}).await),
        Step::Compress => {
            let compressing = Compressing::Open(session);
            manager.compress(compressing, None, &cancel).await.unwrap();
        }
    }
}

/// Run `case` on one session, or (`reopen`) each step on a session opened from the store.
async fn run(case: &Case, reopen: bool) -> Sent {
    let chat = ReplayServer::start((case.replies)()).await.unwrap();
    let squeeze = ReplayServer::start(vec![chat_answer(SUMMARY)])
        .await
        .unwrap();
    let fx = fixture(&chat, &squeeze, None, Some(None)).await;
    // The tools see a project that is the same in both runs (the config dir holds the store).
    let project = fx.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("notes.md"), "hello").unwrap();
    let setup_here = || setup(&fx.manager, &project, case.tools);
    if !reopen {
        let kept = setup_here().await;
        fx.session.set_setup(kept, fx.manager.notes()).await;
        for &one in case.steps {
            step(&fx.manager, &fx.session, one).await;
        }
        return (bodies(&chat, &fx.original), bodies(&squeeze, &fx.original));
    }
    let mut id = fx.original.clone();
    fx.manager.release(fx.session);
    for &one in case.steps {
        let session = fx.manager.open(&id, setup_here().await).await.unwrap();
        step(&fx.manager, &session, one).await;
        id = session.id().unwrap().to_owned();
        fx.manager.release(session);
    }
    (bodies(&chat, &fx.original), bodies(&squeeze, &fx.original))
}

#[tokio::test]
async fn one_session_sends_the_bytes_sessions_opened_from_the_store_send() {
    for case in CASES {
        let (kept, kept_summary) = run(case, false).await;
        let (reopened, reopened_summary) = run(case, true).await;
        let sends = case.steps.iter().filter(|s| matches!(s, Step::Send(_)));
        assert!(kept.len() >= sends.count(), "{}: {kept:?}", case.name);
        let offered = kept.iter().all(|body| body.contains("\"list_files\""));
        assert_eq!(offered, case.tools, "{}: {kept:?}", case.name);
        for (i, (kept, reopened)) in kept.iter().zip(&reopened).enumerate() {
            assert_eq!(kept, reopened, "{}: request {i}", case.name);
        }
        assert_eq!(kept.len(), reopened.len(), "{}", case.name);
        assert_eq!(kept_summary, reopened_summary, "{}", case.name);
    }
}
