//! The text tool protocol inside the loop (see [`super::text_protocol`] for the syntax):
//! what a request looks like when tools are described in the prompt, and how a streamed
//! reply becomes tool calls.
//!
//! History stays the single source of truth, in the same shape as with native tools: the
//! assistant message keeps the reply **verbatim** (its `<tool_call>` blocks included) and
//! gets one `ToolUse` block per call block, and the results are `ToolResult` blocks. Only
//! the request is different, and [`request_history`] derives it from history alone:
//!
//! - the protocol section ([`render_protocol_section`]) is appended to the first system
//!   message (or becomes one), and no native tool definitions are sent;
//! - an assistant `ToolUse` whose id was made by the parser (it contains `text_call_`) is
//!   already in the reply text and is left out; any other `ToolUse` (a turn made with native
//!   tools earlier in the conversation) is written as a `<tool_call>` block;
//! - each run of `ToolResult` blocks in a user message becomes one text block of
//!   `<tool_result>` blocks ([`render_results`]), named after their calls.
//!
//! Promises: the derived request is a pure function of history and the tool specs, so each
//! request's prefix is byte-identical to the previous request (prompt caches hit); the
//! verbatim reply means a server's cache of what the model generated stays valid; block ids
//! are `m{N}_text_call_{n}` where N is the message's index in history, so they are unique in
//! a conversation; [`TextTurn`] shows consumers the reply without the call blocks, and each
//! call as a `ToolCallStart` + `ToolCallEnd` pair at the point it was written (a malformed
//! block ends with its parse error), so UIs see the same events as with native tools.

use std::collections::HashMap;

use qore_core::{
    ContentBlock, History, Message, ResponseEvent, Role, ToolArgsError, ToolCallInput, ToolOutput,
    ToolSpec,
};
use serde_json::Value;

use super::execute::{CallReport, ToolCall};
use super::text_protocol::{
    render_protocol_section, render_results, TextToolEvent, TextToolParser,
};

/// Whether a tool-call id was made by the text-protocol parser.
pub fn is_text_call_id(id: &str) -> bool {
    id.contains("text_call_")
}

/// The history a text-protocol request is encoded from (see the module doc).
pub fn request_history(history: &History, specs: &[ToolSpec]) -> History {
    let names = history.tool_names();
    let section = render_protocol_section(specs);
    let mut out: Vec<Message> = Vec::with_capacity(history.len() + 1);
    let mut section_placed = section.is_empty();
    for message in history {
        let blocks = match message.role {
            Role::System if !section_placed => {
                section_placed = true;
                with_section(&message.blocks, &section)
            }
            Role::System => message.blocks.clone(),
            Role::Assistant => assistant_blocks(&message.blocks),
            Role::User => user_blocks(&message.blocks, &names),
        };
        out.push(Message::new(message.role, blocks));
    }
    if !section_placed {
        out.insert(0, Message::system(section));
    }
    History::from(out)
}

fn with_section(blocks: &[ContentBlock], section: &str) -> Vec<ContentBlock> {
    let mut blocks = blocks.to_vec();
    match blocks.iter_mut().rev().find_map(|b| match b {
        ContentBlock::Text { text, .. } => Some(text),
        _ => None,
    }) {
        Some(text) if text.trim().is_empty() => *text = section.to_owned(),
        Some(text) => {
            text.push_str("\n\n");
            text.push_str(section);
        }
        None => blocks.push(ContentBlock::text(section)),
    }
    blocks
}

fn assistant_blocks(blocks: &[ContentBlock]) -> Vec<ContentBlock> {
    (blocks.iter())
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, .. } if is_text_call_id(id) => None,
            ContentBlock::ToolUse {
                name,
                input,
                raw_input,
                ..
            } => {
                let arguments = match raw_input {
                    Some(raw) => Value::String(raw.clone()),
                    None => input.clone(),
                };
                // Written like the protocol's example: the name first.
                let name = Value::String(name.clone());
                Some(ContentBlock::text(format!(
                    "<tool_call>{{\"name\": {name}, \"arguments\": {arguments}}}</tool_call>"
                )))
            }
            other => Some(other.clone()),
        })
        .collect()
}

