//! qore-testkit: dev-only test support for qore's integration tests and benchmarks.
//!
//! Contract:
//! - [`cassette`]: recorded provider traffic (`<fixtures>/rig-cassettes/<provider>/<scenario>/
//!   <case>.yaml`, one exchange per YAML document) loaded as plain data ([`Cassette`],
//!   [`Exchange`]) with errors that name the file ([`CassetteError`]); [`fixtures_dir`] finds
//!   the fixtures (env `QORE_FIXTURES`, else `../shared/fixtures` beside the workspace) and
//!   panics when they are missing under `CI`.
//! - [`server`]: [`ReplayServer`], a real HTTP/1.1 server on `127.0.0.1:0` that replays
//!   [`Reply`]s in order (or one reply forever), cutting each body into chunks per [`Slicing`]
//!   so that clients see provider bytes split at awkward places; it records what clients sent
//!   ([`RecordedRequest`]) and how many clients hung up mid-response.
//! - [`slicing`]: the deterministic slicing rules ([`Slicing`]).
//! - [`proxy`]: [`RecordingProxy`], a loopback proxy that records each request and forwards
//!   it to a real server on this machine (tests against a real local model).
//! - [`fim_model`]: the local fill-in-the-middle server (`scripts/fim-model.sh`) behind such
//!   a proxy.
//!
//! - [`chat`]: hand-made Chat Completions answers (text, a tool call) for loopback tests.
//! - [`bench`]: the run settings and statistics the benches share.
//! - [`fuzz_seeds`]: seed inputs for the fuzz targets, by target name.
//! - [`lsp`]: [`lsp::LspClient`], an editor's side of LSP for driving `qore lsp`.
//!
//! Nothing here is meant for production code: depend on it as a dev-dependency only.

pub mod bench;
pub mod cassette;
pub mod chat;
pub mod console_env;
pub mod fim_model;
pub mod fuzz_seeds;
pub mod lsp;
pub mod mcp_env;
pub mod postgres;
pub mod proxy;
mod reply;
pub mod server;
pub mod slicing;
mod wire;

pub use cassette::{
    fixtures_dir, load_cassette_file, load_cassettes, parse_exchanges, Cassette, CassetteError,
    Exchange,
};
pub use proxy::RecordingProxy;
pub use server::{reply_from_exchange, HangUp, RecordedRequest, ReplayServer, Reply};
pub use slicing::{sse_frame_ends, Slicing, XorShift64};
