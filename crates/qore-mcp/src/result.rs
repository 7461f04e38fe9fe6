//! An MCP `tools/call` result as the [`ToolOutput`] a model reads.
//!
//! Promises ([`to_output`]): text stays text; images become image parts (invalid base64 is a
//! note, not a failure); an embedded text resource is its text under a `[resource URI]`
//! line, an embedded image blob an image part, any other blob, audio or resource link a
//! one-line note; `structuredContent` is kept as [`ToolOutput::structured`] and, when no
//! text came with it, is the text (JSON); `isError` makes an error result; text beyond
//! `limit` characters in all is cut, and a note says how much was shown.

use base64::Engine as _;
use qore_core::{ImageData, ImageSource, ToolOutput, ToolResultPart};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The default cap on a result's text, in characters.
pub const MAX_RESULT_CHARS: usize = 50_000;

fn image(data: &str, mime: &str) -> ToolResultPart {
    match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
        Ok(bytes) => ToolResultPart::Image(ImageSource {
            media_type: Some(mime.to_string()),
            data: ImageData::Bytes(bytes),
        }),
        Err(err) => text(format!(
            "[image ({mime}) left out: its base64 data is invalid: {err}]"
        )),
    }
}

fn text(text: String) -> ToolResultPart {
    ToolResultPart::Text { text }
}

fn part(block: ContentBlock) -> ToolResultPart {
    match block {
        ContentBlock::Text(t) => text(t.text),
        ContentBlock::Image(i) => image(&i.data, &i.mime_type),
        ContentBlock::Audio(a) => text(format!(
            "[audio ({}) left out: not passed to models]",
            a.mime_type
        )),
        ContentBlock::Resource(r) => match r.resource {
            ResourceContents::TextResourceContents {
                uri, text: body, ..
            } => text(format!("[resource {uri}]\n{body}")),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let mime = mime_type.unwrap_or_default();
                if mime.starts_with("image/") {
                    image(&blob, &mime)
                } else {
                    text(format!(
                        "[resource {uri} ({mime}, {} base64 characters) left out: binary]",
                        blob.len()
                    ))
                }
            }
            other => text(format!(
                "[resource of a kind qore does not know left out: {}]",
                kind(&other)
            )),
        },
        ContentBlock::ResourceLink(link) => {
            text(format!("[resource link {} ({})]", link.uri, link.name))
        }
        other => text(format!(
            "[content of a kind qore does not know left out: {}]",
            kind(&other)
        )),
    }
}

/// The JSON `type`/first key of something this version does not know.
fn kind(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map
            .get("type")
            .and_then(|t| t.as_str())
            .map(str::to_string)
            .or_else(|| map.keys().next().cloned())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The model's view of `result` (see the module doc).
pub fn to_output(result: CallToolResult, limit: usize) -> ToolOutput {
    let mut content: Vec<ToolResultPart> = result.content.into_iter().map(part).collect();
    let has_text = content
        .iter()
        .any(|p| matches!(p, ToolResultPart::Text { text } if !text.is_empty()));
    if let (false, Some(structured)) = (has_text, &result.structured_content) {
        content.push(text(structured.to_string()));
    }
    let is_error = result.is_error.unwrap_or(false);
    if content.is_empty() {
        content.push(text(
            if is_error {
                "the tool failed and said nothing"
            } else {
                "(no output)"
            }
            .into(),
        ));
    }
    ToolOutput {
        content: cut(content, limit),
        is_error,
        structured: result.structured_content,
    }
}

/// Text parts cut to `limit` characters in all, with a note when anything was cut.
fn cut(parts: Vec<ToolResultPart>, limit: usize) -> Vec<ToolResultPart> {
    let total: usize = parts
        .iter()
        .map(|p| match p {
            ToolResultPart::Text { text } => text.chars().count(),
            ToolResultPart::Image(_) => 0,
        })
        .sum();
    if total <= limit {
        return parts;
    }
    let mut left = limit;
    let mut out: Vec<ToolResultPart> = parts
        .into_iter()
        .filter_map(|p| match p {
            ToolResultPart::Text { .. } if left == 0 => None,
            ToolResultPart::Text { text } => {
                let kept: String = text.chars().take(left).collect();
                left -= kept.chars().count();
                Some(ToolResultPart::Text { text: kept })
            }
            image => Some(image),
        })
        .collect();
    out.push(text(format!(
        "[result cut: {limit} of {total} characters shown]"
    )));
    out
}

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;
