//! `openai_messages.jinja`'s message (Chat Completions): an assistant message with its
//! text and tool calls; a user turn's tool results as `tool` messages, then its text (a
//! string for one text block, parts for several or with images).

use qore_core::ContentBlock;

use super::{arguments, content, image_url, result_items, Input, Out};

pub(super) fn write(input: &Input<'_>, out: &mut Out<'_>) -> bool {
    let message = input.message;
    if super::role(message) == "assistant" {
        out.raw(r#"{"role": "assistant", "content": "#)
            .string(&content(message));
        let mut calls = (message.blocks.iter()).filter_map(|b| match b {
            ContentBlock::ToolUse {
                id,
                name,
                input,
                raw_input,
                ..
            } => Some((id, name, arguments(input, raw_input))),
            _ => None,
        });
        if let Some(first) = calls.next() {
            out.raw(r#", "tool_calls": ["#);
            for (id, name, arguments) in std::iter::once(first).chain(calls) {
                out.raw(r#"{"id": "#).string(id);
                out.raw(r#", "type": "function", "function": {"name": "#)
                    .string(name);
                out.raw(r#", "arguments": "#).string(&arguments).raw("}},");
            }
            out.close("]");
        }
        out.raw("},");
        return true;
    }
    let open = "\n{\"role\": \"tool\", \"tool_call_id\": ";
    result_items(out, message, open, r#", "content": "#);
    let texts = || (message.blocks.iter()).filter_map(ContentBlock::as_text);
    let has_images = (message.blocks.iter()).any(|b| matches!(b, ContentBlock::Image(_)));
    if has_images {
        out.raw("\n{\"role\": \"user\", \"content\": [");
        for block in &message.blocks {
            match block {
                ContentBlock::Text { text, .. } => {
                    out.raw(r#"{"type": "text", "text": "#)
                        .string(text)
                        .raw("},");
                }
                ContentBlock::Image(source) => {
                    out.raw(r#"{"type": "image_url", "image_url": {"url": "#);
                    image_url(out, source);
                    out.raw("}},");
                }
                _ => {}
            }
        }
        out.close("]},");
    } else if texts().count() == 1 {
        out.raw("\n{\"role\": \"user\", \"content\": ")
            .string(texts().next().unwrap_or_default())
            .raw("},");
    } else if texts().next().is_some() {
        out.raw("\n{\"role\": \"user\", \"content\": [");
        for text in texts() {
            out.raw(r#"{"type": "text", "text": "#)
                .string(text)
                .raw("},");
        }
        out.close("]},");
    }
    true
}
