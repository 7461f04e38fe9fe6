//! Code completion and quick refactor for editors, as pure functions: what a request
//! carries ([`context`]) and how a reply becomes the text to insert ([`clean`]).

pub mod clean;
pub mod context;
