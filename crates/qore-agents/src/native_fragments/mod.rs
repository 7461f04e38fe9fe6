//! Native writers of the bundled conversation partials' per-message fragments: for a body
//! that splits ([`crate::body_split`]) on one of the bundled partials, each message's
//! fragment is written straight into bytes instead of converting the message to a
//! minijinja value and running the loop's body. One file per wire dialect.
//!
//! Promises:
//! - a writer is chosen only when the split's per-message template is byte for byte the
//!   bundled partial's (cut the same way, inja spellings read) and every partial it
//!   includes loads to its bundled text: an edited copy renders through minijinja;
//! - a writer's bytes are those the template writes for the same message and context,
//!   after the trailing-comma stripper (so the cache holds the same bytes either way, and
//!   they need no JSON check); strings are escaped by `serde_json`, as `tojson` does;
//! - what a writer does not write it declines (`false`), and the template renders that
//!   message: Ollama's image URLs, which the template refuses with its own error.

mod anthropic;
mod gemini;
mod ollama;
mod openai;
mod responses;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use minijinja::Value as J;
use qore_core::{ContentBlock, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde_json::Value;

use crate::partials::{Partials, BUNDLED};
use crate::template_text::{cut, from_inja, includes};

/// A wire dialect with a native writer, by the bundled partial it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// OpenAI Chat Completions `messages` (`openai_messages.jinja`).
    OpenAiChat,
    /// Anthropic Messages `messages` (`anthropic_messages.jinja`).
    Anthropic,
    /// Gemini `contents` (`gemini_contents.jinja`).
    Gemini,
    /// Ollama `messages` (`ollama_messages.jinja`).
    Ollama,
    /// OpenAI Responses `input` (`responses_input.jinja`).
    Responses,
}

const PARTIALS: &[(Dialect, &str)] = &[
    (Dialect::OpenAiChat, "openai_messages.jinja"),
    (Dialect::Anthropic, "anthropic_messages.jinja"),
    (Dialect::Gemini, "gemini_contents.jinja"),
    (Dialect::Ollama, "ollama_messages.jinja"),
    (Dialect::Responses, "responses_input.jinja"),
];

/// One message as a writer reads it.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The message to write.
    pub message: &'a Message,
    /// The tool name of each call id of the history.
    pub names: &'a HashMap<&'a str, &'a str>,
    /// Whether it is the history's last user message.
    pub last_user: bool,
}

/// What a writer reads of the context: `ctx.cache` (Anthropic's cache mark).
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// `"last_user_message"` is among `ctx.cache.breakpoints`.
    pub last_user_message: bool,
    /// `ctx.cache.ttl`, when it is set.
    pub ttl: Option<String>,
}

impl Marks {
    /// The marks of the template context `ctx`.
    pub fn of(ctx: &J) -> Marks {
        let cache = ctx.get_attr("cache").unwrap_or_default();
        let breakpoints = cache.get_attr("breakpoints").ok();
        let last_user_message = (breakpoints.and_then(|b| b.try_iter().ok()))
            .is_some_and(|mut b| b.any(|p| p.as_str() == Some("last_user_message")));
        let ttl = cache.get_attr("ttl").ok();
        Marks {
            last_user_message,
            ttl: ttl.and_then(|t| t.as_str().map(str::to_owned)),
        }
    }
}

/// The dialect whose bundled partial's per-message template is `item`, with every partial
/// `item` includes loading through `partials` to its bundled text.
pub fn dialect_of(item: &str, partials: &Partials) -> Option<Dialect> {
    static ITEMS: OnceLock<Vec<(Dialect, String)>> = OnceLock::new();
    let items = ITEMS.get_or_init(|| {
        (PARTIALS.iter())
            .filter_map(|&(dialect, name)| {
                let (_, text) = BUNDLED.iter().find(|(n, _)| *n == name)?;
                Some((dialect, cut(&from_inja(text))?.item))
            })
            .collect()
    });
    let (dialect, _) = items.iter().find(|(_, bundled)| bundled == item)?;
    let bundled = |name: &str| BUNDLED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
    (includes(item).iter())
        .all(|name| bundled(name).is_some_and(|t| partials.load(name).is_ok_and(|u| u == t)))
        .then_some(*dialect)
}

/// Write `input`'s fragment in `dialect` to `out`; `false` when the writer declines (see
/// the module doc; `out` is then to be cleared).
pub fn write(dialect: Dialect, input: &Input<'_>, marks: &Marks, out: &mut Vec<u8>) -> bool {
    let mut out = Out {
        bytes: out,
        failed: false,
    };
    let written = match dialect {
        Dialect::OpenAiChat => openai::write(input, &mut out),
        Dialect::Anthropic => anthropic::write(input, marks, &mut out),
        Dialect::Gemini => gemini::write(input, &mut out),
        Dialect::Ollama => ollama::write(input, &mut out),
        Dialect::Responses => responses::write(input, &mut out),
    };
    written && !out.failed
}

/// Bytes being written; a serializer failure is remembered (then the writer declines).
struct Out<'o> {
    bytes: &'o mut Vec<u8>,
    failed: bool,
}

