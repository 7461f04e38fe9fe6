//! Rendering through a per-message cache gives the bytes of the whole render, for every
//! bundled chat profile, cold, warm, and after messages changed, dropped or moved, the
//! system prompt changed, the tools on offer, or the extra fields.

use qore_agents::providers::Providers;
use qore_agents::render::AgentRenderer;
use qore_agents::{Catalog, Partials};
use qore_client::{protocols, EncodeCache, RequestOptions};
use qore_core::{ContentBlock, History, ImageData, ImageSource, Message, Role, ToolSpec};
use serde_json::json;

const PROFILES: &[(&str, bool)] = &[
    ("openai-chat", true),
    ("claude-chat", true),
    ("claude-marked", true), // cache marks on system, tools and the last user message
    ("gemini-chat", true),
    ("ollama-chat", true),
    ("openai-responses-chat", true),
];

fn renderer(name: &str) -> AgentRenderer {
    let marked = "name = \"claude-marked\"\nextends = \"claude-chat\"\n\
        cache_breakpoints = [\"system\", \"tools\", \"last_user_message\"]\n";
    let marked = qore_agents::profile::ProfileFile::parse(std::path::Path::new("m.toml"), marked);
    let catalog = Catalog::with_user_files(vec![marked.unwrap()]);
    let providers = Providers::load(None);
    let agent = catalog.get(name).unwrap();
    let provider = providers.get(agent.provider.as_deref().unwrap()).unwrap();
    let protocol = protocols::by_name(&provider.protocol).unwrap();
    AgentRenderer::new(agent, protocol, "m".into(), Partials::default()).unwrap()
}

fn turn(c: usize) -> Vec<Message> {
    let call = ContentBlock::tool_use(
        format!("call_{c}"),
        "read_file",
        json!({"path": format!("src/{c}.rs")}),
    );
    let result = ContentBlock::tool_result(
        format!("call_{c}"),
        format!("fn f{c}() {{ \"ünï\\\\\" }}"),
        c.is_multiple_of(3),
    );
    vec![
        Message::user(format!("look at {c}, \"quoted\" ✓")),
        Message::new(Role::Assistant, vec![ContentBlock::text("reading"), call]),
        Message::new(Role::User, vec![result]),
        Message::assistant(format!("done {c}")),
    ]
}

fn steps() -> Vec<Vec<Message>> {
    let mut messages = vec![Message::system("be brief")];
    let mut steps = Vec::new();
    for c in 0..4 {
        messages.extend(turn(c));
        messages.push(Message::user(format!("next {c}")));
        steps.push(messages.clone());
        messages.pop();
    }
    messages[1] = Message::user("edited by a sanitize pass");
    steps.push(messages.clone());
    messages[0] = Message::system("a new system prompt");
    steps.push(messages.clone());
    messages.remove(4);
    steps.push(messages.clone());
    messages.swap(1, 5);
    messages.push(Message::new(
        Role::User,
        vec![
            ContentBlock::text("and this image"),
            ContentBlock::Image(ImageSource {
                media_type: Some("image/png".into()),
                data: ImageData::Bytes(vec![1, 2, 3]),
            }),
        ],
    ));
    steps.push(messages.clone());
    messages.truncate(2);
    steps.push(messages);
    steps
}

#[test]
fn cached_renders_are_the_whole_renders_bytes() {
    let tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }];
    let mut others = tools.clone();
    others[0].description = "Read a text file.".into();
    let plain = RequestOptions::default();
    let mut forbidding = RequestOptions::default();
    forbidding.extra.insert("tool_choice".into(), json!("none"));
    let mut replacing = RequestOptions::default();
    replacing.extra.insert("messages".into(), json!([]));
    for &(name, splits) in PROFILES {
        let renderer = renderer(name);
        assert_eq!(renderer.body().unwrap().splits(), splits, "{name}");
        let mut cache = EncodeCache::new();
        for (n, step) in steps().into_iter().enumerate() {
            let history = History::from(step);
            let tools = if n % 3 == 2 { &others } else { &tools };
            let options = match n % 5 {
                3 => &forbidding,
                4 => &replacing,
                _ => &plain,
            };
            let whole = renderer.chat_body(&history, tools, options).unwrap();
            let cached = (renderer.chat_body_cached(&history, tools, options, &mut cache)).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&cached),
                String::from_utf8_lossy(&whole),
                "{name}, step {n}"
            );
            let entries = history.iter().filter(|m| m.role != Role::System).count();
            assert_eq!(
                cache.len(),
                if splits { entries } else { 0 },
                "{name}, step {n}"
            );
        }
    }
}

/// Partials of one profile's conversation, and whether each renders per message; those
/// that do render the same bytes through the cache as whole.
#[test]
fn only_loops_that_read_nothing_but_their_message_split() {
    let item = r#"{"r": {{ tojson(msg.role) }}, "t": {{ tojson(msg.content) }}},"#;
    let cases: &[(&str, String, bool)] = &[
        ("plain", format!("{{%- for msg in ctx.history %}}\n{item}\n{{%- endfor %}}"), true),
        (
            "inner loops and first/last",
            "{% for msg in ctx.history -%} {\"n\": {{ loop.index0 }}, \"f\": {{ tojson(loop.first) }}, \"l\": {{ tojson(loop.last) }}, \"b\": [{% for b in msg.content_blocks %}{{ tojson(b.type) }},{% endfor %}]}, {%- endfor %}".into(),
            true,
        ),
        ("a set before", format!("{{% set n = 1 %}}{{% for msg in ctx.history %}}{item}{{% endfor %}}"), false),
        ("loop.length", "{% for msg in ctx.history %}{{ loop.length }},{% endfor %}".into(), false),
        ("ctx.history inside", "{% for msg in ctx.history %}{{ length(ctx.history) }},{% endfor %}".into(), false),
        ("two loops", format!("{{% for msg in ctx.history %}}{item}{{% endfor %}}{{% for msg in ctx.history %}}{item}{{% endfor %}}"), false),
        ("a computed include", "{% for msg in ctx.history %}{% include msg.role ~ '.jinja' %}{% endfor %}".into(), false),
    ];
    let dir = std::env::temp_dir().join(format!("qore-render-cached-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for role in ["user", "assistant"] {
        std::fs::write(dir.join(format!("{role}.jinja")), item).unwrap();
    }
    let history = History::from(steps().remove(1));
    let options = RequestOptions::default();
    for (name, partial, splits) in cases {
        std::fs::write(dir.join("conv.jinja"), partial).unwrap();
        let profile = "name = \"p\"\nextends = \"openai-chat\"\n[body]\nmessages = \"[{% include 'conv.jinja' %}]\"\n";
        let file =
            qore_agents::profile::ProfileFile::parse(std::path::Path::new("p.toml"), profile)
                .unwrap();
        let catalog = Catalog::with_user_files(vec![file]);
        let agent = catalog.get("p").unwrap();
        let protocol = protocols::by_name("openai-chat").unwrap();
        let renderer = AgentRenderer::new(
            agent,
            protocol,
            "m".into(),
            Partials::new(Some(dir.clone())),
        )
        .unwrap();
        assert_eq!(renderer.body().unwrap().splits(), *splits, "{name}");
        let whole = renderer.chat_body(&history, &[], &options);
        assert!(whole.is_ok(), "{name}: {whole:?}");
        let mut cache = EncodeCache::new();
        for _ in 0..2 {
            let cached = renderer.chat_body_cached(&history, &[], &options, &mut cache);
            assert_eq!(cached.as_deref().ok(), whole.as_deref().ok(), "{name}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
