use qore_core::{
    ContentBlock, History, ImageData, ImageSource, Message, Role, ToolResultPart, ToolSpec,
};
use serde_json::json;

use super::*;
use crate::{protocols, ChatRequest, Protocol, RequestOptions};

fn call(id: &str, input: Value) -> ContentBlock {
    ContentBlock::tool_use(id, "lookup", input)
}

fn result(id: &str, text: &str, is_error: bool) -> ContentBlock {
    ContentBlock::tool_result(id, text, is_error)
}

fn conversation() -> Vec<Message> {
    vec![
        Message::system("be brief \"quoted\""),
        Message::user("find ünïcödé ✓"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "look it up".into(),
                    signature: None,
                },
                call("c1", json!({"q": "a", "n": 1.0})),
                call("c2", json!({"q": "b"})),
            ],
        ),
        Message::new(
            Role::User,
            vec![result("c1", "one", false), result("c2", "no", true)],
        ),
        Message::assistant("done"),
        Message::user("again"),
    ]
}

fn image(data: ImageData) -> ImageSource {
    ImageSource {
        media_type: Some("image/png".into()),
        data,
    }
}

/// Every block kind, the turn shapes some wires merge or move (a system message mid-way,
/// consecutive user and assistant messages, an empty message between them, text before
/// tool results), signed and unsigned reasoning, images inline and as `data:` URLs.
fn every_shape() -> Vec<Message> {
    let png = || image(ImageData::Bytes(vec![0x89, b'P', b'N', b'G', 1, 2, 3]));
    let data_url = || image(ImageData::Url("data:image/png;base64,iVBORw0K".into()));
    vec![
        Message::system("rules"),
        Message::new(
            Role::User,
            vec![ContentBlock::text("look"), ContentBlock::Image(png())],
        ),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "hm".into(),
                    signature: Some("sig-1".into()),
                },
                ContentBlock::RedactedThinking {
                    data: "opaque".into(),
                },
                ContentBlock::text("calling"),
                call("c1", json!({"q": "a"})),
                ContentBlock::ToolUse {
                    id: "c2".into(),
                    name: "other".into(),
                    input: json!("not an object"),
                    raw_input: Some("not an object".into()),
                    signature: Some("sig-2".into()),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::text("also this"),
                result("c1", "one", false),
                ContentBlock::ToolResult {
                    tool_use_id: "c2".into(),
                    content: vec![
                        ToolResultPart::Text { text: "see".into() },
                        ToolResultPart::Image(data_url()),
                    ],
                    is_error: true,
                },
            ],
        ),
        Message::user("and more"),
        Message::new(Role::User, vec![]),
        Message::system("a later rule"),
        Message::user("still the same turn"),
        Message::assistant("part one"),
        Message::assistant("part two"),
        Message::user("next"),
    ]
}

/// The wires with their dialects and marks: every name, DeepSeek's reasoning replay,
/// Anthropic with cache breakpoints.
fn wires() -> Vec<(String, std::sync::Arc<dyn Protocol>)> {
    let mut wires: Vec<(String, std::sync::Arc<dyn Protocol>)> = (protocols::NAMES.iter())
        .map(|name| (name.to_string(), protocols::by_name(name).unwrap()))
        .collect();
    let reasoning = protocols::openai_chat::OpenAiChat {
        replay_reasoning: true,
    };
    wires.push((
        "openai-chat replay_reasoning".into(),
        std::sync::Arc::new(reasoning),
    ));
    let marked = protocols::by_name("anthropic")
        .unwrap()
        .with_cache_marks()
        .unwrap();
    wires.push(("anthropic cache marks".into(), marked));
    wires
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "lookup".into(),
        description: "Look a word up.".into(),
        input_schema: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    }]
}

