use qore_core::{ContentBlock, History, Message, Role, ToolSpec};
use serde_json::json;

use super::*;
use crate::{protocols, RequestOptions};

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

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "lookup".into(),
        description: "Look a word up.".into(),
        input_schema: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    }]
}

/// The body the protocol's encoder writes, and the one spliced through `cache`.
fn both(name: &str, history: &History, cache: &mut EncodeCache) -> (Vec<u8>, Vec<u8>) {
    let protocol = protocols::by_name(name).unwrap();
    let (tools, options) = (tools(), RequestOptions::default());
    let request = ChatRequest {
        model: "m",
        history,
        tools: &tools,
        options: &options,
    };
    let whole = serde_json::to_vec(&protocol.encode(&request).unwrap()).unwrap();
    let spliced = match encode_spliced(&*protocol, &request, cache) {
        Some(body) => body.unwrap(),
        None => whole.clone(),
    };
    (whole, spliced)
}

#[test]
fn spliced_bodies_are_the_encoders_bytes_cold_warm_and_after_edits() {
    for name in protocols::NAMES {
        let mut cache = EncodeCache::new();
        let mut messages = conversation();
        // Cold, then warm with one more message, then after a sanitize-like edit of an
        // earlier message, a dropped message, and a message moved to another place.
        let mut steps = vec![messages.clone()];
        messages.push(Message::assistant("more"));
        steps.push(messages.clone());
        messages[1] = Message::user("find something else");
        steps.push(messages.clone());
        messages.remove(4);
        steps.push(messages.clone());
        messages.swap(1, 4);
        steps.push(messages.clone());
        if let ContentBlock::ToolUse { input, .. } = &mut messages[2].blocks[1] {
            *input = json!({"q": "a", "n": 1}); // 1.0 and 1 are different bytes
        }
        steps.push(messages.clone());
        for (n, step) in steps.into_iter().enumerate() {
            let (whole, spliced) = both(name, &History::from(step), &mut cache);
            assert_eq!(
                String::from_utf8_lossy(&spliced),
                String::from_utf8_lossy(&whole),
                "{name}, step {n}"
            );
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