impl Out<'_> {
    /// Literal text.
    fn raw(&mut self, text: &str) -> &mut Self {
        self.bytes.extend_from_slice(text.as_bytes());
        self
    }

    /// `tojson(text)`.
    fn string(&mut self, text: &str) -> &mut Self {
        self.failed |= serde_json::to_writer(&mut *self.bytes, text).is_err();
        self
    }

    /// `tojson(value if value is mapping else {})`.
    fn mapping(&mut self, value: &Value) -> &mut Self {
        match value {
            Value::Object(_) => {
                self.failed |= serde_json::to_writer(&mut *self.bytes, value).is_err()
            }
            _ => self.bytes.extend_from_slice(b"{}"),
        }
        self
    }

    /// Close a list whose elements each wrote a comma after them: the stripper drops the
    /// last one.
    fn close(&mut self, text: &str) -> &mut Self {
        if self.bytes.last() == Some(&b',') {
            self.bytes.pop();
        }
        self.raw(text)
    }
}

/// `msg.role`.
fn role(message: &Message) -> &'static str {
    match message.role {
        Role::Assistant => "assistant",
        _ => "user",
    }
}

/// `msg.content`: the text blocks concatenated.
fn content(message: &Message) -> Cow<'_, str> {
    let mut texts = message.blocks.iter().filter_map(ContentBlock::as_text);
    match (texts.next(), texts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(one), None) => Cow::Borrowed(one),
        _ => Cow::Owned(message.text()),
    }
}

/// A tool result's `content`: its text parts joined by newlines.
fn result_text(parts: &[ToolResultPart]) -> Cow<'_, str> {
    let mut texts = parts.iter().filter_map(|p| match p {
        ToolResultPart::Text { text } => Some(text.as_str()),
        ToolResultPart::Image(_) => None,
    });
    match (texts.next(), texts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(one), None) => Cow::Borrowed(one),
        (Some(a), Some(b)) => {
            let mut joined = format!("{a}\n{b}");
            for text in texts {
                joined.push('\n');
                joined.push_str(text);
            }
            Cow::Owned(joined)
        }
    }
}

/// The tool results of `message`: (call id, parts, whether it is an error).
fn results(message: &Message) -> impl Iterator<Item = (&str, &[ToolResultPart], bool)> {
    message.blocks.iter().filter_map(|b| match b {
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => Some((tool_use_id.as_str(), &content[..], *is_error)),
        _ => None,
    })
}

/// Each tool result of `message` as `{open}<call id>{then}<content, "Error: " first for an
/// error>},`.
fn result_items(out: &mut Out<'_>, message: &Message, open: &str, then: &str) {
    for (id, parts, is_error) in results(message) {
        out.raw(open).string(id).raw(then);
        error_marked(out, parts, is_error);
        out.raw("},");
    }
}

/// The text and image blocks of `message` in order, as `{text}<text>},` and
/// `{image}<URL or data URL>{image_end},` list elements, then the list closed with `]},`.
fn parts(out: &mut Out<'_>, message: &Message, text: &str, image: &str, image_end: &str) {
    for block in &message.blocks {
        match block {
            ContentBlock::Text { text: t, .. } => {
                out.raw(text).string(t).raw("},");
            }
            ContentBlock::Image(source) => {
                out.raw(image);
                image_url(out, source);
                out.raw(image_end).raw(",");
            }
            _ => {}
        }
    }
    out.close("]},");
}

/// `tojson(("Error: " if b.is_error else "") ~ b.content)`.
fn error_marked(out: &mut Out<'_>, parts: &[ToolResultPart], is_error: bool) {
    let text = result_text(parts);
    if is_error {
        out.string(&format!("Error: {text}"));
    } else {
        out.string(&text);
    }
}

/// A tool call's `arguments`: its raw text, else its input as JSON.
fn arguments<'b>(input: &Value, raw_input: &'b Option<String>) -> Cow<'b, str> {
    match raw_input {
        Some(raw) => Cow::Borrowed(raw),
        None => Cow::Owned(input.to_string()),
    }
}

/// An image's `data` (its URL or its base64 bytes) and `media_type` ("" when unknown), and
/// whether it is a URL.
fn image(source: &ImageSource) -> (bool, Cow<'_, str>, &str) {
    use base64::Engine as _;
    let media_type = source.media_type.as_deref().unwrap_or("");
    match &source.data {
        ImageData::Url(url) => (true, Cow::Borrowed(url), media_type),
        ImageData::Bytes(bytes) => (
            false,
            Cow::Owned(base64::engine::general_purpose::STANDARD.encode(bytes)),
            media_type,
        ),
    }
}

/// `tojson(b.data if b.is_url else "data:" ~ b.media_type ~ ";base64," ~ b.data)`.
fn image_url(out: &mut Out<'_>, source: &ImageSource) {
    match image(source) {
        (true, url, _) => out.string(&url),
        (false, data, media_type) => out.string(&format!("data:{media_type};base64,{data}")),
    };
}

#[cfg(test)]
#[path = "native_tests.rs"]
mod tests;
