//! Cached encoding against every recorded request shape: each chat request in the
//! `rig-cassettes` (see `/work/shared/fixtures/README.md`) of a wire this build speaks is read
//! back into a history and tools (the tool-loop tests' readers, `tool_loop/support.rs`), and
//! `Client::encode_cached` must give the bytes of `Client::encode` for it: through a cold
//! cache, through one warm with the history minus its last message and the owner's vouch
//! for those, and after a history edit (a message dropped from the middle, the first text
//! changed). Requests in shapes the readers do not know (documents) are counted and
//! skipped. Without fixtures the test says so and passes.

#[path = "tool_loop/support.rs"]
mod support;

use std::collections::BTreeMap;

use qore_client::{ChatRequest, Client, EncodeCache, RequestOptions};
use qore_core::{ContentBlock, History, Message, Role, ToolSpec};
use qore_testkit::{fixtures_dir, load_cassettes, Exchange, ReplayServer};
use support::{Item, Wire};

/// The wire a recorded chat request was sent on, by its path; `None` for anything else.
fn wire_of(ex: &Exchange) -> Option<Wire> {
    let path = ex.path.split('?').next().unwrap_or_default();
    if ex.method != "POST" {
        return None;
    }
    if path.ends_with("/chat/completions") {
        Some(Wire::OpenAiChat)
    } else if path.ends_with("/v1/messages") {
        Some(Wire::Anthropic)
    } else if path.ends_with("/responses") {
        Some(Wire::Responses)
    } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
        Some(Wire::Gemini)
    } else if path.ends_with("/api/chat") {
        Some(Wire::Ollama)
    } else {
        None
    }
}

/// The conversation the items say: assistant items of one turn in one message, the results
/// that follow a turn in one user message.
fn history_of(items: Vec<Item>) -> History {
    let mut messages: Vec<Message> = Vec::new();
    let mut push = |role: Role, block: ContentBlock, merge: bool| match messages.last_mut() {
        Some(last) if merge && last.role == role => last.blocks.push(block),
        _ => messages.push(Message::new(role, vec![block])),
    };
    for item in items {
        match item {
            Item::System(text) => push(Role::System, ContentBlock::text(text), false),
            Item::User(text) => push(Role::User, ContentBlock::text(text), false),
            Item::Assistant { text, signature } => push(
                Role::Assistant,
                ContentBlock::Text { text, signature },
                true,
            ),
            Item::Thinking { text, signature } => push(
                Role::Assistant,
                ContentBlock::Thinking { text, signature },
                true,
            ),
            Item::Call {
                id,
                name,
                args,
                signature,
            } => push(
                Role::Assistant,
                ContentBlock::ToolUse {
                    id: id.unwrap_or_else(|| format!("call_{name}")),
                    name,
                    input: args,
                    raw_input: None,
                    signature,
                },
                true,
            ),
            Item::Result { id, text, is_error } => push(
                Role::User,
                ContentBlock::tool_result(id.unwrap_or_default(), text, is_error),
                true,
            ),
        }
    }
    History::from(messages)
}

/// Both encodings of `history` as text (or the error's message).
fn both(
    client: &Client,
    history: &History,
    tools: &[ToolSpec],
    cache: &mut EncodeCache,
) -> (Result<String, String>, Result<String, String>) {
    let options = RequestOptions::default();
    let request = ChatRequest {
        model: "recorded-model",
        history,
        tools,
        options: &options,
    };
    let text = |r: Result<Vec<u8>, qore_core::ErrorInfo>| {
        r.map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| e.message)
    };
    (
        text(client.encode(&request)),
        text(client.encode_cached(&request, cache)),
    )
}

#[tokio::test]
async fn cached_encoding_is_the_encoders_bytes_for_every_recorded_request() {
    let Some(dir) = fixtures_dir() else {
        eprintln!("encode_cached_recorded: no fixtures directory; nothing to check");
        return;
    };
    let cassettes = load_cassettes(&dir).expect("the cassettes load");
    let server = ReplayServer::start(Vec::new()).await.expect("a server");
    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    for cassette in &cassettes {
        for ex in &cassette.exchanges {
            let (Some(wire), Some(body)) = (wire_of(ex), ex.request_json()) else {
                continue;
            };
            // A shape the readers do not know (a document block) has no history to check; their
            // panic on it is expected, so it is kept off the output.
            let hook = std::panic::take_hook();
            std::panic::set_hook(Box::new(|_| {}));
            let read = std::panic::catch_unwind(|| (wire.items(&body), wire.tool_specs(&body)));
            std::panic::set_hook(hook);
            let Ok((items, tools)) = read else {
                *skipped.entry(wire.name()).or_default() += 1;
                continue;
            };
            let history = history_of(items);
            if history.is_empty() {
                continue;
            }
            let client = wire.client(&server);
            let what = format!("{} {:?} {}", cassette.path.display(), wire, ex.path);
            let mut cache = EncodeCache::new();
            let (whole, cold) = both(&client, &history, &tools, &mut cache);
            assert_eq!(cold, whole, "{what}: cold");
            // Warm with all but the last message, vouched for, then the whole history.
            let messages = history.messages().to_vec();
            let mut cache = EncodeCache::new();
            let before = History::from(messages[..messages.len() - 1].to_vec());
            let (whole, primed) = both(&client, &before, &tools, &mut cache);
            assert_eq!(primed, whole, "{what}: without its last message");
            cache.vouch_unchanged(before.len());
            let (whole, warm) = both(&client, &history, &tools, &mut cache);
            assert_eq!(warm, whole, "{what}: warm and vouched");
            // Edited: a message dropped from the middle, the first message's text changed.
            let mut edited = messages;
            if edited.len() > 2 {
                edited.remove(edited.len() / 2);
            }
            edited[0].blocks.insert(0, ContentBlock::text("edited"));
            let edited = History::from(edited);
            let (whole, after) = both(&client, &edited, &tools, &mut cache);
            assert_eq!(after, whole, "{what}: after an edit");
            *checked.entry(wire.name()).or_default() += 1;
        }
    }
    eprintln!(
        "encode_cached_recorded: requests checked per wire {checked:?}, unreadable {skipped:?}"
    );
    if !cassettes.is_empty() {
        assert!(
            checked.len() >= 5,
            "every wire has recorded requests: {checked:?}"
        );
    }
}
