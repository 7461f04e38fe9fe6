//! The `input` of a Responses request as qore-core messages, the inverse of qore-client's
//! Responses encoder (`qore-client/src/protocols/openai_responses/request.rs`).
//!
//! Promises:
//! - a string is one user message; an array is read item by item, in order, and items of
//!   the same side in a row fold into one message: `reasoning`, assistant `message` and
//!   `function_call` items into one assistant message (blocks in item order);
//!   `function_call_output` and user `message` items into one user message; every
//!   `system`/`developer` message is a system message at its place;
//! - parts: `input_text`/`output_text`/`text` -> text, `refusal` -> its text,
//!   `input_image` -> an image (a `data:` URL's base64 as bytes with its media type, any
//!   other URL as a URL); `input_file`, `input_audio` and images by `file_id` are a 400
//!   naming the field (they would change the answer);
//! - `function_call` -> a tool call whose id is the `call_id` (arguments parsed; text that
//!   is not JSON kept raw); `function_call_output` -> a tool result (text or parts);
//! - `reasoning` -> a thinking block: its summary texts (else its `reasoning_text`
//!   content), parts joined by a blank line, signed with `encrypted_content`, exactly as
//!   qore-client's Responses decoder folds a streamed reasoning item, so its encoder
//!   replays it unchanged to a Responses upstream;
//! - `item_reference` is read as the item the caller's resolver finds for its `id` (a
//!   stored output item, see `response::item_origin`), else a 400 naming it; the items
//!   of hosted tools (`web_search_call`, `custom_tool_call`, any `*_call` or
//!   `*_call_output`) are dropped and named by their type; any other type is a 400; an
//!   image `detail` other than `auto` is dropped and named `detail`.

use base64::Engine as _;
use qore_core::{
    ContentBlock, ImageData, ImageSource, Message, Role, ToolCallInput, ToolResultPart,
};
use serde_json::Value;

use super::fields::{
    as_array, as_object, as_str, at, get, join, missing, opt_str, req_str, unsupported, wrong_type,
    Object,
};
use crate::ServeError;

/// Messages as they are decoded, same-side items folded together.
#[derive(Debug, Default)]
pub struct Conversation {
    pub messages: Vec<Message>,
    /// Hints received and not passed on (`Inbound::dropped`).
    pub dropped: Vec<String>,
}

impl Conversation {
    /// Append `blocks` to the last message when it has `role` (never for system messages).
    fn push(&mut self, role: Role, blocks: Vec<ContentBlock>) {
        if blocks.is_empty() {
            return;
        }
        match self.messages.last_mut() {
            Some(last) if last.role == role && role != Role::System => last.blocks.extend(blocks),
            _ => self.messages.push(Message::new(role, blocks)),
        }
    }

    fn drop_hint(&mut self, name: &str) {
        if !self.dropped.iter().any(|d| d == name) {
            self.dropped.push(name.to_owned());
        }
    }

    pub fn system(&mut self, text: &str) {
        if !text.is_empty() {
            self.messages.push(Message::system(text));
        }
    }
}

/// Finds the item an `item_reference` names by its id (a stored output item as JSON).
pub type Resolver<'a> = Option<&'a dyn Fn(&str) -> Option<Value>>;

/// Decode `input` (a string or an array of items) into `conversation`.
pub fn decode(
    input: &Value,
    conversation: &mut Conversation,
    resolve: Resolver<'_>,
) -> Result<(), ServeError> {
    match input {
        Value::String(text) => {
            conversation.push(Role::User, text_block(text));
            Ok(())
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                decode_item(item, &at("input", index), conversation, resolve)?;
            }
            Ok(())
        }
        other => Err(wrong_type("input", "a string or an array of items", other)),
    }
}

