//! Agents as data. An agent is a TOML profile whose `[body]` table IS the request body, 1:1
//! with the provider's API; strings holding Jinja (`{{` or `{%`) are rendered from the
//! conversation and spliced in as JSON. Profiles share structure through `extends`
//! (deep merge) and `{% include %}` partials (sandboxed: bundled, then the user's
//! `partials/`). A broken profile is refused when it is loaded, with its file and line or
//! body key, never mid-conversation.
//!
//! Whether a completion fills in the middle or chats is what a profile's `[body]` reads
//! ([`body_reads`]), never its tags.
//!
//! Modules: [`body`] (the `[body]` engine), [`context`] (what templates see),
//! [`json_commas`] (the trailing-comma stripper), [`partials`] (the include sandbox),
//! [`error`].
//!
//! A profile of three lines over a bundled base, and the request body it writes:
//!
//! ```
//! use std::{path::Path, sync::Arc};
//! use qore_agents::{profile::ProfileFile, render::AgentRenderer, Catalog, Partials};
//! use qore_client::{protocols, ChatRequest, Client, ClientConfig, RequestOptions};
//! use qore_core::{History, Message};
//!
//! let profile = "name = \"terse\"\nextends = \"base-openai-chat\"\nprovider = \"openai\"\n\
//!                [body]\ntemperature = 0.2\n";
//! let file = ProfileFile::parse(Path::new("terse.toml"), profile).unwrap();
//! let catalog = Catalog::with_user_files(vec![file]);
//! let agent = catalog.get("terse").unwrap();
//! let protocol = protocols::by_name("openai-chat").unwrap();
//! let renderer = AgentRenderer::new(agent, protocol.clone(), "gpt-4.1-mini".into(), Partials::default())
//!     .unwrap();
//! let client = Client::new(protocol, ClientConfig::new("https://api.openai.com/v1"))
//!     .unwrap()
//!     .with_renderer(Arc::new(renderer));
//!
//! let history = History::from(vec![Message::user("Hi")]);
//! let options = RequestOptions::default();
//! let request = ChatRequest { model: "gpt-4.1-mini", history: &history, tools: &[], options: &options };
//! let body: serde_json::Value = serde_json::from_slice(&client.encode(&request).unwrap()).unwrap();
//! assert_eq!(body["temperature"], 0.2);
//! assert_eq!(body["messages"][0]["content"], "Hi");
//! ```
//!
//! The `agent_body` example (`cargo run -p qore-agents --example agent_body`) streams an
//! answer through such a profile; `tests/examples.rs` runs it against a loopback server.
#![warn(missing_docs)]

pub mod agent;
pub mod body;
// Internal: the render cache's internals; not part of the API.
#[doc(hidden)]
pub mod body_cached;
// Internal: byte-level body edits used by the renderer; not part of the API.
#[doc(hidden)]
pub mod body_edit;
mod body_env;
pub mod body_reads;
// Internal: the conversation split used by the render cache; not part of the API.
#[doc(hidden)]
pub mod body_split;
mod bundled;
pub mod catalog;
pub mod config;
pub mod context;
pub mod error;
#[doc(hidden)]
pub mod fuzz_targets;
pub mod json_commas;
pub mod native_fragments;
pub mod os_keyring;
pub mod overrides;
pub mod partials;
pub mod pricing;
pub mod profile;
pub mod provider_names;
pub mod providers;
pub mod render;
mod render_cached;
pub mod request_overrides;
pub mod routing;
pub mod shape;
mod streams;
pub mod system_prompt;
mod template_text;
pub mod tool_settings;
pub mod validate;

pub use body::{BodyTemplate, RenderError};
pub use catalog::{Agent, Catalog};
pub use context::TemplateContext;
pub use error::{AgentError, Warning};
pub use partials::Partials;
