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

pub mod body;
pub mod body_cached;
pub mod body_edit;
mod body_env;
pub mod body_reads;
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
pub mod validate;

pub use body::{BodyTemplate, RenderError};
pub use catalog::{Agent, Catalog};
pub use context::TemplateContext;
pub use error::{AgentError, Warning};
pub use partials::Partials;
