//! Encoding a Chat Completions request body from history.
//!
//! - system blocks → `{"role": "system", "content": "..."}`;
//! - user text → a string when it is one text block, else content parts (`text`,
//!   `image_url` with a URL or a `data:` URL);
//! - tool results → one `{"role": "tool", "tool_call_id", "content"}` message each, in the
//!   order of the calls, before the user's other content; the tool role carries text only,
//!   so images in a result follow in a user message;
//! - assistant turns → `content` text plus `tool_calls` (arguments re-serialized from the
//!   parsed input, or the raw text the model sent when it was not JSON); thinking goes back
//!   as `reasoning_content` only when the dialect asks for it. `content` is always a string,
//!   `""` for a turn with tool calls and no text. That is the one shape taken by every server
//!   we have evidence for: llama-cpp-python's server (0.3.36, probed by hand) answers `"content": null`
//!   with a 500 ("Input should be a valid string", its schema types the field as a string)
//!   and an absent `content` with a 500 from its chat template ("'dict object' has no
//!   attribute 'content'"), and takes `""`, as does llama.cpp's own server. The recorded traffic in `../shared/fixtures`
//!   shows DeepSeek and Mistral accepting `""`, and api.openai.com, OpenRouter and llama.cpp's
//!   server accepting turns without `content`; OpenAI's schema allows a string there (string,
//!   parts, or null; optional beside `tool_calls`), though no recording shows it given `""`.
//!
//! - tools on offer → `tools` and `tool_choice: "auto"` (OpenAI's default when tools are
//!   present; llama-cpp-python offers none without it). The tool loop's final answer
//!   overrides it with `"none"` through the request's extra fields.
//!
//! Output is deterministic (sorted object keys), so re-encoding the same history gives the
//! same bytes: the prefix of a continuation is byte-identical to the previous request.

use std::convert::Infallible;

use qore_core::{ContentBlock, ErrorInfo, ImageSource, Message, Role};
use serde_json::{json, Map, Value};

use crate::codec::ChatRequest;
use crate::protocols::shared::{self, joined_text};

pub fn encode(request: &ChatRequest<'_>, replay_reasoning: bool) -> Result<Value, ErrorInfo> {
    if request.model.is_empty() {
        return Err(ErrorInfo::config("no model given for the request"));
    }
    let mut messages = Vec::with_capacity(request.history.len());
    for message in request.history {
        encode_message(message, replay_reasoning, &mut messages);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    let options = request.options;
    body.insert("stream".into(), json!(options.stream));
    if options.stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if !request.tools.is_empty() {
        body.insert("tools".into(), shared::function_tools(request.tools));
        // OpenAI's default with tools, said out loud: llama-cpp-python's function-calling
        // chat formats offer the model no tools at all without it.
        body.insert("tool_choice".into(), json!("auto"));
    }
    Ok(shared::finish_body(body, options, "max_tokens"))
}

/// A history encoded message by message ([`crate::Conversation`]): each message's entries
/// depend on it alone.
pub struct Messages<'h> {
    pub history: &'h [Message],
    pub replay_reasoning: bool,
}

impl crate::Conversation for Messages<'_> {
    fn encode(&self, at: usize, out: &mut Vec<Value>) -> Result<(), ErrorInfo> {
        if let Some(message) = self.history.get(at) {
            encode_message(message, self.replay_reasoning, out);
        }
        Ok(())
    }
}

fn encode_message(message: &Message, replay_reasoning: bool, out: &mut Vec<Value>) {
    match message.role {
        Role::System => {
            out.push(json!({"role": "system", "content": joined_text(&message.blocks)}))
        }
        Role::User => encode_user(&message.blocks, out),
        Role::Assistant => out.push(assistant_message(&message.blocks, replay_reasoning)),
    }
}

fn encode_user(blocks: &[ContentBlock], out: &mut Vec<Value>) {
    let mut parts = Vec::new();
    let mut result_images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let Ok(text) = shared::tool_result_text(content, *is_error, |image| {
                    result_images.push(image_part(image));
                    Ok::<_, Infallible>("[image follows in the next user message]")
                });
                out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": text}));
            }
            ContentBlock::Text { text, .. } => parts.push(json!({"type": "text", "text": text})),
            ContentBlock::Image(image) => parts.push(image_part(image)),
            // Reasoning and tool calls are the assistant's; a user turn carrying them is
            // replayed without them rather than as text the model did not write.
            ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolUse { .. } => {}
        }
    }
    parts.extend(result_images);
    match parts.as_slice() {
        [] => {}
        [single] if single["type"] == "text" => {
            out.push(json!({"role": "user", "content": single["text"]}))
        }
        _ => out.push(json!({"role": "user", "content": parts})),
    }
}

fn image_part(image: &ImageSource) -> Value {
    let url = shared::image_url(image);
    json!({"type": "image_url", "image_url": {"url": url}})
}

