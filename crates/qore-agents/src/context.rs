//! The data a `[body]` template sees, under the seed's names so existing profiles carry
//! over: `ctx.system_prompt`, `ctx.history[]`, `ctx.tools`, `ctx.prefix`, `ctx.suffix`,
//! `ctx.files_metadata`, and `ctx.model` (the resolved model); a fill-in-the-middle request
//! adds `ctx.extra`, the other open documents as `[{"filename", "text"}]` (llama.cpp's
//! `input_extra` shape; an empty list otherwise).
//!
//! Promises:
//! - `system_prompt` is the text of the system messages joined by a blank line, and absent
//!   (not empty) when there is none, so `existsIn(ctx, "system_prompt")` means "there is
//!   one"; system messages are not in `history`;
//! - every other message is one `history` entry `{role, last_user, content,
//!   content_blocks, images}` (`last_user`: it is the last entry whose role is `user`):
//!   `content` is the message's text blocks concatenated; `images` (absent when none)
//!   lists its images; `content_blocks` lists every block, typed like Anthropic's wire
//!   (`{"type": "text", "text"}`, `{"type": "thinking", "thinking", "signature"}`,
//!   `{"type": "redacted_thinking", "data"}`, `{"type": "tool_use", "id", "name", "input",
//!   "arguments"}`, `{"type": "tool_result", "tool_use_id", "name", "content",
//!   "is_error"}`, `{"type": "image", "is_url", "data", "media_type"}`), so
//!   `tojson(block)` is a valid Anthropic block for text, thinking, redacted thinking and
//!   tool use; `signature` appears only when the provider gave one; `arguments` is the
//!   call's argument text (the raw text when it was not JSON); a tool result's `name` is
//!   its call's, and its `content` is its text parts joined by newlines;
//! - `ctx.cache` carries the profile's cache settings for partials to place cache marks;
//! - nothing is lost: the same history always gives the same data.

use std::collections::HashMap;

use base64::Engine as _;
use qore_client::FimFile;
use qore_core::{ContentBlock, History, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde::Serialize;
use serde_json::Value;

/// What a template renders from.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TemplateContext<'a> {
    /// The resolved model (profile default or override).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    /// The system prompt after the building blocks were rendered, when the history has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The conversation, one entry per message.
    pub history: Vec<Entry<'a>>,
    /// Tool definitions in the protocol's dialect (what the codec would send as `tools`).
    pub tools: Vec<Value>,
    /// A fill-in-the-middle request's text before the cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<&'a str>,
    /// A fill-in-the-middle request's text after the cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suffix: Option<&'a str>,
    /// The other open documents as `{filename, text}` objects (llama.cpp `input_extra`).
    pub files_metadata: Vec<Value>,
    /// A fill-in-the-middle request's other open documents.
    pub extra: &'a [FimFile<'a>],
    /// The profile's prompt-cache settings.
    pub cache: CacheSettings,
}

/// `ctx.cache`: `prompt` (the profile's `cache_prompt`), `ttl` (`"5m"`/`"1h"`, absent when
/// not set) and `breakpoints` (`"system"`, `"tools"`, `"last_user_message"`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CacheSettings {
    /// Whether the profile asks for prompt caching (`cache_prompt`).
    pub prompt: bool,
    /// The cache entries' lifetime, `"5m"` or `"1h"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<&'static str>,
    /// Where cache marks go: `"system"`, `"tools"`, `"last_user_message"`.
    pub breakpoints: Vec<&'static str>,
}

/// One message of `ctx.history`.
#[derive(Debug, Clone, Serialize)]
pub struct Entry<'a> {
    /// `"system"`, `"user"` or `"assistant"`.
    pub role: &'static str,
    /// Whether this is the last `user` entry of the history (where Anthropic's
    /// `last_user_message` cache mark goes).
    pub last_user: bool,
    /// The message's text parts joined (what single-string wires take).
    pub content: String,
    /// Every block of the message, in order, for wires that take parts.
    pub content_blocks: Vec<Block<'a>>,
    /// The message's images.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// One block of `content_blocks` (see the module doc for the shapes).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block<'a> {
    /// A text part.
    Text {
        /// The text.
        text: &'a str,
        /// The provider's signature for the part, to send back.
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<&'a str>,
    },
    /// Reasoning.
    Thinking {
        /// The reasoning text.
        thinking: &'a str,
        /// The provider's signature for the reasoning, to send back.
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<&'a str>,
    },
    /// Reasoning the provider encrypted.
    RedactedThinking {
        /// The encrypted data, replayed verbatim.
        data: &'a str,
    },
    /// A tool call.
    ToolUse {
        /// The call's id.
        id: &'a str,
        /// The tool's name.
        name: &'a str,
        /// The arguments as JSON.
        input: &'a Value,
        /// The arguments as JSON text (what wires that take a string want).
        arguments: String,
        /// The provider's signature for the call's part, to send back.
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<&'a str>,
    },
    /// A tool result.
    ToolResult {
        /// The id of the call it answers.
        tool_use_id: &'a str,
        /// The name of the tool that ran (Gemini and Ollama name results by tool).
        name: &'a str,
        /// The result's text parts joined.
        content: String,
        /// Whether the tool failed.
        is_error: bool,
    },
    /// An image.
    Image(Image),
}

