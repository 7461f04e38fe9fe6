//! `anthropic_messages.jinja`'s message (Anthropic Messages): tool results first in a
//! user turn, then the blocks the wire carries (blank text dropped, thinking only with its
//! signature); the last block of the last user message cache-marked when the profile's
//! breakpoints say so (`anthropic_cache.jinja`).

use qore_core::ContentBlock;

use super::{image, result_text, results, Input, Marks, Out};

pub(super) fn write(input: &Input<'_>, marks: &Marks, out: &mut Out<'_>) -> bool {
    let message = input.message;
    let mark = marks.last_user_message && input.last_user;
    let assistant = super::role(message) == "assistant";
    out.raw("\n{\"role\": ")
        .string(super::role(message))
        .raw(r#", "content": ["#);
    if !assistant {
        let count = results(message).count();
        let only_results = (message.blocks.iter()).all(is_result);
        let mut seen = 0;
        for (id, parts, is_error) in results(message) {
            seen += 1;
            out.raw("\n{\"type\": \"tool_result\", \"tool_use_id\": ")
                .string(id);
            let text = result_text(parts);
            if !text.is_empty() {
                out.raw(r#", "content": [{"type": "text", "text": "#)
                    .string(&text)
                    .raw("}]");
            }
            if is_error {
                out.raw(r#", "is_error": true"#);
            }
            if mark && seen == count && only_results {
                cache_mark(out, marks);
            }
            out.raw("},");
        }
    }
    let last = message.blocks.len().saturating_sub(1);
    for (i, block) in message.blocks.iter().enumerate() {
        match block {
            ContentBlock::Text { text, .. } if !text.trim().is_empty() => {
                out.raw(r#"{"type": "text", "text": "#).string(text);
                if mark && i == last {
                    cache_mark(out, marks);
                }
                out.raw("},");
            }
            ContentBlock::Image(source) => {
                out.raw(r#"{"type": "image", "source": "#);
                match image(source) {
                    (true, url, _) => out.raw(r#"{"type": "url", "url": "#).string(&url),
                    (false, data, media_type) => out
                        .raw(r#"{"type": "base64", "media_type": "#)
                        .string(media_type)
                        .raw(r#", "data": "#)
                        .string(&data),
                };
                out.raw("}},");
            }
            ContentBlock::Thinking {
                text,
                signature: Some(signature),
            } if assistant => {
                out.raw(r#"{"type": "thinking", "thinking": "#)
                    .string(text)
                    .raw(r#", "signature": "#)
                    .string(signature)
                    .raw("},");
            }
            ContentBlock::RedactedThinking { data } if assistant => {
                out.raw(r#"{"type": "redacted_thinking", "data": "#)
                    .string(data)
                    .raw("},");
            }
            ContentBlock::ToolUse {
                id, name, input, ..
            } if assistant => {
                out.raw(r#"{"type": "tool_use", "id": "#)
                    .string(id)
                    .raw(r#", "name": "#)
                    .string(name)
                    .raw(r#", "input": "#)
                    .mapping(input)
                    .raw("},");
            }
            _ => {}
        }
    }
    out.close("]},");
    true
}

fn is_result(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::ToolResult { .. })
}

/// `, {% include "anthropic_cache.jinja" %}`.
fn cache_mark(out: &mut Out<'_>, marks: &Marks) {
    out.raw(r#", "cache_control": {"type": "ephemeral""#);
    if let Some(ttl) = &marks.ttl {
        out.raw(r#", "ttl": "#).string(ttl);
    }
    out.raw("}");
}