fn decode_item(
    value: &Value,
    path: &str,
    conversation: &mut Conversation,
    resolve: Resolver<'_>,
) -> Result<(), ServeError> {
    let item = as_object(value, path)?;
    match opt_str(item, "type", path)? {
        None | Some("message") => message(item, path, conversation),
        Some("function_call") => {
            let call = function_call(item, path)?;
            conversation.push(Role::Assistant, vec![call]);
            Ok(())
        }
        Some("function_call_output") => {
            let result = function_call_output(item, path, conversation)?;
            conversation.push(Role::User, vec![result]);
            Ok(())
        }
        Some("reasoning") => {
            let thinking = reasoning(item, path)?;
            conversation.push(Role::Assistant, thinking.into_iter().collect());
            Ok(())
        }
        Some("item_reference") => {
            let Some(resolve) = resolve else {
                let what = "item_reference (send the item itself)";
                return Err(unsupported(&join(path, "type"), what));
            };
            let id = req_str(item, "id", path)?;
            match resolve(id) {
                // The item found is read as if sent, but never as another reference.
                Some(found) => decode_item(&found, path, conversation, None),
                None => Err(ServeError::invalid(
                    join(path, "id"),
                    format!("`{}`: no stored item `{id}`", join(path, "id")),
                )),
            }
        }
        Some(kind) if hosted_item(kind) => {
            conversation.drop_hint(kind);
            Ok(())
        }
        Some(kind) => Err(ServeError::invalid(
            join(path, "type"),
            format!("`{}`: unknown input item type `{kind}`", join(path, "type")),
        )),
    }
}

/// Items of hosted tools and other tool kinds qore does not run: history that is dropped.
fn hosted_item(kind: &str) -> bool {
    matches!(
        kind,
        "mcp_list_tools" | "mcp_approval_request" | "mcp_approval_response" | "compaction"
    ) || kind.ends_with("_call")
        || kind.ends_with("_call_output")
}

fn message(item: &Object, path: &str, conversation: &mut Conversation) -> Result<(), ServeError> {
    let role = match req_str(item, "role", path)? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" | "developer" => Role::System,
        other => {
            return Err(ServeError::invalid(
                join(path, "role"),
                format!("`{}`: unknown role `{other}`", join(path, "role")),
            ))
        }
    };
    let content_path = join(path, "content");
    let blocks = match get(item, "content") {
        None => return Err(missing(&content_path)),
        Some(Value::String(text)) => text_block(text),
        Some(Value::Array(parts)) => {
            let mut blocks = Vec::with_capacity(parts.len());
            for (index, part) in parts.iter().enumerate() {
                let part_path = at(&content_path, index);
                if let Some(block) = content_part(part, &part_path, conversation)? {
                    if role == Role::System && !matches!(block, ContentBlock::Text { .. }) {
                        return Err(unsupported(&part_path, "an image in a system message"));
                    }
                    blocks.push(block);
                }
            }
            blocks
        }
        Some(other) => {
            return Err(wrong_type(
                &content_path,
                "a string or an array of parts",
                other,
            ))
        }
    };
    if role == Role::System {
        let text: Vec<&str> = blocks.iter().filter_map(ContentBlock::as_text).collect();
        conversation.system(&text.concat());
    } else {
        conversation.push(role, blocks);
    }
    Ok(())
}

fn text_block(text: &str) -> Vec<ContentBlock> {
    match text {
        "" => Vec::new(),
        text => vec![ContentBlock::text(text)],
    }
}

/// One content part; `None` for an empty text.
fn content_part(
    value: &Value,
    path: &str,
    conversation: &mut Conversation,
) -> Result<Option<ContentBlock>, ServeError> {
    let part = as_object(value, path)?;
    let block = match opt_str(part, "type", path)? {
        None | Some("input_text" | "output_text" | "text") => {
            ContentBlock::text(req_str(part, "text", path)?)
        }
        Some("refusal") => ContentBlock::text(req_str(part, "refusal", path)?),
        Some("input_image") => {
            if opt_str(part, "detail", path)?.is_some_and(|d| d != "auto") {
                conversation.drop_hint("detail");
            }
            ContentBlock::Image(image(part, path)?)
        }
        Some(kind @ ("input_file" | "input_audio")) => {
            return Err(unsupported(&join(path, "type"), kind))
        }
        Some(kind) => {
            return Err(ServeError::invalid(
                join(path, "type"),
                format!(
                    "`{}`: unknown content part type `{kind}`",
                    join(path, "type")
                ),
            ))
        }
    };
    Ok(match &block {
        ContentBlock::Text { text, .. } if text.is_empty() => None,
        _ => Some(block),
    })
}