fn user_blocks(blocks: &[ContentBlock], names: &HashMap<&str, &str>) -> Vec<ContentBlock> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut run: Vec<CallReport> = Vec::new();
    let flush = |run: &mut Vec<CallReport>, out: &mut Vec<ContentBlock>| {
        if !run.is_empty() {
            out.push(ContentBlock::text(render_results(run)));
            run.clear();
        }
    };
    for block in blocks {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => run.push(CallReport {
                id: tool_use_id.clone(),
                name: (names.get(tool_use_id.as_str()).copied())
                    .unwrap_or_default()
                    .to_owned(),
                output: ToolOutput {
                    content: content.clone(),
                    is_error: *is_error,
                    structured: None,
                },
                ran: true,
                elapsed: Default::default(),
            }),
            other => {
                flush(&mut run, &mut out);
                out.push(other.clone());
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

/// One streamed reply under the text protocol: turns text deltas into the reply without
/// its call blocks plus call events, and remembers the blocks for [`TextTurn::attach`].
pub struct TextTurn {
    parser: TextToolParser,
    found: Vec<TextToolEvent>,
    flushed: bool,
}

impl TextTurn {
    /// For the reply that will be message `history_len` of the history.
    pub fn new(history_len: usize) -> Self {
        TextTurn {
            parser: TextToolParser::new(format!("m{history_len}_")),
            found: Vec::new(),
            flushed: false,
        }
    }

    /// Pass one event of the stream on, as consumers should see it.
    pub fn on_event(&mut self, event: &ResponseEvent, emit: &mut impl FnMut(&ResponseEvent)) {
        match event {
            ResponseEvent::TextDelta { text } if !self.flushed => {
                let settled = self.parser.feed(text);
                self.show(settled, emit);
            }
            ResponseEvent::Stop { .. } => {
                self.end(emit);
                emit(event);
            }
            other => emit(other),
        }
    }

    /// The stream ended: settle what the parser holds back.
    pub fn end(&mut self, emit: &mut impl FnMut(&ResponseEvent)) {
        if !self.flushed {
            self.flushed = true;
            let settled = std::mem::take(&mut self.parser).finish();
            self.show(settled, emit);
        }
    }

    fn show(&mut self, settled: Vec<TextToolEvent>, emit: &mut impl FnMut(&ResponseEvent)) {
        for event in settled {
            match &event {
                TextToolEvent::Text(text) => emit(&ResponseEvent::TextDelta {
                    text: text.as_str().into(),
                }),
                TextToolEvent::Call(call) => {
                    emit(&ResponseEvent::ToolCallStart {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                    emit(&ResponseEvent::ToolCallEnd {
                        id: call.id.clone(),
                        input: ToolCallInput::Parsed(call.input.clone()),
                    });
                }
                TextToolEvent::Malformed { id, raw, message } => {
                    emit(&ResponseEvent::ToolCallStart {
                        id: id.clone(),
                        name: String::new(),
                    });
                    emit(&ResponseEvent::ToolCallEnd {
                        id: id.clone(),
                        input: ToolCallInput::Invalid(ToolArgsError {
                            raw: raw.clone(),
                            message: message.clone(),
                        }),
                    });
                }
            }
            if !matches!(event, TextToolEvent::Text(_)) {
                self.found.push(event);
            }
        }
    }

    /// Add one `ToolUse` block per call block to the finished reply (which already holds
    /// the text verbatim); returns why each malformed block is malformed, by id. A malformed
    /// block is stored with an empty name and its raw content, so it is answered like any
    /// other call and history stays well formed.
    pub fn attach(self, message: &mut Message) -> HashMap<String, String> {
        let mut malformed = HashMap::new();
        for event in self.found {
            let call = match event {
                TextToolEvent::Call(call) => call,
                TextToolEvent::Malformed { id, raw, message } => {
                    malformed.insert(id.clone(), message);
                    ToolCall {
                        id,
                        name: String::new(),
                        input: Value::Object(Default::default()),
                        raw_input: Some(raw),
                    }
                }
                TextToolEvent::Text(_) => continue,
            };
            message.blocks.push(ContentBlock::ToolUse {
                id: call.id,
                name: call.name,
                input: call.input,
                raw_input: call.raw_input,
                signature: None,
            });
        }
        malformed
    }
}

#[cfg(test)]
mod tests {
    use qore_core::ToolResultPart;
    use serde_json::json;

    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: "Reads.".into(),
            input_schema: json!({"type": "object"}),
        }
    }

    fn texts(message: &Message) -> Vec<&str> {
        message.blocks.iter().filter_map(|b| b.as_text()).collect()
    }

    #[test]
    fn without_a_system_message_the_section_becomes_one() {
        let history = History::from(vec![Message::user("hi")]);
        let derived = request_history(&history, &[spec("read")]);
        assert_eq!(derived.len(), 2);
        assert_eq!(derived.messages()[0].role, Role::System);
        assert!(derived.messages()[0].text().contains("#### read"));
        // No tools: nothing is added.
        assert_eq!(request_history(&history, &[]), history);
    }

    #[test]
    fn the_section_follows_the_system_text() {
        let history = History::from(vec![Message::system("Be brief."), Message::user("hi")]);
        let derived = request_history(&history, &[spec("read")]);
        let system = derived.messages()[0].text();
        assert!(
            system.starts_with("Be brief.\n\n## Tool-use protocol"),
            "{system}"
        );
    }

    #[test]
    fn native_calls_from_earlier_turns_are_written_as_blocks_and_results_as_text() {
        let history = History::from(vec![
            Message::user("hi"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::text("Looking."),
                    ContentBlock::ToolUse {
                        id: "call_1".into(),
                        name: "read".into(),
                        input: json!({"path": "a"}),
                        raw_input: None,
                        signature: None,
                    },
                ],
            ),
            Message::new(
                Role::User,
                vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "call_1".into(),
                        content: vec![ToolResultPart::Text { text: "A".into() }],
                        is_error: false,
                    },
                    ContentBlock::text("and now?"),
                ],
            ),
        ]);
        let derived = request_history(&history, &[spec("read")]);
        let assistant = &derived.messages()[2];
        assert_eq!(
            texts(assistant),
            [
                "Looking.",
                r#"<tool_call>{"name": "read", "arguments": {"path":"a"}}</tool_call>"#
            ]
        );
        assert_eq!(
            texts(&derived.messages()[3]),
            [
                "<tool_result name=\"read\" id=\"call_1\">\nA\n</tool_result>",
                "and now?"
            ]
        );
    }

    #[test]
    fn a_streamed_reply_shows_text_and_calls_and_attaches_the_calls() {
        let reply = "A <tool_call>{\"name\": \"read\", \"arguments\": {}}</tool_call> B <tool_call>oops</tool_call>";
        let mut turn = TextTurn::new(4);
        let mut shown = Vec::new();
        let mut emit = |e: &ResponseEvent| shown.push(e.clone());
        for piece in reply.as_bytes().chunks(3) {
            let piece = std::str::from_utf8(piece).unwrap();
            turn.on_event(&ResponseEvent::TextDelta { text: piece.into() }, &mut emit);
        }
        turn.end(&mut emit);
        let text: String = (shown.iter())
            .filter_map(|e| match e {
                ResponseEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "A  B ");
        let ends: Vec<bool> = (shown.iter())
            .filter_map(|e| match e {
                ResponseEvent::ToolCallEnd { input, .. } => {
                    Some(matches!(input, ToolCallInput::Parsed(_)))
                }
                _ => None,
            })
            .collect();
        assert_eq!(ends, [true, false]);
        let mut message = Message::assistant(reply);
        let malformed = turn.attach(&mut message);
        let ids: Vec<&str> = (message.blocks.iter())
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["m4_text_call_1", "m4_text_call_2"]);
        assert!(ids.iter().all(|id| is_text_call_id(id)));
        assert_eq!(malformed.keys().collect::<Vec<_>>(), ["m4_text_call_2"]);
    }
}
