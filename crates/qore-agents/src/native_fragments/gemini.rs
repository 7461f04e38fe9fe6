//! `gemini_contents.jinja`'s message (Gemini contents): a `user` or `model` turn whose
//! parts keep their signatures; tool results as `functionResponse` parts named after their
//! call; call ids sent back unless qore made them up (`gemini_call_`).

use qore_core::ContentBlock;

use super::{image, result_text, Input, Out};

/// The prefix of the call ids qore makes up for Gemini 2.x (which sends none).
const MADE_UP: &str = "gemini_call_";

pub(super) fn write(input: &Input<'_>, out: &mut Out<'_>) -> bool {
    let message = input.message;
    let role = match super::role(message) {
        "assistant" => "model",
        _ => "user",
    };
    out.raw("\n{\"role\": \"").raw(role).raw(r#"", "parts": ["#);
    for block in &message.blocks {
        match block {
            ContentBlock::Text { text, signature } => {
                out.raw(r#"{"text": "#).string(text);
                signed(out, signature.as_deref());
                out.raw("},");
            }
            ContentBlock::Thinking {
                text,
                signature: Some(signature),
            } => {
                out.raw(r#"{"text": "#)
                    .string(text)
                    .raw(r#", "thought": true, "thoughtSignature": "#)
                    .string(signature)
                    .raw("},");
            }
            ContentBlock::ToolUse {
                id,
                name,
                input,
                signature,
                ..
            } => {
                out.raw(r#"{"functionCall": {"name": "#)
                    .string(name)
                    .raw(r#", "args": "#)
                    .mapping(input);
                if !id.starts_with(MADE_UP) {
                    out.raw(r#", "id": "#).string(id);
                }
                out.raw("}");
                signed(out, signature.as_deref());
                out.raw("},");
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                out.raw(r#"{"functionResponse": {"#);
                if !tool_use_id.starts_with(MADE_UP) {
                    out.raw(r#""id": "#).string(tool_use_id).raw(", ");
                }
                let name = input.names.get(tool_use_id.as_str()).copied();
                out.raw(r#""name": "#)
                    .string(name.unwrap_or(""))
                    .raw(if *is_error {
                        r#", "response": {"error": "#
                    } else {
                        r#", "response": {"result": "#
                    })
                    .string(&result_text(content))
                    .raw("}}},");
            }
            ContentBlock::Image(source) => {
                match image(source) {
                    (true, url, media_type) => out
                        .raw(r#"{"fileData": {"mimeType": "#)
                        .string(media_type)
                        .raw(r#", "fileUri": "#)
                        .string(&url),
                    (false, data, media_type) => out
                        .raw(r#"{"inlineData": {"mimeType": "#)
                        .string(media_type)
                        .raw(r#", "data": "#)
                        .string(&data),
                };
                out.raw("}},");
            }
            _ => {}
        }
    }
    out.close("]},");
    true
}

/// `, "thoughtSignature": …` when the part came with one.
fn signed(out: &mut Out<'_>, signature: Option<&str>) {
    if let Some(signature) = signature {
        out.raw(r#", "thoughtSignature": "#).string(signature);
    }
}