/// An image as templates see it: `data` is the URL or the base64 bytes.
#[derive(Debug, Clone, Serialize)]
pub struct Image {
    /// Whether `data` is a URL (else base64 bytes).
    pub is_url: bool,
    /// The URL or the base64 bytes.
    pub data: String,
    /// The image's media type (`image/png`).
    pub media_type: String,
}

impl Image {
    fn of(source: &ImageSource) -> Image {
        let (is_url, data) = match &source.data {
            ImageData::Url(url) => (true, url.clone()),
            ImageData::Bytes(bytes) => (
                false,
                base64::engine::general_purpose::STANDARD.encode(bytes),
            ),
        };
        Image {
            is_url,
            data,
            media_type: source.media_type.clone().unwrap_or_default(),
        }
    }
}

impl<'a> TemplateContext<'a> {
    /// The context of a chat request: `history` and the tool definitions in the dialect.
    pub fn chat(history: &'a History, tools: Vec<Value>) -> Self {
        let names = history.tool_names();
        let messages: Vec<&Message> = history.iter().filter(|m| m.role != Role::System).collect();
        let last_user = last_user(&messages);
        let entries = (messages.iter().enumerate())
            .map(|(i, m)| entry(m, &names, Some(i) == last_user))
            .collect();
        TemplateContext {
            history: entries,
            ..TemplateContext::chat_header(history, tools)
        }
    }

    /// [`TemplateContext::chat`] with `history` (`ctx.history`) left empty: what a
    /// template rendered once per message sees beside its `msg`.
    pub fn chat_header(history: &History, tools: Vec<Value>) -> Self {
        let system: Vec<String> = (history.iter())
            .filter(|m| m.role == Role::System)
            .map(|m| m.text())
            .filter(|t| !t.is_empty())
            .collect();
        TemplateContext {
            system_prompt: (!system.is_empty()).then(|| system.join("\n\n")),
            tools,
            ..TemplateContext::default()
        }
    }
}

/// The index of the last user entry among `messages` (the history's non-system ones).
pub fn last_user(messages: &[&Message]) -> Option<usize> {
    messages.iter().rposition(|m| m.role == Role::User)
}

/// The `ctx.history` entry of `m` (a message that is not a system message); `names`: the
/// tool name of each call id ([`History::tool_names`]); `last_user`: see [`Entry`].
pub fn entry<'a>(m: &'a Message, names: &HashMap<&str, &'a str>, last_user: bool) -> Entry<'a> {
    Entry {
        role: match m.role {
            Role::Assistant => "assistant",
            _ => "user",
        },
        last_user,
        content: m.text(),
        content_blocks: m.blocks.iter().map(|b| block(b, names)).collect(),
        images: (m.blocks.iter())
            .filter_map(|b| match b {
                ContentBlock::Image(source) => Some(Image::of(source)),
                _ => None,
            })
            .collect(),
    }
}

fn block<'a>(b: &'a ContentBlock, names: &HashMap<&str, &'a str>) -> Block<'a> {
    match b {
        ContentBlock::Text { text, signature } => Block::Text {
            text,
            signature: signature.as_deref(),
        },
        ContentBlock::Image(source) => Block::Image(Image::of(source)),
        ContentBlock::Thinking { text, signature } => Block::Thinking {
            thinking: text,
            signature: signature.as_deref(),
        },
        ContentBlock::RedactedThinking { data } => Block::RedactedThinking { data },
        ContentBlock::ToolUse {
            id,
            name,
            input,
            raw_input,
            signature,
        } => Block::ToolUse {
            id,
            name,
            input,
            arguments: match raw_input {
                Some(raw) => raw.clone(),
                None => input.to_string(),
            },
            signature: signature.as_deref(),
        },
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => Block::ToolResult {
            tool_use_id,
            name: names.get(tool_use_id.as_str()).copied().unwrap_or(""),
            content: (content.iter())
                .filter_map(|p| match p {
                    ToolResultPart::Text { text } => Some(text.as_str()),
                    ToolResultPart::Image(_) => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
            is_error: *is_error,
        },
    }
}
