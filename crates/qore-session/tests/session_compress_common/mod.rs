//! Shared by the session compression tests: a real config dir whose chat agent talks to one
//! loopback server and whose compression roster's first agent to another, a real SQLite
//! store, and a session that records the compressions it is told about.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use qore_agents::config::Config;
use qore_client::CancellationToken;
use qore_core::Message;
use qore_session::compress::Compressed;
use qore_session::{Session, SessionManager, SessionSetup, TargetSpec, TurnOutcome};
use qore_store::{NewSession, SqliteStore};
use qore_testkit::ReplayServer;

pub const SUMMARY: &str = "SUMMARY: they said one, then answered first.";

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub manager: SessionManager,
    pub session: Session,
    pub original: String,
    pub told: Arc<Mutex<Vec<Compressed>>>,
    /// The notes for the user (warnings included).
    pub notes: Arc<Mutex<Vec<String>>>,
}

/// A config dir: agent `talker` (model `tiny`, `context_window` when given) on `chat`,
/// agent `squeezer` (model `small`) on `squeeze`, first of the compression roster.
pub fn config_dir(
    chat: &ReplayServer,
    squeeze: &ReplayServer,
    window: Option<u64>,
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let window = window.map_or(String::new(), |w| format!("context_window = {w}\n"));
    let provider = |name: &str, server: &ReplayServer| {
        format!(
            "name = \"{name}\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
            server.url()
        )
    };
    let files = [
        ("providers/chat.toml", provider("chat", chat)),
        ("providers/squeeze.toml", provider("squeeze", squeeze)),
        (
            "agents/talker.toml",
            format!(
                "name = \"talker\"\nextends = \"openai-chat\"\nprovider = \"chat\"\nmodel = \"tiny\"\n\
                 system_prompt = \"Be brief.\"\n{window}"
            ),
        ),
        (
            "agents/squeezer.toml",
            "name = \"squeezer\"\nextends = \"openai-chat\"\nprovider = \"squeeze\"\n\
             model = \"small\"\nsystem_prompt = \"Summarise.\"\n"
                .to_owned(),
        ),
        ("pipelines.toml", "compression = [\"squeezer\"]\n".to_owned()),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A stored session on `talker`; `threshold` as `SessionManager::set_compress_at`, or the
/// environment's when `None`.
pub async fn fixture(
    chat: &ReplayServer,
    squeeze: &ReplayServer,
    window: Option<u64>,
    threshold: Option<Option<f64>>,
) -> Fixture {
    fixture_in(config_dir(chat, squeeze, window), threshold).await
}

/// [`fixture`] on the config dir `dir`, which has the agent `talker`.
pub async fn fixture_in(dir: tempfile::TempDir, threshold: Option<Option<f64>>) -> Fixture {
    let store = SqliteStore::open(dir.path().join("qore.db")).unwrap();
    let notes = Arc::new(Mutex::new(Vec::new()));
    let sink = notes.clone();
    let mut manager = SessionManager::new(
        Some(Arc::new(store)),
        Config::load(Some(dir.path())),
        Arc::new(move |note: &str| sink.lock().unwrap().push(note.to_owned())),
    );
    if let Some(threshold) = threshold {
        manager.set_compress_at(threshold);
    }
    let spec = TargetSpec {
        agent: Some("talker".into()),
        project: Some(dir.path().to_owned()),
        ..TargetSpec::default()
    };
    let target = manager.reach(&spec).await.unwrap();
    let new = NewSession {
        project_dir: Some(dir.path().to_owned()),
        ..NewSession::default()
    };
    let session = manager
        .create(&new, SessionSetup::new(target))
        .await
        .unwrap();
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = told.clone();
    session.on_compressed(move |c| sink.lock().unwrap().push(c.clone()));
    let original = session.id().unwrap().to_owned();
    Fixture {
        dir,
        manager,
        session,
        original,
        told,
        notes,
    }
}

/// Send `text`; the turn must finish.
pub async fn say(session: &Session, text: &str) {
    let cancel = CancellationToken::new();
    let outcome = session.send(Message::user(text), &cancel, |_| {}).await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
}

/// A user message of `words` words.
pub fn long_message(words: usize) -> String {
    let mut text = String::from("Now the long one:");
    for i in 0..words {
        text.push_str(&format!(" word{i}"));
    }
    text
}
