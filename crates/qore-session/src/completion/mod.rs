//! Code completion and quick refactor for editors: what is sent to the model around the
//! cursor ([`context`]) and what the editor inserts from the model's reply ([`clean`]).
//! Pure functions: no LSP, no HTTP (issue 14's first slice).

pub mod clean;
pub mod context;
pub mod refactor;
pub mod request;