/// An `input_image` part: a URL (`data:` URLs decoded to bytes), never a file id.
fn image(part: &Object, path: &str) -> Result<ImageSource, ServeError> {
    let url_path = join(path, "image_url");
    let url = match get(part, "image_url") {
        Some(Value::Object(object)) => req_str(object, "url", &url_path)?,
        Some(other) => as_str(other, &url_path)?,
        None if get(part, "file_id").is_some() => {
            return Err(unsupported(&join(path, "file_id"), "an image by file_id"))
        }
        None => return Err(missing(&url_path)),
    };
    let Some(rest) = url.strip_prefix("data:") else {
        return Ok(ImageSource {
            media_type: None,
            data: ImageData::Url(url.to_owned()),
        });
    };
    let (meta, data) = rest.split_once(',').ok_or_else(|| {
        ServeError::invalid(
            &url_path,
            format!("`{url_path}` is a data: URL without data"),
        )
    })?;
    let Some(media_type) = meta.strip_suffix(";base64") else {
        return Ok(ImageSource {
            media_type: None,
            data: ImageData::Url(url.to_owned()),
        });
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|err| {
            ServeError::invalid(
                &url_path,
                format!("`{url_path}` is not valid base64: {err}"),
            )
        })?;
    Ok(ImageSource {
        media_type: (!media_type.is_empty()).then(|| media_type.to_owned()),
        data: ImageData::Bytes(bytes),
    })
}

fn function_call(item: &Object, path: &str) -> Result<ContentBlock, ServeError> {
    let call_id = req_str(item, "call_id", path)?;
    let name = req_str(item, "name", path)?;
    let arguments = match get(item, "arguments") {
        None => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(object @ Value::Object(_)) => object.to_string(),
        Some(other) => {
            return Err(wrong_type(
                &join(path, "arguments"),
                "a string of JSON",
                other,
            ))
        }
    };
    let (input, raw_input) = match ToolCallInput::parse(&arguments) {
        ToolCallInput::Parsed(value) => (value, None),
        ToolCallInput::Invalid(error) => (Value::Null, Some(error.raw)),
    };
    Ok(ContentBlock::ToolUse {
        id: call_id.to_owned(),
        name: name.to_owned(),
        input,
        raw_input,
        signature: None,
    })
}

fn function_call_output(
    item: &Object,
    path: &str,
    conversation: &mut Conversation,
) -> Result<ContentBlock, ServeError> {
    let call_id = req_str(item, "call_id", path)?;
    let output_path = join(path, "output");
    let content = match get(item, "output") {
        None => return Err(missing(&output_path)),
        Some(Value::String(text)) => vec![ToolResultPart::Text { text: text.clone() }],
        Some(Value::Array(parts)) => {
            let mut content = Vec::with_capacity(parts.len());
            for (index, part) in parts.iter().enumerate() {
                match content_part(part, &at(&output_path, index), conversation)? {
                    Some(ContentBlock::Text { text, .. }) => {
                        content.push(ToolResultPart::Text { text })
                    }
                    Some(ContentBlock::Image(image)) => content.push(ToolResultPart::Image(image)),
                    _ => {}
                }
            }
            content
        }
        Some(other) => {
            return Err(wrong_type(
                &output_path,
                "a string or an array of parts",
                other,
            ))
        }
    };
    Ok(ContentBlock::ToolResult {
        tool_use_id: call_id.to_owned(),
        content,
        is_error: false,
    })
}

/// A reasoning item as one thinking block; `None` when it holds neither text nor
/// encrypted content.
fn reasoning(item: &Object, path: &str) -> Result<Option<ContentBlock>, ServeError> {
    let summary = part_texts(item, "summary", path)?;
    let text = match summary.iter().any(|t| !t.is_empty()) {
        true => summary,
        false => part_texts(item, "content", path)?,
    };
    let text: Vec<&str> = text.into_iter().filter(|t| !t.is_empty()).collect();
    let text = text.join("\n\n");
    let signature = opt_str(item, "encrypted_content", path)?
        .filter(|e| !e.is_empty())
        .map(str::to_owned);
    if text.is_empty() && signature.is_none() {
        return Ok(None);
    }
    Ok(Some(ContentBlock::Thinking { text, signature }))
}

/// The `text` of each part of the array `key` (absent: none).
fn part_texts<'a>(item: &'a Object, key: &str, path: &str) -> Result<Vec<&'a str>, ServeError> {
    let Some(parts) = get(item, key) else {
        return Ok(Vec::new());
    };
    let parts_path = join(path, key);
    let mut texts = Vec::new();
    for (index, part) in as_array(parts, &parts_path)?.iter().enumerate() {
        let part_path = at(&parts_path, index);
        let part = as_object(part, &part_path)?;
        texts.push(req_str(part, "text", &part_path)?);
    }
    Ok(texts)
}
