use std::path::Path;

use qore_client::protocols;
use qore_core::{History, Message};
use serde_json::json;

use crate::profile::ProfileFile;
use crate::Catalog;

use super::*;

/// The body `agent` (bundled, or the extra profile `mine`) sends after `overrides`.
fn body_after(agent: &str, overrides: RequestOverrides) -> Result<Value, String> {
    let mine = ProfileFile::parse(
        Path::new("mine.toml"),
        "name = \"mine\"\nextends = \"openai-chat\"\n[body]\nmax_completion_tokens = 100\n",
    )
    .map_err(|err| err.to_string())?;
    let templated = ProfileFile::parse(
        Path::new("templated.toml"),
        "name = \"templated\"\nextends = \"ollama-chat\"\n[body]\noptions = \"{{ tojson(ctx.model) }}\"\n",
    )
    .map_err(|err| err.to_string())?;
    let catalog = Catalog::with_user_files(vec![mine, templated]);
    let agent = catalog.get(agent).ok_or("no such agent")?;
    let protocol = match agent.provider.as_deref() {
        Some("anthropic") => "anthropic",
        Some("gemini") => "gemini",
        Some("ollama") => "ollama",
        Some("openai-responses") => "openai-responses",
        _ => "openai-chat",
    };
    let protocol = protocols::by_name(protocol).ok_or("no protocol")?;
    let renderer = AgentRenderer::new(agent, protocol, "m".into(), Partials::default())
        .map_err(|err| err.to_string())?;
    let applied = apply(&renderer, &overrides, &Partials::default()).map_err(|e| e.message)?;
    let renderer = applied.as_ref().unwrap_or(&renderer);
    let history = History::from(vec![Message::user("hi")]);
    let body =
        (renderer.chat_body(&history, &[], &RequestOptions::default())).map_err(|e| e.message)?;
    let mut value: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
    value["(streams)"] = renderer.streams().into();
    Ok(value)
}

#[test]
fn run_flags_land_under_the_wires_own_keys() {
    let max = |n| RequestOverrides {
        max_tokens: Some(n),
        ..RequestOverrides::default()
    };
    let cases: &[(&str, RequestOverrides, &str, Value)] = &[
        ("openai-chat", max(7), "/max_tokens", json!(7)),
        ("mine", max(7), "/max_completion_tokens", json!(7)),
        ("claude-chat", max(7), "/max_tokens", json!(7)),
        (
            "openai-responses-chat",
            max(7),
            "/max_output_tokens",
            json!(7),
        ),
        (
            "gemini-chat",
            max(7),
            "/generationConfig/maxOutputTokens",
            json!(7),
        ),
        ("ollama-chat", max(7), "/options/num_predict", json!(7)),
        (
            "ollama-chat",
            RequestOverrides {
                temperature: Some(0.25),
                ..RequestOverrides::default()
            },
            "/options/temperature",
            json!(0.25),
        ),
        (
            "gemini-chat",
            RequestOverrides {
                temperature: Some(0.5),
                ..RequestOverrides::default()
            },
            "/generationConfig/temperature",
            json!(0.5),
        ),
        (
            "openai-chat",
            RequestOverrides {
                stream: Some(false),
                ..RequestOverrides::default()
            },
            "/stream",
            json!(false),
        ),
    ];
    for (agent, overrides, pointer, expected) in cases {
        let body = body_after(agent, *overrides).unwrap_or_else(|e| panic!("{agent}: {e}"));
        assert_eq!(body.pointer(pointer), Some(expected), "{agent}: {body}");
    }
    // What else the body had stays; what only streaming allows goes.
    let gemini = body_after("gemini-chat", max(7)).unwrap();
    assert!(gemini["contents"].is_array(), "{gemini}");
    let warm = RequestOverrides {
        temperature: Some(0.5),
        ..RequestOverrides::default()
    };
    let gemini = body_after("gemini-chat", warm).unwrap();
    assert_eq!(
        gemini["generationConfig"]["maxOutputTokens"], 8192,
        "{gemini}"
    );
    let quiet = body_after(
        "openai-chat",
        RequestOverrides {
            stream: Some(false),
            ..RequestOverrides::default()
        },
    )
    .unwrap();
    assert_eq!(quiet.get("stream_options"), None, "{quiet}");
    assert_eq!(quiet["(streams)"], false);
    // Only the key the body already had.
    let mine = body_after("mine", max(9)).unwrap();
    assert_eq!(mine.get("max_tokens"), None, "{mine}");
}

#[test]
fn flags_that_cannot_be_written_are_refused() {
    let no_stream = RequestOverrides {
        stream: Some(false),
        ..RequestOverrides::default()
    };
    let refused = body_after("gemini-chat", no_stream).unwrap_err();
    assert!(refused.contains("endpoint"), "{refused}");
    let max = RequestOverrides {
        max_tokens: Some(5),
        ..RequestOverrides::default()
    };
    let refused = body_after("templated", max).unwrap_err();
    assert!(refused.contains("`options`"), "{refused}");
    // No flags: the profile's body, untouched.
    let plain = body_after("gemini-chat", RequestOverrides::default()).unwrap();
    assert_eq!(plain["generationConfig"]["maxOutputTokens"], 8192);
}
