//! qore-session: the layer that turns the engine into something people talk to. Front ends
//! (the CLI, an editor server, an MCP server) parse, print and ask; everything about a
//! conversation lives here.
//!
//! Promises:
//! - [`Session`]: one conversation. It owns its history, its system prompt [`Layers`], the
//!   client and model ([`Target`]) and the tools ([`ToolSet`]); [`Session::send`] runs one
//!   turn (one request, or the tool loop) and returns the one [`TurnOutcome`]: finished,
//!   failed (a tool-loop limit included) or cancelled, with usage. One request in flight
//!   per session; history sanitized before every send ([`sanitize`]); each turn saved.
//! - [`SessionManager`]: the store ([`SharedStore`]: SQLite or PostgreSQL behind one async
//!   interface; or none: ephemeral), sessions created, opened by id,
//!   name or unique id prefix, the latest of a project; and the one place where an agent,
//!   provider and model become a ready client ([`SessionManager::reach`]).
//! - Compression and the token estimate ([`auto_compress`]): [`Session::token_use`] (what
//!   `/tokens` shows), [`SessionManager::compress`] (what `/compress` and `qore sessions
//!   compress` run), and a session compressing itself into a linked session before a send
//!   past `QORE_COMPRESS_AT` (default 80%) of the context window.
//!
//! A session on the store `qore` itself uses, reached through a bundled agent:
//!
//! ```no_run
//! # async fn demo() -> Result<(), qore_session::SessionError> {
//! use qore_session::{SessionManager, SessionSetup, TargetSpec, traced_notes};
//! let manager = SessionManager::new(
//!     Some(qore_store::open_configured().await?),
//!     qore_agents::config::Config::load(None),
//!     traced_notes(),
//! );
//! let spec = TargetSpec { agent: Some("ollama-chat".into()), ..TargetSpec::default() };
//! let target = manager.reach(&spec).await?;
//! let session = manager.create(&Default::default(), SessionSetup::new(target)).await?;
//! let cancel = qore_client::CancellationToken::new();
//! let outcome = session
//!     .send(qore_core::Message::user("Hello"), &cancel, |_event| {})
//!     .await;
//! println!("{outcome:?}");
//! # Ok(()) }
//! ```
//!
//! The `session_sqlite` example (`cargo run -p qore-session --example session_sqlite`) is a
//! whole program: a SQLite store, the built-in tools, a session continued by id prefix;
//! `tests/examples.rs` runs it against a loopback server.
#![warn(missing_docs)]

pub mod auto_compress;
pub mod completion;
pub mod compress;
mod error;
pub mod layers;
pub mod manager;
pub mod outcome;
mod project;
pub mod provider_target;
mod roster;
mod run_turn;
pub mod sanitize;
pub mod server_rules;
pub mod session;
mod session_compress;
pub mod skills;
mod state;
pub mod target;
pub mod tokens;
pub mod toolset;
pub mod transcript;
pub mod turn_changes;
pub mod undo;

/// The README (its "Use it from Rust" snippets), compiled as doctests by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

pub use error::SessionError;
pub use layers::Layers;
pub use manager::{Compressing, Opening, SessionManager};
pub use outcome::{status_of, LoopStop, TurnOutcome};
pub use roster::Roster;
pub use session::{Session, SessionSetup, SharedStore};
pub use target::{traced_notes, AgentSettings, EndpointSpec, Notes, Target, TargetSpec};
pub use toolset::{start_mcp, NobodyAsked, ToolSet};
