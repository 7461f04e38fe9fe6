//! One module per wire protocol, each with the same file set:
//! `mod.rs` (the [`crate::Protocol`] implementation), `request.rs` (encoding from history),
//! `stream.rs` (decoding), `error.rs` (the provider's error envelope), `models.rs` (listing).

use std::sync::Arc;

use crate::Protocol;

pub mod openai_chat;
pub mod openai_responses;

/// Names of the protocols this build speaks, as accepted by [`by_name`].
pub const NAMES: &[&str] = &[openai_chat::NAME, openai_responses::NAME];

/// The protocol called `name` on the command line and in configuration.
pub fn by_name(name: &str) -> Option<Arc<dyn Protocol>> {
    match name {
        openai_chat::NAME | "openai" | "chat-completions" => {
            Some(Arc::new(openai_chat::OpenAiChat::default()))
        }
        openai_responses::NAME | "responses" => {
            Some(Arc::new(openai_responses::OpenAiResponses::default()))
        }
        _ => None,
    }
}
