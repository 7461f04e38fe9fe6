//! qore-serve: `qore serve`, the HTTP front end. Every tool that speaks OpenAI Chat
//! Completions, OpenAI Responses or Anthropic Messages reaches every model qore reaches,
//! with qore's agents, tools and stored sessions, through one base URL and one set of keys.
//!
//! Promises:
//! - each inbound API is one [`dialect`] module with the same file set; it decodes the
//!   vendor's request into an [`Inbound`] (qore-core's messages) and writes replies, streams
//!   and errors in the vendor's own shapes; any dialect reaches any outbound wire;
//! - a request's `model` names an agent or `provider/model`; what the target cannot carry
//!   and would change the answer is a 400 naming it; hints it cannot carry are dropped and
//!   named (`x-qore-dropped` header, a debug line, a metric), never silently;
//! - keys are stored hashed; a refused request (401, 403, 429) never reaches a provider;
//!   usage is recorded per key, model, agent and day;
//! - a client that goes away cancels its upstream request; SIGTERM drains streams in flight;
//! - the store (SQLite or PostgreSQL, through [`qore_store::Store`]) holds everything a
//!   request needs beyond the config: several servers on one store answer as one, and a store
//!   that cannot be reached is a 503 with `Retry-After` in the caller's dialect, never a hang.

pub mod admin;
mod admission;
mod answer;
mod capability;
pub mod config;
mod console_settings;
pub mod dialect;
mod error;
mod events;
mod exchange;
mod extra;
mod fim;
/// The fuzz targets of `fuzz/` (`serve_*`) and `tests/fuzz_seeded.rs`: test support, not API.
#[doc(hidden)]
pub mod fuzz_targets;
pub mod gate;
mod inbound;
pub mod listen;
mod log_settings;
pub mod metrics;
mod named_session;
mod relay;
pub mod request_log;
mod respond;
pub mod route;
mod routes;
mod run;
mod server_tools;
mod state;
mod stored;
pub mod upstream;
mod usage;

pub use error::{ErrorKind, ServeError};
pub use inbound::{Inbound, ReplyMeta};
pub use run::{run, RunError, Server};
pub use server_tools::ToolOptionsFor;