/// An assistant message in Chat Completions' shape: `content` (always a string), its tool
/// calls (arguments as sent, else the input's JSON), and with `replay_reasoning` its thinking
/// as `reasoning_content`. What a request replays and what a server answers alike.
pub fn assistant_message(blocks: &[ContentBlock], replay_reasoning: bool) -> Value {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text: t, .. } => text.push_str(t),
            ContentBlock::Thinking { text: t, .. } => reasoning.push_str(t),
            ContentBlock::ToolUse {
                id,
                name,
                input,
                raw_input,
                ..
            } => {
                let arguments = match raw_input {
                    Some(raw) => raw.clone(),
                    None => input.to_string(),
                };
                calls.push(json!({"id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments}}));
            }
            ContentBlock::RedactedThinking { .. }
            | ContentBlock::Image(_)
            | ContentBlock::ToolResult { .. } => {}
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    // Always a string, `""` beside tool calls without text (see the module doc).
    message.insert("content".into(), json!(text));
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    if replay_reasoning && !reasoning.is_empty() {
        message.insert("reasoning_content".into(), json!(reasoning));
    }
    Value::Object(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestOptions;
    use qore_core::{History, ImageData, ToolResultPart, ToolSpec};

    fn encode_history(history: &History, tools: &[ToolSpec], replay: bool) -> Value {
        let options = RequestOptions {
            max_tokens: Some(64),
            ..RequestOptions::default()
        };
        let request = ChatRequest {
            model: "m",
            history,
            tools,
            options: &options,
        };
        encode(&request, replay).unwrap()
    }

    fn tool_turns() -> History {
        History::from(vec![
            Message::system("be brief"),
            Message::user("add 1 and 2, then 3 and 4"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::Thinking {
                        text: "use the tool".into(),
                        signature: None,
                    },
                    ContentBlock::ToolUse {
                        id: "c1".into(),
                        name: "add".into(),
                        input: json!({"x": 1, "y": 2}),
                        raw_input: None,
                        signature: None,
                    },
                    ContentBlock::ToolUse {
                        id: "c2".into(),
                        name: "add".into(),
                        input: Value::Null,
                        raw_input: Some("{x: 3".into()),
                        signature: None,
                    },
                ],
            ),
            Message::new(
                Role::User,
                vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "c1".into(),
                        content: vec![ToolResultPart::Text { text: "3".into() }],
                        is_error: false,
                    },
                    ContentBlock::ToolResult {
                        tool_use_id: "c2".into(),
                        content: vec![ToolResultPart::Text {
                            text: "bad arguments".into(),
                        }],
                        is_error: true,
                    },
                ],
            ),
        ])
    }

    #[test]
    fn encodes_tool_turns_in_chat_completions_shape() {
        let tools = [ToolSpec {
            name: "add".into(),
            description: "adds".into(),
            input_schema: json!({"type": "object"}),
        }];
        let body = encode_history(&tool_turns(), &tools, false);
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 5);
        assert_eq!(
            messages[0],
            json!({"role": "system", "content": "be brief"})
        );
        assert_eq!(messages[1]["content"], "add 1 and 2, then 3 and 4");
        let assistant = &messages[2];
        assert_eq!(assistant["content"], "");
        assert!(assistant.get("reasoning_content").is_none());
        let arguments: Value = serde_json::from_str(
            assistant["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(arguments, json!({"x": 1, "y": 2}));
        assert_eq!(assistant["tool_calls"][1]["function"]["arguments"], "{x: 3");
        assert_eq!(
            messages[3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "3"})
        );
        assert_eq!(messages[4]["tool_call_id"], "c2");
        assert_eq!(messages[4]["content"], "Error: bad arguments");
    }

    #[test]
    fn assistant_content_is_always_a_string() {
        let call = ContentBlock::ToolUse {
            id: "c1".into(),
            name: "add".into(),
            input: json!({}),
            raw_input: None,
            signature: None,
        };
        let encoded = |blocks: Vec<ContentBlock>| {
            let history = History::from(vec![Message::new(Role::Assistant, blocks)]);
            encode_history(&history, &[], false)["messages"][0].clone()
        };
        assert_eq!(encoded(vec![call.clone()])["content"], "");
        let with_text = encoded(vec![ContentBlock::text("let me add"), call]);
        assert_eq!(with_text["content"], "let me add");
        assert_eq!(encoded(vec![])["content"], "");
    }

    #[test]
    fn replays_reasoning_when_asked_and_is_deterministic() {
        let history = tool_turns();
        let body = encode_history(&history, &[], true);
        assert_eq!(body["messages"][2]["reasoning_content"], "use the tool");
        assert!(body.get("tools").is_none());
        let again = encode_history(&history, &[], true);
        assert_eq!(
            serde_json::to_vec(&body).unwrap(),
            serde_json::to_vec(&again).unwrap()
        );
    }

    #[test]
    fn images_become_content_parts() {
        let history = History::from(vec![Message::new(
            Role::User,
            vec![
                ContentBlock::text("what is this?"),
                ContentBlock::Image(ImageSource {
                    media_type: Some("image/png".into()),
                    data: ImageData::Bytes(b"abc".to_vec()),
                }),
            ],
        )]);
        let body = encode_history(&history, &[], false);
        let parts = &body["messages"][0]["content"];
        assert_eq!(parts[0]["type"], "text");
        assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,YWJj");
    }

    #[test]
    fn an_empty_model_is_a_config_error() {
        let history = History::new();
        let options = RequestOptions::default();
        let request = ChatRequest {
            model: "",
            history: &history,
            tools: &[],
            options: &options,
        };
        assert!(encode(&request, false).is_err());
    }
}
