//! The native writers of the bundled conversation partials write the bytes the templates
//! write. For every bundled chat profile (and Claude with every cache mark and a TTL), a
//! cold render through a cache with the native writers gives the body, and the cache the
//! fragments, of the same render by the templates alone: over the render benchmark's
//! 200-turn workload, and over every prefix of a conversation of each block kind and edge
//! (escapes, blank and repeated texts, images as bytes and URLs, signed and unsigned
//! thinking, raw and non-object call arguments, numbers, made-up Gemini ids, results with
//! several parts, none, an unknown call, an error). The recorded sessions are compared in
//! `templated_recorded.rs`.

#[path = "../benches/support/workload.rs"]
mod workload;

use qore_agents::native_fragments::Dialect;
use qore_agents::profile::ProfileFile;
use qore_agents::render::AgentRenderer;
use qore_agents::{providers::Providers, Catalog, Partials};
use qore_client::{protocols, EncodeCache, RequestOptions};
use qore_core::{ContentBlock, History, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde_json::json;

/// Profile, and the native writer it must get.
const PROFILES: &[(&str, Dialect)] = &[
    ("openai-chat", Dialect::OpenAiChat),
    ("mistral-chat", Dialect::OpenAiChat),
    ("claude-chat", Dialect::Anthropic),
    ("claude-marked", Dialect::Anthropic),
    ("gemini-chat", Dialect::Gemini),
    ("ollama-chat", Dialect::Ollama),
    ("openai-responses-chat", Dialect::Responses),
];

fn catalog(extra: &[&str]) -> Catalog {
    let marked = "name = \"claude-marked\"\nextends = \"claude-chat\"\ncache_ttl = \"1h\"\n\
        cache_breakpoints = [\"system\", \"tools\", \"last_user_message\"]\n";
    let files = std::iter::once(marked).chain(extra.iter().copied());
    let files = files.map(|text| ProfileFile::parse(std::path::Path::new("p.toml"), text));
    Catalog::with_user_files(files.collect::<Result<_, _>>().unwrap())
}

fn renderer(catalog: &Catalog, name: &str, partials: Partials) -> AgentRenderer {
    let agent = catalog.get(name).unwrap();
    let providers = Providers::load(None);
    let provider = providers.get(agent.provider.as_deref().unwrap()).unwrap();
    let protocol = protocols::by_name(&provider.protocol).unwrap();
    AgentRenderer::new(agent, protocol, "m".into(), partials).unwrap()
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::text(t)
}

fn image(media_type: Option<&str>, data: ImageData) -> ContentBlock {
    ContentBlock::Image(ImageSource {
        media_type: media_type.map(Into::into),
        data,
    })
}

fn call(id: &str, name: &str, input: serde_json::Value, raw: Option<&str>) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
        raw_input: raw.map(Into::into),
        signature: None,
    }
}

fn result(id: &str, parts: Vec<ToolResultPart>, is_error: bool) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.into(),
        content: parts,
        is_error,
    }
}

fn part(t: &str) -> ToolResultPart {
    ToolResultPart::Text { text: t.into() }
}

/// A conversation of every block kind and edge (see the module doc); its last message
/// sends an image by URL, which Ollama refuses.
fn edges() -> Vec<Message> {
    let png = || ImageData::Bytes(vec![0x89, b'P', b'N', b'G', 0, 255, 10]);
    let url = || ImageData::Url("https://example.com/a \"b\".png".into());
    let signed_text = ContentBlock::Text {
        text: "signed text".into(),
        signature: Some("sig/text==".into()),
    };
    let mut signed_call = call("gemini_call_0", "grep", json!({"pattern": "a\\b"}), None);
    if let ContentBlock::ToolUse { signature, .. } = &mut signed_call {
        *signature = Some("sig/call".into());
    }
    let numbers = json!({"z": 1.5, "a": -3, "big": 18446744073709551615u64, "one": 1.0,
        "nested": {"é": [null, true, "\u{1}\t\u{7f}\u{2028}"], "B": {}}, "e": 1e300});
    vec![
        Message::system("be brief"),
        Message::user("quotes \" and \\ backslashes, \n newlines, \u{0} nul, 🙂 ✓ ü"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "unsigned thought".into(),
                    signature: None,
                },
                ContentBlock::Thinking {
                    text: "signed thought\n".into(),
                    signature: Some("EqQBCkYIBRgC".into()),
                },
                ContentBlock::RedactedThinking {
                    data: "redacted==".into(),
                },
                text(""),
                text("  \n "),
                signed_text,
                call("call_1", "read_file", numbers, None),
                call(
                    "call_2",
                    "edit_file",
                    json!(["not", "a", "mapping"]),
                    Some("[\"not\""),
                ),
                call("call_3", "run", json!("text"), Some("{\"raw\": 1}")),
                signed_call,
            ],
        ),
        Message::new(
            Role::User,
            vec![
                result(
                    "call_1",
                    vec![part("line one"), part(""), part("line \"three\"")],
                    false,
                ),
                result("call_2", vec![], true),
                result("call_3", vec![part("failed: \\ no")], true),
                result("gemini_call_0", vec![part("found")], false),
                result("call_unknown", vec![part("orphan")], false),
            ],
        ),
        Message::new(Role::Assistant, vec![]),
        Message::new(Role::User, vec![text("first"), text(""), text("third")]),
        Message::new(Role::Assistant, vec![call("call_4", "ls", json!({}), None)]),
        Message::new(
            Role::User,
            vec![
                result(
                    "call_4",
                    vec![
                        part("a\nb"),
                        ToolResultPart::Image(ImageSource {
                            media_type: Some("image/png".into()),
                            data: png(),
                        }),
                    ],
                    false,
                ),
                text("and a picture"),
                image(Some("image/png"), png()),
                image(None, png()),
            ],
        ),
        Message::assistant("  "),
        Message::new(
            Role::User,
            vec![image(Some("image/jpeg"), png()), text("  ")],
        ),
        Message::new(
            Role::Assistant,
            vec![call("call_5", "ls", json!({"p": "."}), None)],
        ),
        Message::new(
            Role::User,
            vec![result("call_5", vec![part("only a result")], false)],
        ),
        Message::new(Role::User, vec![]),
        Message::assistant("last words"),
        Message::new(
            Role::User,
            vec![text("see"), image(Some("image/png"), url())],
        ),
    ]
}

