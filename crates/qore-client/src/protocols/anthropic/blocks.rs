//! The content blocks of one Anthropic response: started, fed their deltas by `index`, and
//! stopped (see the promises in `stream.rs`'s module doc).

use qore_core::{CallId, ErrorInfo, ResponseEvent, ToolCallInput};
use serde_json::Value;

use super::{MessagesStreamDecoder, Out};
use crate::protocols::anthropic::wire::{Block, BlockKind, Delta};

#[derive(Debug)]
pub(super) struct OpenBlock {
    pub(super) index: u32,
    pub(super) state: BlockState,
}

#[derive(Debug)]
pub(super) enum BlockState {
    Text,
    Thinking {
        /// Whether a thinking block was opened in the events (a delta, even an empty one).
        opened: bool,
    },
    ToolUse {
        /// Shared by the call's argument deltas (a clone per delta, no allocation).
        id: CallId,
        args: String,
        /// A non-empty `input` given at the start (whole bodies): used when no delta came.
        start_input: Option<Value>,
    },
    /// Redacted thinking (complete at its start) and the blocks this codec skips.
    Passive,
}

impl MessagesStreamDecoder {
    pub(super) fn block_start(&mut self, index: u32, block: Block<'_>, out: &mut Out) {
        self.blocks_started = self.blocks_started.max(index.saturating_add(1));
        if self.open.iter().any(|b| b.index == index) {
            // A block restarted at an index still open: the previous one is over.
            self.block_stop(index, out);
        }
        let state = match block.kind {
            BlockKind::Text => {
                if let Some(text) = block.text.non_empty() {
                    out.push_back(ResponseEvent::TextDelta { text: text.into() });
                }
                BlockState::Text
            }
            BlockKind::Thinking => {
                let mut opened = false;
                if let Some(text) = block.thinking.non_empty() {
                    opened = true;
                    out.push_back(ResponseEvent::ThinkingDelta { text: text.into() });
                }
                if let Some(signature) = block.signature.non_empty() {
                    thinking_signature(&mut opened, signature, out);
                }
                BlockState::Thinking { opened }
            }
            BlockKind::RedactedThinking => {
                if let Some(data) = block.data.non_empty() {
                    out.push_back(ResponseEvent::RedactedThinking {
                        data: data.to_owned(),
                    });
                }
                BlockState::Passive
            }
            BlockKind::ToolUse => match block.name.take() {
                Some(name) if !name.is_empty() => {
                    let id = match block.id.take() {
                        Some(id) if !id.is_empty() => id.into_owned(),
                        _ => format!("toolu_qore_{index}"),
                    };
                    out.push_back(ResponseEvent::ToolCallStart {
                        id: id.clone(),
                        name: name.into_owned(),
                    });
                    let start_input = block.input.filter(|input| match input {
                        Value::Null => false,
                        Value::Object(map) => !map.is_empty(),
                        _ => true,
                    });
                    BlockState::ToolUse {
                        id: id.into(),
                        args: String::new(),
                        start_input,
                    }
                }
                _ => {
                    out.push_back(ResponseEvent::Error {
                        error: ErrorInfo::provider(format!(
                            "the tool_use block at index {index} has no name"
                        )),
                    });
                    BlockState::Passive
                }
            },
            BlockKind::Other => BlockState::Passive,
        };
        self.open.push(OpenBlock { index, state });
    }

    pub(super) fn block_delta(&mut self, index: Option<u32>, delta: Delta<'_>, out: &mut Out) {
        let block = match index {
            Some(index) => self.open.iter_mut().rev().find(|b| b.index == index),
            None => self.open.last_mut(),
        };
        // A delta of a block that never started (or already stopped) has nowhere to go.
        let Some(block) = block else { return };
        match &mut block.state {
            BlockState::Text => {
                if let Some(text) = delta.text.non_empty() {
                    out.push_back(ResponseEvent::TextDelta { text: text.into() });
                }
            }
            BlockState::Thinking { opened } => {
                if let Some(text) = delta.thinking.non_empty() {
                    *opened = true;
                    out.push_back(ResponseEvent::ThinkingDelta { text: text.into() });
                }
                if let Some(signature) = delta.signature.non_empty() {
                    thinking_signature(opened, signature, out);
                }
            }
            BlockState::ToolUse { id, args, .. } => {
                if let Some(part) = delta.partial_json.non_empty() {
                    args.push_str(part);
                    out.push_back(ResponseEvent::ToolCallArgsDelta {
                        id: id.clone(),
                        delta: part.into(),
                    });
                }
            }
            BlockState::Passive => {}
        }
    }

    pub(super) fn block_stop(&mut self, index: u32, out: &mut Out) {
        if let Some(pos) = self.open.iter().rposition(|b| b.index == index) {
            let block = self.open.remove(pos);
            end_block(block.state, out);
        }
    }

    /// End every open block, in the order they started.
    pub(super) fn close_blocks(&mut self, out: &mut Out) {
        for block in self.open.drain(..) {
            end_block(block.state, out);
        }
    }
}

/// A signature for the thinking block being decoded. A block with no text yet is opened
/// with an empty delta first, so the signature cannot land on an earlier thinking block.
fn thinking_signature(opened: &mut bool, signature: &str, out: &mut Out) {
    if !*opened {
        *opened = true;
        out.push_back(ResponseEvent::ThinkingDelta { text: "".into() });
    }
    out.push_back(ResponseEvent::ThinkingSignature {
        signature: signature.to_owned(),
    });
}

fn end_block(state: BlockState, out: &mut Out) {
    let BlockState::ToolUse {
        id,
        args,
        start_input,
    } = state
    else {
        return;
    };
    let input = match start_input {
        Some(input) if args.trim().is_empty() => {
            out.push_back(ResponseEvent::ToolCallArgsDelta {
                id: id.clone(),
                delta: input.to_string().into(),
            });
            ToolCallInput::Parsed(input)
        }
        _ => ToolCallInput::parse(&args),
    };
    out.push_back(ResponseEvent::ToolCallEnd {
        id: id.to_string(),
        input,
    });
}
