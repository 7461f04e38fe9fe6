//! `openai_messages.jinja`'s message (Chat Completions): an assistant message with its
//! text and tool calls; a user turn's tool results as `tool` messages, then its text (a
//! string for one text block, parts for several or with images).

use qore_core::ContentBlock;

use super::{arguments, content, parts, result_items, Input, Out};

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
    let mut texts = (message.blocks.iter()).filter_map(ContentBlock::as_text);
    let has_images = (message.blocks.iter()).any(|b| matches!(b, ContentBlock::Image(_)));
    match (has_images, texts.next(), texts.next()) {
        (false, None, _) => {}
        (false, Some(one), None) => {
            out.raw("\n{\"role\": \"user\", \"content\": ")
                .string(one)
                .raw("},");
        }
        // Images, or several texts: a list of parts (the template's two branches write
        // the same when there is no image).
        _ => {
            out.raw("\n{\"role\": \"user\", \"content\": [");
            let text = r#"{"type": "text", "text": "#;
            parts(
                out,
                message,
                text,
                r#"{"type": "image_url", "image_url": {"url": "#,
                "}}",
            );
        }
    }
    true
}