/// The body the protocol's encoder writes, and the one spliced through `cache` (each as
/// text, or the error's message).
fn encoded(
    protocol: &dyn Protocol,
    history: &History,
    cache: &mut EncodeCache,
) -> (Result<String, String>, Result<String, String>) {
    let (tools, options) = (tools(), RequestOptions::default());
    let request = ChatRequest {
        model: "m",
        history,
        tools: &tools,
        options: &options,
    };
    let text = |body: Vec<u8>| String::from_utf8_lossy(&body).into_owned();
    let whole = (protocol.encode(&request))
        .map(|value| text(serde_json::to_vec(&value).unwrap()))
        .map_err(|e| e.message);
    let spliced = match encode_spliced(protocol, &request, cache) {
        Some(body) => body.map(text).map_err(|e| e.message),
        None => panic!("{}: no cached encoding", protocol.name()),
    };
    (whole, spliced)
}

/// [`encoded`] for `openai-chat`, both bodies as bytes.
fn both(name: &str, history: &History, cache: &mut EncodeCache) -> (Vec<u8>, Vec<u8>) {
    let protocol = protocols::by_name(name).unwrap();
    let (whole, spliced) = encoded(&*protocol, history, cache);
    (whole.unwrap().into_bytes(), spliced.unwrap().into_bytes())
}

/// The histories a cache meets in order, each with how many leading messages the owner may
/// vouch for (it only appended since the step before), from `start`: appends, an edit of an
/// earlier message, a dropped one, a moved one, a call renamed under its unchanged result
/// (what Ollama and Gemini read from another message), a number written another way, a
/// user message appended to a user turn, a result whose call is gone.
fn steps(start: Vec<Message>) -> Vec<(Vec<Message>, Option<usize>)> {
    let mut messages = start;
    let mut steps = vec![(messages.clone(), None)];
    let mut push = |messages: &Vec<Message>, vouch: Option<usize>| {
        steps.push((messages.clone(), vouch));
    };
    let len = messages.len();
    messages.push(Message::assistant("more"));
    push(&messages, Some(len));
    messages.push(Message::user("go on"));
    push(&messages, Some(len + 1));
    messages.push(Message::user("and on"));
    push(&messages, Some(len + 2));
    messages[1] = Message::user("find something else");
    push(&messages, None);
    messages.remove(4);
    push(&messages, None);
    messages.swap(1, 4);
    push(&messages, None);
    for message in &mut messages {
        for block in &mut message.blocks {
            if let ContentBlock::ToolUse { name, input, .. } = block {
                *name = format!("{name}_renamed");
                if input.get("n").is_some() {
                    *input = json!({"q": "a", "n": 1}); // 1.0 and 1 are different bytes
                }
            }
        }
    }
    push(&messages, None);
    messages.retain(|m| {
        !m.blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse { .. }))
    });
    push(&messages, None);
    steps
}

#[test]
fn spliced_bodies_are_the_encoders_bytes_cold_warm_vouched_and_after_edits() {
    for (name, protocol) in wires() {
        for (shape, start) in [
            ("conversation", conversation()),
            ("every shape", every_shape()),
        ] {
            let mut cache = EncodeCache::new();
            for (n, (step, vouch)) in steps(start).into_iter().enumerate() {
                let history = History::from(step);
                if let Some(vouched) = vouch {
                    cache.vouch_unchanged(vouched);
                }
                let (whole, spliced) = encoded(&*protocol, &history, &mut cache);
                assert_eq!(spliced, whole, "{name}, {shape}, step {n}");
                // And once more through the warm cache, then through a cold one.
                let (_, warm) = encoded(&*protocol, &history, &mut cache);
                assert_eq!(warm, whole, "{name}, {shape}, step {n}, warm");
                let (_, cold) = encoded(&*protocol, &history, &mut EncodeCache::new());
                assert_eq!(cold, whole, "{name}, {shape}, step {n}, cold");
            }
        }
    }
}