/// The native render and the templates' of `history` through fresh caches: the same
/// outcome, and the same fragments cached.
fn assert_same(native: &AgentRenderer, templates: &AgentRenderer, history: &History, what: &str) {
    let tools = workload::tools();
    let options = RequestOptions::default();
    let (mut cache, mut reference) = (EncodeCache::new(), EncodeCache::new());
    let ours = native.chat_body_cached(history, &tools, &options, &mut cache);
    let theirs = templates.chat_body_cached(history, &tools, &options, &mut reference);
    match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
            "{what}"
        ),
        (ours, theirs) => {
            let message = |r: Result<Vec<u8>, qore_core::ErrorInfo>| r.map_err(|e| e.to_string());
            assert_eq!(message(ours), message(theirs), "{what}");
        }
    }
    assert_eq!(cache.len(), reference.len(), "{what}");
    for i in 0..cache.len() {
        let text =
            |c: &EncodeCache| String::from_utf8_lossy(c.get(i).unwrap_or_default()).into_owned();
        assert_eq!(text(&cache), text(&reference), "{what}, fragment {i}");
    }
}

#[test]
fn native_fragments_are_the_templates_bytes() {
    let catalog = catalog(&[]);
    let workload = workload::history();
    let edges = edges();
    for &(name, dialect) in PROFILES {
        let native = renderer(&catalog, name, Partials::default());
        let templates = renderer(&catalog, name, Partials::default()).without_native_fragments();
        assert_eq!(
            native.body().unwrap().native_dialect(),
            Some(dialect),
            "{name}"
        );
        assert_eq!(templates.body().unwrap().native_dialect(), None, "{name}");
        assert_same(
            &native,
            &templates,
            &workload,
            &format!("{name}, the workload"),
        );
        for end in 2..=edges.len() {
            let history = History::from(edges[..end].to_vec());
            assert_same(
                &native,
                &templates,
                &history,
                &format!("{name}, edges[..{end}]"),
            );
        }
    }
}

/// A copy of a bundled partial under another name is written natively; an edited copy
/// renders through its template (and still gives the bytes it writes).
#[test]
fn only_the_bundled_partials_text_is_written_natively() {
    let bundled = Partials::default().load("openai_messages.jinja").unwrap();
    let edited = bundled.replace("\"role\": \"tool\"", "\"role\":\"tool\"");
    assert_ne!(edited, bundled);
    let dir = std::env::temp_dir().join(format!("qore-native-fragments-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("copy.jinja"), &bundled).unwrap();
    std::fs::write(dir.join("edited.jinja"), &edited).unwrap();
    let profile = |partial: &str| {
        format!(
            "name = \"{partial}\"\nextends = \"openai-chat\"\n[body]\n\
             messages = \"[{{% include '{partial}.jinja' %}}]\"\n"
        )
    };
    let (copy, changed) = (profile("copy"), profile("edited"));
    let catalog = catalog(&[&copy, &changed]);
    let history = History::from(edges()[..5].to_vec());
    for (name, dialect) in [("copy", Some(Dialect::OpenAiChat)), ("edited", None)] {
        let partials = Partials::new(Some(dir.clone()));
        let native = renderer(&catalog, name, partials.clone());
        assert!(native.body().unwrap().splits(), "{name}");
        assert_eq!(native.body().unwrap().native_dialect(), dialect, "{name}");
        let templates = renderer(&catalog, name, partials).without_native_fragments();
        assert_same(&native, &templates, &history, name);
        let whole = native.chat_body(&history, &workload::tools(), &RequestOptions::default());
        let body = String::from_utf8(whole.unwrap()).unwrap();
        assert_eq!(
            body.contains("\"role\":\"tool\""),
            name == "edited",
            "{name}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
