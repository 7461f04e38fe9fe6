//! A stored session: every turn saved in a SQLite file, continued later by its id (or a
//! unique prefix of it, or its name), with qore's built-in tools over a project directory.
//!
//! ```sh
//! export QORE_URL=http://127.0.0.1:18080/v1
//! cargo run -p qore-session --example session_sqlite -- "Which files are here?"
//! # prints `session 01J...`; continue it (the model sees the first turn):
//! QORE_SESSION=01J cargo run -p qore-session --example session_sqlite -- "And the biggest?"
//! ```
//!
//! `QORE_DB` is the SQLite file (default `example-sessions.db`), `QORE_PROJECT` the
//! directory the tools may read (default the current one). The tools run in read-only
//! mode: reading tools run, writing ones are refused, and nobody is asked
//! ([`NobodyAsked`]); a front end passes its own [`qore_client::tool_loop::Approver`] with
//! `ApprovalMode::Confirm`. [`chat_in_session`] is the whole program; `tests/examples.rs`
//! runs it twice against a loopback server.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use qore_client::tool_loop::{ApprovalMode, LoopConfig, LoopEvent};
use qore_client::{protocols, CancellationToken, Client, ClientConfig};
use qore_core::{Message, ResponseEvent};
use qore_session::{
    NobodyAsked, SessionError, SessionManager, SessionSetup, Target, ToolSet, TurnOutcome,
};
use qore_store::{NewSession, SqliteStore};

/// What one run needs: the store, the model and the project the tools see.
pub struct Setup {
    /// The SQLite file (created when missing).
    pub db: PathBuf,
    /// A Chat Completions base URL.
    pub url: String,
    /// The model to ask.
    pub model: String,
    /// The directory the built-in tools may read.
    pub project: PathBuf,
}

/// Send `prompt` in the session `continue_id` names (a new session when `None`); returns
/// the session's id and how the turn ended. The answer's text is printed as it streams.
pub async fn chat_in_session(
    setup: &Setup,
    continue_id: Option<&str>,
    prompt: &str,
) -> Result<(String, TurnOutcome), SessionError> {
    let store = Arc::new(SqliteStore::open(&setup.db)?);
    let config = qore_agents::config::Config::load(None);
    let manager = SessionManager::new(Some(store), config, qore_session::traced_notes());

    let protocol = protocols::by_name("openai-chat")
        .ok_or_else(|| qore_core::ErrorInfo::config("openai-chat is not registered"))?;
    let client = Client::new(protocol, ClientConfig::new(&setup.url))?;
    let mut session_setup = SessionSetup::new(Target::new(client, &setup.model));
    session_setup
        .layers
        .add("Answer briefly. Use the tools to look at the project.");
    session_setup.tools = Some(ToolSet::builtin(
        &setup.project,
        ApprovalMode::ReadOnly,
        Box::new(NobodyAsked),
        LoopConfig::default(),
        false,
    )?);

    let session = match continue_id {
        Some(id) => manager.open(id, session_setup).await?,
        None => {
            let new = NewSession {
                project_dir: Some(setup.project.clone()),
                model: Some(setup.model.clone()),
                ..NewSession::default()
            };
            manager.create(&new, session_setup).await?
        }
    };
    let outcome = (session.send(Message::user(prompt), &CancellationToken::new(), |event| {
        if let LoopEvent::Response(ResponseEvent::TextDelta { text }) = event {
            print!("{text}");
        }
    }))
    .await;
    println!();
    let id = session.id().unwrap_or_default().to_owned();
    manager.release(session);
    Ok((id, outcome))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let setup = Setup {
        db: var("QORE_DB", "example-sessions.db").into(),
        url: var("QORE_URL", "http://127.0.0.1:18080/v1"),
        model: var("QORE_MODEL", "default"),
        project: var("QORE_PROJECT", ".").into(),
    };
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() {
        "Which files are here?".into()
    } else {
        prompt
    };
    let continue_id = std::env::var("QORE_SESSION").ok();
    match chat_in_session(&setup, continue_id.as_deref(), &prompt).await {
        Ok((id, outcome)) => {
            eprintln!("session {id} ({})", Path::new(&setup.db).display());
            match outcome {
                TurnOutcome::Finished { .. } => std::process::ExitCode::SUCCESS,
                other => {
                    eprintln!("the turn did not finish: {other:?}");
                    std::process::ExitCode::FAILURE
                }
            }
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
