//! One module per wire protocol, each with the same file set:
//! `mod.rs` (the [`crate::Protocol`] implementation), `request.rs` (encoding from history),
//! `stream.rs` (decoding), `error.rs` (the provider's error envelope), `models.rs` (listing).
//! A protocol that speaks another's wire for part of its surface delegates to that module
//! instead of copying it (`llamacpp` and `mistral` chat through [`openai_chat`]); what
//! several modules do the same way lives once in `shared.rs`.

use std::sync::Arc;

use crate::Protocol;

pub mod anthropic;
pub mod gemini;
mod json_scan;
pub mod llamacpp;
pub mod mistral;
pub mod ollama;
pub mod openai_chat;
pub mod openai_responses;
mod shared;

#[cfg(test)]
mod test_support;

/// Names of the protocols this build speaks, as accepted by [`by_name`].
pub const NAMES: &[&str] = &[
    openai_chat::NAME,
    openai_responses::NAME,
    anthropic::NAME,
    gemini::NAME,
    ollama::NAME,
    llamacpp::NAME,
    mistral::NAME,
];

/// The protocol called `name` on the command line and in configuration.
pub fn by_name(name: &str) -> Option<Arc<dyn Protocol>> {
    match name {
        openai_chat::NAME | "openai" | "chat-completions" => {
            Some(Arc::new(openai_chat::OpenAiChat::default()))
        }
        ollama::NAME => Some(Arc::new(ollama::Ollama)),
        llamacpp::NAME | "llama.cpp" => Some(Arc::new(llamacpp::LlamaCpp::default())),
        mistral::NAME | "codestral" => Some(Arc::new(mistral::Mistral::default())),
        anthropic::NAME | "anthropic-messages" => Some(Arc::new(anthropic::Anthropic::default())),
        gemini::NAME | "google" => Some(Arc::new(gemini::Gemini)),
        openai_responses::NAME | "responses" => {
            Some(Arc::new(openai_responses::OpenAiResponses::default()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    /// The credential header of each wire: bearer (the trait's default) unless the wire
    /// names its own.
    #[test]
    fn each_wire_sends_its_credential_header() {
        let bearer = ("authorization", "Bearer k");
        let cases = [
            ("openai-chat", bearer),
            ("openai-responses", bearer),
            ("ollama", bearer),
            ("llamacpp", bearer),
            ("mistral", bearer),
            ("anthropic", ("x-api-key", "k")),
            ("gemini", ("x-goog-api-key", "k")),
        ];
        for (name, (header, value)) in cases {
            let protocol = super::by_name(name).unwrap();
            let expected = vec![(header.to_owned(), value.to_owned())];
            assert_eq!(protocol.auth_headers("k"), expected, "{name}");
        }
        assert_eq!(cases.len(), super::NAMES.len());
    }
}