#[test]
fn a_cache_holds_one_history_and_one_encoder() {
    let mut cache = EncodeCache::new();
    let long = History::from(conversation());
    both("openai-chat", &long, &mut cache);
    assert_eq!(cache.len(), long.len());
    let short = History::from(conversation()[..2].to_vec());
    both("openai-chat", &short, &mut cache);
    assert_eq!(cache.len(), 2, "entries past the history are dropped");
    let held = cache.bytes_held();
    cache.begin("another encoder", 2);
    assert!(cache.is_empty(), "another tag empties the cache");
    assert!(held > 0);
}

#[test]
fn keys_tell_every_field_apart() {
    let base = Message::new(Role::User, vec![result("c1", "one", false)]);
    let variants = [
        Message::new(Role::Assistant, base.blocks.clone()),
        Message::new(Role::User, vec![result("c1", "one", true)]),
        Message::new(Role::User, vec![result("c2", "one", false)]),
        Message::new(Role::User, vec![result("c1", "onE", false)]),
        Message::new(Role::User, vec![ContentBlock::text("one")]),
        Message::new(Role::User, vec![]),
    ];
    let key = message_key(&base);
    assert_eq!(key, message_key(&base.clone()));
    for variant in &variants {
        assert_ne!(key, message_key(variant), "{variant:?}");
    }
    // Lengths are hashed: moving text across a boundary changes the key.
    let split = |a: &str, b: &str| {
        message_key(&Message::new(
            Role::User,
            vec![ContentBlock::text(a), ContentBlock::text(b)],
        ))
    };
    assert_ne!(split("ab", "c"), split("a", "bc"));
}

#[test]
fn a_stored_entry_is_reused_until_its_key_changes() {
    let mut cache = EncodeCache::new();
    cache.begin("t", 1);
    let fills = std::cell::Cell::new(0);
    let get = |cache: &mut EncodeCache, key: u64| {
        let bytes = cache.get_or_fill(0, key, |b| {
            fills.set(fills.get() + 1);
            b.extend_from_slice(format!("{key}").as_bytes());
            Ok::<(), ()>(())
        });
        bytes.unwrap().to_vec()
    };
    assert_eq!(get(&mut cache, 7), b"7");
    assert_eq!(get(&mut cache, 7), b"7");
    assert_eq!(get(&mut cache, 8), b"8");
    assert_eq!(fills.get(), 2);
}

#[test]
fn a_vouch_serves_the_vouched_entries_unhashed_for_one_encode() {
    let text = |body: &[u8]| String::from_utf8_lossy(body).into_owned();
    let mut cache = EncodeCache::new();
    let mut messages = conversation();
    let (first, _) = both("openai-chat", &History::from(messages.clone()), &mut cache);
    // The owner broke its word: message 1 changed after the vouch. What is served shows
    // whether the entry was taken on the vouch (the old bytes) or hashed (the new ones).
    messages[1] = Message::user("find something else");
    messages.push(Message::assistant("more"));
    let changed = History::from(messages);
    // (vouched entries, body holds the old text, body holds the new text)
    let cases = [(2, true, false), (1, false, true), (0, false, true)];
    for (vouched, old, new) in cases {
        both("openai-chat", &History::from(conversation()), &mut cache);
        cache.vouch_unchanged(vouched);
        let (_, spliced) = both("openai-chat", &changed, &mut cache);
        let body = text(&spliced);
        assert_eq!(body.contains("find ünïcödé"), old, "vouched {vouched}");
        assert_eq!(
            body.contains("find something else"),
            new,
            "vouched {vouched}"
        );
        assert!(
            body.contains("more"),
            "vouched {vouched}: the new message is encoded"
        );
        // The vouch lasted one encode: the next one hashes again.
        let (whole, again) = both("openai-chat", &changed, &mut cache);
        assert_eq!(
            text(&again),
            text(&whole),
            "vouched {vouched}: after the vouch"
        );
    }
    assert!(text(&first).contains("find ünïcödé"));
}
