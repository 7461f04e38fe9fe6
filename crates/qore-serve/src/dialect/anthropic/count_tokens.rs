//! `POST /v1/messages/count_tokens`: the same body as `/v1/messages` (`max_tokens` not
//! needed), answered with `{"input_tokens": N}`.
//!
//! Promises: the body is decoded exactly as a Messages request is (the same 400s); N is
//! qore-session's heuristic estimate ([`qore_session::tokens`]) of the conversation, system
//! included, plus the tool definitions: no tokenizer and no upstream request, so it is an
//! estimate of the same kind qore uses for its own context budget, not the provider's count.

use axum::http::HeaderMap;
use qore_session::tokens::{estimate_messages, estimate_tools};
use serde_json::{json, Value};

use super::request;
use crate::{Inbound, ServeError};

/// Decode a `count_tokens` body.
pub fn decode(body: &[u8], headers: &HeaderMap) -> Result<Inbound, ServeError> {
    request::decode_body(body, headers, false)
}

/// The estimated input tokens of `inbound`: its messages and its tools.
pub fn count_tokens(inbound: &Inbound) -> u64 {
    estimate_messages(inbound.history.messages()) + estimate_tools(&inbound.tools)
}

/// The answer body for `tokens`.
pub fn answer(tokens: u64) -> Value {
    json!({ "input_tokens": tokens })
}

/// Decode `body` and answer with its count, or the 400 it deserves.
pub fn respond(body: &[u8], headers: &HeaderMap) -> Result<Value, ServeError> {
    decode(body, headers).map(|inbound| answer(count_tokens(&inbound)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(body: Value) -> u64 {
        let answer = respond(body.to_string().as_bytes(), &HeaderMap::new()).unwrap();
        answer["input_tokens"].as_u64().unwrap()
    }

    #[test]
    fn counts_without_max_tokens_and_grows_with_the_conversation() {
        let short = count(json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}));
        let long = count(json!({"model": "m", "system": "be brief and exact",
            "messages": [{"role": "user", "content": "hi there, how many tokens is this?"}]}));
        let tools = count(json!({"model": "m", "system": "be brief and exact",
            "messages": [{"role": "user", "content": "hi there, how many tokens is this?"}],
            "tools": [{"name": "add", "description": "adds", "input_schema": {"type": "object"}}]}));
        assert!(short > 0);
        assert!(long > short, "{long} > {short}");
        assert!(tools > long, "{tools} > {long}");
    }

    #[test]
    fn a_bad_body_is_the_same_400_as_for_messages() {
        let err = respond(br#"{"model": "m"}"#, &HeaderMap::new()).unwrap_err();
        assert_eq!(err.status, 400);
        assert_eq!(err.param.as_deref(), Some("messages"));
    }
}
