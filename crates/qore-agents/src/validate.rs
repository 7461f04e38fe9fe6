//! Load-time validation: every concrete profile renders against a hostile synthetic
//! conversation and must give a body its protocol accepts ([`crate::shape`]).
//!
//! The conversation has quotes, backslashes, newlines, non-ASCII text, template-looking
//! text, thinking with a signature, redacted thinking, two tool calls (one answered with
//! an error), an inline image and an image URL; with tools on offer when the profile
//! enables them, a completion prefix and suffix and two other open files (`ctx.extra`,
//! [`HOSTILE_FILES`]); what the renderer adds to every
//! request (the model, the tools) is added too. A profile is refused with its file
//! and the body key that broke: a template that does not compile, a render error, text
//! that is not JSON, or JSON the protocol would reject. Abstract profiles are not
//! rendered (their children are).

use qore_client::FimFile;
use qore_core::{
    ContentBlock, History, ImageData, ImageSource, Message, Role, ToolResultPart, ToolSpec,
};
use serde_json::json;

use crate::catalog::{Agent, Catalog};
use crate::error::AgentError;
use crate::partials::Partials;
use crate::providers::Providers;
use crate::render::AgentRenderer;

const NASTY: &str =
    "say \"hi\" \\ back\\slash\n\ttab, ünïcödé ✓ 🙂 </tool_call> {{ not.a.template }} {% raw %}";

/// The synthetic conversation for `protocol`: [`hostile_history`] without what the wire
/// cannot carry at all (Ollama takes no image URLs).
pub fn hostile_history_for(protocol: &str) -> History {
    let history = hostile_history();
    if protocol != "ollama" {
        return history;
    }
    let messages = (history.iter())
        .map(|m| {
            let blocks = (m.blocks.iter())
                .filter(|b| {
                    !matches!(
                        b,
                        ContentBlock::Image(ImageSource {
                            data: ImageData::Url(_),
                            ..
                        })
                    )
                })
                .cloned()
                .collect();
            Message::new(m.role, blocks)
        })
        .collect::<Vec<_>>();
    History::from(messages)
}

/// The synthetic conversation profiles are validated against.
pub fn hostile_history() -> History {
    let call = |id: &str, path: &str| ContentBlock::ToolUse {
        id: id.into(),
        name: "read_file".into(),
        input: json!({"path": path, "note": NASTY}),
        raw_input: None,
        signature: Some("sig-call".into()),
    };
    History::from(vec![
        Message::system(format!("You are careful. {NASTY}")),
        Message::new(
            Role::User,
            vec![
                ContentBlock::text(format!("Look at this: {NASTY}")),
                ContentBlock::Image(ImageSource {
                    media_type: Some("image/png".into()),
                    data: ImageData::Bytes(vec![0x89, b'P', b'N', b'G', 0, 1, 2, 255]),
                }),
                ContentBlock::Image(ImageSource {
                    media_type: Some("image/jpeg".into()),
                    data: ImageData::Url("https://example.com/a\"b.jpg".into()),
                }),
            ],
        ),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: format!("Thinking about {NASTY}"),
                    signature: Some("c2lnbmF0dXJl+/=".into()),
                },
                ContentBlock::RedactedThinking {
                    data: "ZW5jcnlwdGVk".into(),
                },
                ContentBlock::text(format!("I will read two files. {NASTY}")),
                call("call_1", "src/ma\"in.rs"),
                call("call_2", "C:\\temp\\x"),
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: vec![ToolResultPart::Text {
                        text: format!("fn main() {{ println!(\"{{}}\", 1); }} {NASTY}"),
                    }],
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "call_2".into(),
                    content: vec![ToolResultPart::Text {
                        text: "No such file: C:\\temp\\x".into(),
                    }],
                    is_error: true,
                },
            ],
        ),
        Message::assistant(format!("Done. {NASTY}")),
        Message::user("And now? ¿Qué? 日本語"),
    ])
}

/// The other open documents a completion carries while validating (`ctx.extra`).
pub static HOSTILE_FILES: [FimFile<'static>; 2] = [
    FimFile {
        filename: "src/ma\"in.rs",
        text: NASTY,
    },
    FimFile {
        filename: "C:\\temp\\ünï.py",
        text: "def f():\n\treturn \"{{ x }}\"\n",
    },
];

/// The tools offered while validating a profile with `enable_tools`.
pub fn hostile_tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "read_file".into(),
        description: format!("Read a file. {NASTY}"),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string", "description": NASTY}}, "required": ["path"]}),
    }]
}

/// Validate one profile (see the module doc).
pub fn validate_agent(
    agent: &Agent,
    providers: &Providers,
    partials: &Partials,
) -> Result<(), AgentError> {
    if agent.is_abstract {
        return Ok(());
    }
    let file = agent.sources[0].clone();
    let profile_error = |message: String| AgentError::Profile {
        file: file.clone(),
        line: None,
        message,
    };
    let Some(provider_name) = &agent.provider else {
        return Err(profile_error(
            "no provider: set `provider` to a provider instance".into(),
        ));
    };
    let Some(instance) = providers.get(provider_name) else {
        return Err(profile_error(format!("unknown provider {provider_name:?}")));
    };
    let Some(protocol) = qore_client::protocols::by_name(&instance.protocol) else {
        return Err(profile_error(format!(
            "unknown protocol {:?}",
            instance.protocol
        )));
    };
    let model = agent
        .model
        .clone()
        .unwrap_or_else(|| "validation-model".into());
    let renderer = AgentRenderer::new(agent, protocol.clone(), model, partials.clone())?;
    let Some(body) = renderer.body() else {
        return Ok(());
    };
    let history = hostile_history_for(protocol.name());
    let tools = if agent.enable_tools {
        hostile_tools()
    } else {
        Vec::new()
    };
    let mut ctx = renderer.chat_context(&history, &tools);
    ctx.prefix = Some("fn main() {\n    let s = \"é\\\\\";\n    ");
    ctx.suffix = Some("\n}\n");
    ctx.extra = &HOSTILE_FILES;
    let body_error = |key: String, message: String| AgentError::Body {
        file: file.clone(),
        key,
        message,
    };
    let bytes = body
        .render(&ctx)
        .map_err(|err| body_error(err.key, err.message))?;
    let bytes = (renderer.complete(bytes, &ctx.tools, &ctx.cache, &serde_json::Map::new()))
        .map_err(|err| body_error(String::new(), err.message))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|err| body_error(String::new(), format!("the body is not JSON: {err}")))?;
    crate::shape::check(protocol.name(), &value).map_err(|(at, message)| {
        body_error(
            at,
            format!(
                "the {} API would refuse this body: {message}",
                protocol.name()
            ),
        )
    })
}

/// Validate every profile of `catalog`; the errors, by profile.
pub fn validate_catalog(
    catalog: &Catalog,
    providers: &Providers,
    partials: &Partials,
) -> Vec<AgentError> {
    catalog
        .all()
        .filter_map(|agent| validate_agent(agent, providers, partials).err())
        .collect()
}
