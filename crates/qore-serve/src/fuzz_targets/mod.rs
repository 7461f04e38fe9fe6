//! Fuzz targets: one function per target, `&[u8]` in, a panic on any broken promise. The
//! libFuzzer binaries under the repository's `fuzz/` (`serve_*`) and the seeded proptest
//! pass in `tests/fuzz_seeded.rs` call these same functions, so a target is written once.
//!
//! Promises (each checked on every input, beyond "no panic"):
//! - [`decode_chat`], [`decode_responses`], [`decode_messages`]: the body through the
//!   dialect's [`Dialect::decode`] as the server calls it; decoding is deterministic (twice,
//!   the same request or the same error); a refused body is a 400 `InvalidRequest` with a
//!   message, whose envelope the dialect writes; a decoded request has each dropped hint
//!   once, its tokens estimated as admission does, and goes through every outbound wire as
//!   `upstream` sends it (the wire's fields for tool choice, answer format and stop, and
//!   `upstream::conversation`, each Ok or a 400; the codec's encoder; bytes); the body
//!   written for the dialect's own wire decodes again (qore's client is a caller qore
//!   serve reads);
//! - [`completions`]: the `/v1/completions` body, with the same promises, each wire's
//!   fill-in-the-middle encoder where it has one;
//! - [`route`] (`route.rs`): a `model` string through the [`crate::route::Router`] on a
//!   small config of its own (`route_seeds` names what it holds).
//!
//! `#[doc(hidden)]`: test support, not part of the crate's API.

mod route;

use std::sync::OnceLock;

use axum::http::{HeaderMap, HeaderValue};
use qore_client::{ChatRequest, Client, ClientConfig, FimRequest};
use qore_session::Target;

use crate::dialect::anthropic::AnthropicMessages;
use crate::dialect::completions::{self, FimInbound};
use crate::dialect::openai_chat::OpenAiChat;
use crate::dialect::openai_responses::OpenAiResponses;
use crate::dialect::Dialect;
use crate::{upstream, ErrorKind, Inbound, ServeError};

pub use route::{route, route_seeds};

/// The Chat Completions decoder target.
pub fn decode_chat(data: &[u8]) {
    decode(&OpenAiChat, data);
}

/// The Responses decoder target.
pub fn decode_responses(data: &[u8]) {
    decode(&OpenAiResponses, data);
}

/// The Anthropic Messages decoder target.
pub fn decode_messages(data: &[u8]) {
    decode(&AnthropicMessages, data);
}

/// The headers every decoder target is given (Claude Code's, for the Messages dialect).
fn headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    let pairs = [
        ("anthropic-version", "2023-06-01"),
        (
            "anthropic-beta",
            "prompt-caching-2024-07-31,interleaved-thinking-2025-05-14",
        ),
        ("content-type", "application/json"),
    ];
    for (name, value) in pairs {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers
}

fn decode(dialect: &dyn Dialect, data: &[u8]) {
    let headers = headers();
    let first = dialect.decode(data, &headers);
    let again = dialect.decode(data, &headers);
    assert_eq!(
        first,
        again,
        "{}: decoding is deterministic",
        dialect.name()
    );
    let mut inbound = match first {
        Ok(inbound) => inbound,
        Err(error) => {
            refused(&error, dialect.name());
            let body = dialect.error_body(&error);
            assert!(body.is_object(), "{}: an error envelope", dialect.name());
            return;
        }
    };
    inbound.wire = dialect.wire();
    once_each(&inbound.dropped, dialect.name());
    let _ = qore_session::tokens::estimate_messages(inbound.history.messages())
        + qore_session::tokens::estimate_tools(&inbound.tools);
    for target in targets() {
        let Some(body) = encode(target, &inbound) else {
            continue;
        };
        // What qore's own client writes for this wire, qore serve reads back.
        if target.client.protocol().name() == dialect.wire() {
            if let Err(error) = dialect.decode(&body, &headers) {
                let text = String::from_utf8_lossy(&body);
                panic!(
                    "{}: our client's body refused: {error:?}\n{text}",
                    dialect.name()
                );
            }
        }
    }
}

/// A decoder's refusal: the caller's fault, said in words.
fn refused(error: &ServeError, what: &str) {
    assert_eq!(error.kind, ErrorKind::InvalidRequest, "{what}: {error:?}");
    assert_eq!(error.status, 400, "{what}: {error:?}");
    assert!(!error.message.is_empty(), "{what}: {error:?}");
}

fn once_each(dropped: &[String], what: &str) {
    for (at, hint) in dropped.iter().enumerate() {
        assert!(
            !dropped[..at].contains(hint),
            "{what}: {hint} dropped twice"
        );
    }
}

/// A target on every outbound wire (nothing listens there: nothing is sent).
fn targets() -> &'static [Target] {
    static TARGETS: OnceLock<Vec<Target>> = OnceLock::new();
    TARGETS.get_or_init(|| {
        (qore_client::protocols::NAMES.iter())
            .filter_map(|wire| {
                let protocol = qore_client::protocols::by_name(wire)?;
                let client = Client::new(protocol, ClientConfig::new("http://127.0.0.1:9/v1"));
                Some(Target::new(client.ok()?, "fuzz-model"))
            })
            .collect()
    })
}

/// `inbound` laid into `target`'s wire as `upstream` lays it, then encoded: the body, when
/// the wire can carry the request.
fn encode(target: &Target, inbound: &Inbound) -> Option<Vec<u8>> {
    let options = match upstream::options_for(target, inbound) {
        Ok(options) => options,
        Err(error) => {
            refused(&error, target.client.protocol().name());
            return None;
        }
    };
    let view = match upstream::conversation(target, inbound) {
        Ok(view) => view,
        Err(error) => {
            refused(&error, target.client.protocol().name());
            return None;
        }
    };
    let protocol = target.client.protocol();
    let request = ChatRequest {
        model: &target.model,
        history: &view,
        tools: &inbound.tools,
        options: &options,
    };
    let body = protocol.encode(&request).ok()?;
    let bytes = qore_client::body_bytes(&body);
    assert!(bytes.is_ok(), "{}: {bytes:?}", protocol.name());
    bytes.ok()
}

/// The `/v1/completions` (fill-in-the-middle) body target.
pub fn completions(data: &[u8]) {
    let first = completions::decode(data);
    let again = completions::decode(data);
    assert_eq!(first, again, "completions: decoding is deterministic");
    let fim: FimInbound = match first {
        Ok(fim) => fim,
        Err(error) => {
            refused(&error, completions::NAME);
            assert!(completions::error_body(&error).is_object());
            return;
        }
    };
    once_each(&fim.dropped, completions::NAME);
    for target in targets() {
        let protocol = target.client.protocol();
        let mut options = target.options.clone();
        options.max_tokens = fim.max_tokens;
        options.temperature = fim.temperature;
        if !fim.stop.is_empty() {
            match protocol.stop_fields(&fim.stop) {
                Some(fields) => options.merge_extra(fields),
                None => continue,
            }
        }
        if protocol.fim_path(&target.model, options.stream).is_none() {
            continue;
        }
        let request = FimRequest {
            model: &target.model,
            prefix: &fim.prompt,
            suffix: &fim.suffix,
            extra: &[],
            options: &options,
        };
        if let Ok(body) = protocol.encode_fim(&request) {
            let bytes = qore_client::body_bytes(&body);
            assert!(bytes.is_ok(), "{}: {bytes:?}", protocol.name());
        }
    }
}
