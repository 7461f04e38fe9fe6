//! `ollama_messages.jinja`'s message (Ollama `/api/chat`): content a string, thinking
//! joined, tool calls with their arguments as an object, results as `tool` messages,
//! images as base64 strings. An image URL is declined: the template refuses it.

use qore_core::{ContentBlock, ImageData};

use super::{content, error_marked, image, results, Input, Out};

pub(super) fn write(input: &Input<'_>, out: &mut Out<'_>) -> bool {
    let message = input.message;
    let blocks = &message.blocks;
    if super::role(message) == "assistant" {
        out.raw("\n{\"role\": \"assistant\", \"content\": ")
            .string(&content(message));
        let thinking: Vec<&str> = (blocks.iter())
            .filter_map(|b| match b {
                ContentBlock::Thinking { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if !thinking.is_empty() {
            out.raw(r#", "thinking": "#).string(&thinking.concat());
        }
        let calls = || {
            blocks
                .iter()
                .filter(|b| matches!(b, ContentBlock::ToolUse { .. }))
        };
        if calls().next().is_some() {
            out.raw(r#", "tool_calls": ["#);
            for call in calls() {
                if let ContentBlock::ToolUse {
                    id, name, input, ..
                } = call
                {
                    out.raw(r#"{"id": "#)
                        .string(id)
                        .raw(r#", "function": {"name": "#)
                        .string(name)
                        .raw(r#", "arguments": "#)
                        .mapping(input)
                        .raw("}},");
                }
            }
            out.close("]");
        }
        out.raw("},");
        return true;
    }
    let images = || {
        blocks.iter().filter_map(|b| match b {
            ContentBlock::Image(source) => Some(source),
            _ => None,
        })
    };
    if images().any(|source| matches!(source.data, ImageData::Url(_))) {
        return false;
    }
    for (id, parts, is_error) in results(message) {
        let name = input.names.get(id).copied();
        out.raw("\n{\"role\": \"tool\", \"tool_call_id\": ")
            .string(id)
            .raw(r#", "tool_name": "#)
            .string(name.unwrap_or(""))
            .raw(r#", "content": "#);
        error_marked(out, parts, is_error);
        out.raw("},");
    }
    let texts = blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::Text { .. }));
    if texts || images().next().is_some() {
        out.raw("\n{\"role\": \"user\", \"content\": ")
            .string(&content(message));
        if images().next().is_some() {
            out.raw(r#", "images": ["#);
            for source in images() {
                out.string(&image(source).1).raw(",");
            }
            out.close("]");
        }
        out.raw("},");
    }
    true
}
