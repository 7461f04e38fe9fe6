//! What the compression tests share: recorded replies, a store file seeded with turns, a
//! client for a loopback server, and one way to run `compress`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use qore_client::{CancellationToken, Client, ClientConfig};
use qore_core::{ContentBlock, Message, Role, Usage};
use qore_session::compress::{compress, CompressError, CompressOptions, Compressed, Keep};
use qore_store::{NewSession, SessionInfo, SqliteStore, Store, StoredTurn, TurnRecord, TurnStatus};
use qore_testkit::{Exchange, RecordedRequest, ReplayServer, Slicing};

/// The first exchange of a recorded cassette, or `None` without the fixtures.
pub fn recorded(path: &str) -> Option<Exchange> {
    let root = qore_testkit::fixtures_dir()?.join("rig-cassettes");
    let cassette = qore_testkit::load_cassette_file(&root, &root.join(path)).ok()?;
    cassette.exchanges.into_iter().next()
}

pub fn awkward() -> Slicing {
    Slicing::Irregular { seed: 13, max: 7 }
}

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_700_000_000_000 + ms)
}

/// A finished turn; with a tool call whose result is `RESULT-<word>` when `tool` is set.
pub fn turn(word: &str, index: u64, tool: bool) -> TurnRecord {
    let mut replies = Vec::new();
    if tool {
        let id = format!("call_{word}");
        replies.push(Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                id.clone(),
                "read_file",
                serde_json::json!({ "path": format!("{word}.rs") }),
            )],
        ));
        replies.push(Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                id,
                format!("RESULT-{word}"),
                false,
            )],
        ));
    }
    replies.push(Message::new(
        Role::Assistant,
        vec![
            ContentBlock::Thinking {
                text: format!("secret thought {word}"),
                signature: None,
            },
            ContentBlock::text(format!("answer {word}")),
        ],
    ));
    TurnRecord {
        user: Message::user(format!("question {word}")),
        replies,
        usage: Usage {
            input_tokens: Some(100 + index),
            output_tokens: Some(10),
            ..Usage::default()
        },
        model: Some("m-chat".into()),
        agent: Some("chat-agent".into()),
        started_at: at(index * 10),
        finished_at: at(index * 10 + 5),
        status: TurnStatus::Finished,
        file_changes: Vec::new(),
    }
}

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub store: SqliteStore,
    pub id: String,
}

/// A store file with one session of `turns` ((word, with a tool call) each).
pub async fn seeded(turns: &[(&str, bool)]) -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = SqliteStore::open(dir.path().join("qore.db")).expect("a new store");
    let id = store
        .create_session(&NewSession {
            project_dir: Some(PathBuf::from("/src/app")),
            agent: Some("chat-agent".into()),
            model: Some("m-chat".into()),
            ..NewSession::default()
        })
        .await
        .expect("a session");
    for (index, (word, tool)) in turns.iter().enumerate() {
        store
            .append_turn(&id, &turn(word, index as u64, *tool))
            .await
            .expect("a turn");
    }
    Fixture {
        _dir: dir,
        store,
        id,
    }
}

/// Everything stored about a session: its row, its turns, its history as JSON.
pub async fn snapshot(store: &dyn Store, id: &str) -> (SessionInfo, Vec<StoredTurn>, String) {
    let info = store.session(id).await.expect("the session");
    let turns = store.turns(id).await.expect("its turns");
    let history = store.history(id).await.expect("its history");
    let json = serde_json::to_string(&history).expect("history as JSON");
    (info, turns, json)
}

pub fn client(protocol: &str, server: &ReplayServer) -> Client {
    let wire = qore_client::protocols::by_name(protocol).expect("a protocol");
    Client::new(wire, ClientConfig::new(server.url())).expect("a client")
}

pub fn body(request: &RecordedRequest) -> String {
    String::from_utf8(request.body.clone()).expect("a UTF-8 body")
}

/// Compress the fixture's session through `server`, keeping `keep`.
pub async fn run(
    fx: &mut Fixture,
    protocol: &str,
    server: &ReplayServer,
    keep: Keep,
) -> Result<Compressed, CompressError> {
    let options = CompressOptions {
        keep,
        agent: Some("claude-compression".into()),
        ..CompressOptions::default()
    };
    let client = client(protocol, server);
    let model = "compress-model";
    compress(
        &fx.store,
        &fx.id,
        &client,
        model,
        &options,
        CancellationToken::new(),
    )
    .await
}
