//! `responses_input.jinja`'s message (OpenAI Responses `input` items, stateless):
//! reasoning with its encrypted content, assistant text as `message` items, calls as
//! `function_call` items; a user turn's results as `function_call_output` items, then one
//! `message` of its text and images.

use qore_core::ContentBlock;

use super::{arguments, parts, result_items, Input, Out};

pub(super) fn write(input: &Input<'_>, out: &mut Out<'_>) -> bool {
    let message = input.message;
    if super::role(message) == "assistant" {
        for block in &message.blocks {
            match block {
                ContentBlock::Thinking {
                    text,
                    signature: Some(signature),
                } => {
                    out.raw(
                        r#"{"type": "reasoning", "summary": [{"type": "summary_text", "text": "#,
                    )
                    .string(text)
                    .raw(r#"}], "encrypted_content": "#)
                    .string(signature)
                    .raw("},");
                }
                ContentBlock::RedactedThinking { data } => {
                    out.raw(r#"{"type": "reasoning", "summary": [], "encrypted_content": "#)
                        .string(data)
                        .raw("},");
                }
                ContentBlock::Text { text, .. } if !text.is_empty() => {
                    out.raw(r#"{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "#)
                        .string(text)
                        .raw("}]},");
                }
                ContentBlock::ToolUse {
                    id,
                    name,
                    input,
                    raw_input,
                    ..
                } => {
                    out.raw(r#"{"type": "function_call", "call_id": "#)
                        .string(id)
                        .raw(r#", "name": "#)
                        .string(name)
                        .raw(r#", "arguments": "#)
                        .string(&arguments(input, raw_input))
                        .raw("},");
                }
                _ => {}
            }
        }
        return true;
    }
    let open = "\n{\"type\": \"function_call_output\", \"call_id\": ";
    result_items(out, message, open, r#", "output": "#);
    let part = |b: &ContentBlock| matches!(b, ContentBlock::Text { .. } | ContentBlock::Image(_));
    if message.blocks.iter().any(part) {
        out.raw("\n{\"type\": \"message\", \"role\": \"user\", \"content\": [");
        let text = r#"{"type": "input_text", "text": "#;
        parts(
            out,
            message,
            text,
            r#"{"type": "input_image", "image_url": "#,
            "}",
        );
    }
    true
}
