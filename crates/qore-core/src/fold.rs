//! Folding a stream of [`ResponseEvent`]s into the assistant [`Message`].
//!
//! [`MessageAssembler`] is the only place events become a message, for every protocol:
//! consecutive text deltas grow one text block, thinking deltas one thinking block (a
//! signature attaches to the thinking block it follows), each redacted thinking event is a
//! block of its own, each tool call becomes a [`ContentBlock::ToolUse`] at the position its
//! start event had. The result is a
//! [`StreamOutcome`]: a message is produced only for a finished turn, never for a failed or
//! cancelled one, so a caller that appends finished messages to history never stores half
//! a turn.

use crate::{
    ContentBlock, ErrorInfo, Message, ResponseEvent, Role, StopReason, ToolCallInput, Usage,
};

/// How one stream (one request and its answer) ended. Cancellation is an outcome of its
/// own, not an error. A whole turn (through tool rounds) ends in `qore_client`'s
/// `TurnOutcome`.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamOutcome {
    /// The stream completed: the assembled assistant message, why it stopped and the usage.
    Finished {
        /// The assistant message, every block folded in wire order.
        message: Message,
        /// Why the model stopped, when the wire said.
        stop_reason: Option<StopReason>,
        /// Token counts of the turn.
        usage: Usage,
    },
    /// The stream ended with an error; whatever was assembled is dropped (never half a message).
    Failed {
        /// What went wrong.
        error: ErrorInfo,
        /// Token counts reported before the failure.
        usage: Usage,
    },
    /// The caller cancelled; the partial message is dropped.
    Cancelled {
        /// Token counts reported before the cancellation.
        usage: Usage,
    },
}

/// Folds events into an assistant message. Feed it every event in order, then call
/// [`MessageAssembler::finish`] (or [`MessageAssembler::cancel`]).
#[derive(Debug, Default)]
pub struct MessageAssembler {
    blocks: Vec<ContentBlock>,
    /// Tool calls started but not ended: (call id, index of its block).
    open_calls: Vec<(String, usize)>,
    usage: Usage,
    stop_reason: Option<StopReason>,
    error: Option<ErrorInfo>,
    message_id: Option<String>,
    model: Option<String>,
}

impl MessageAssembler {
    /// An empty assembler, ready for the first event.
    pub fn new() -> Self {
        Self::default()
    }

    /// Usage reported so far (merged).
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// The stop reason reported so far.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop_reason.as_ref()
    }

    /// The provider's message id and model, when the stream named them.
    pub fn message_id(&self) -> Option<&str> {
        self.message_id.as_deref()
    }

    /// The model the provider said answers, once its message start was seen.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The blocks folded so far (a partial view while streaming).
    pub fn blocks(&self) -> &[ContentBlock] {
        &self.blocks
    }

    /// Fold one event into the message being built (text and reasoning appended, tool calls opened, filled and closed, usage and stop reason kept).
    pub fn apply(&mut self, event: &ResponseEvent) {
        match event {
            ResponseEvent::MessageStart { id, model } => {
                if id.is_some() {
                    self.message_id.clone_from(id);
                }
                if model.is_some() {
                    self.model.clone_from(model);
                }
            }
            ResponseEvent::TextDelta { text } => match self.blocks.last_mut() {
                Some(ContentBlock::Text {
                    text: acc,
                    signature: None,
                }) => acc.push_str(text),
                _ => self.blocks.push(ContentBlock::text(text.as_str())),
            },
            ResponseEvent::ThinkingDelta { text } => match self.blocks.last_mut() {
                Some(ContentBlock::Thinking {
                    text: acc,
                    signature: None,
                }) => acc.push_str(text),
                _ => self.blocks.push(ContentBlock::Thinking {
                    text: text.as_str().to_owned(),
                    signature: None,
                }),
            },
            ResponseEvent::ThinkingSignature { signature } => {
                let open = self.blocks.iter_mut().rev().find_map(|b| match b {
                    ContentBlock::Thinking { signature, .. } => Some(signature),
                    _ => None,
                });
                match open {
                    Some(slot) => match slot {
                        Some(existing) => existing.push_str(signature),
                        None => *slot = Some(signature.clone()),
                    },
                    // A signature with no thinking text (providers that hide reasoning).
                    None => self.blocks.push(ContentBlock::Thinking {
                        text: String::new(),
                        signature: Some(signature.clone()),
                    }),
                }
            }
            ResponseEvent::RedactedThinking { data } => {
                self.blocks
                    .push(ContentBlock::RedactedThinking { data: data.clone() });
            }
            ResponseEvent::PartSignature { signature } => {
                let slot = match self.blocks.last_mut() {
                    Some(
                        ContentBlock::Text { signature, .. }
                        | ContentBlock::Thinking { signature, .. }
                        | ContentBlock::ToolUse { signature, .. },
                    ) => signature,
                    _ => {
                        // A signature on a part with nothing else (an empty text part).
                        self.blocks.push(ContentBlock::Text {
                            text: String::new(),
                            signature: None,
                        });
                        match self.blocks.last_mut() {
                            Some(ContentBlock::Text { signature, .. }) => signature,
                            _ => return,
                        }
                    }
                };
                match slot {
                    Some(existing) => existing.push_str(signature),
                    None => *slot = Some(signature.clone()),
                }
            }
            ResponseEvent::ToolCallStart { id, name } => {
                self.open_calls.push((id.clone(), self.blocks.len()));
                self.blocks.push(ContentBlock::ToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: serde_json::Value::Null,
                    raw_input: None,
                    signature: None,
                });
            }
            ResponseEvent::ToolCallArgsDelta { .. } => {}
            ResponseEvent::ToolCallEnd { id, input } => {
                let Some(pos) = self.open_calls.iter().position(|(open, _)| open == id) else {
                    return;
                };
                let (_, index) = self.open_calls.remove(pos);
                if let Some(ContentBlock::ToolUse {
                    input: slot,
                    raw_input,
                    ..
                }) = self.blocks.get_mut(index)
                {
                    match input {
                        ToolCallInput::Parsed(value) => *slot = value.clone(),
                        ToolCallInput::Invalid(err) => *raw_input = Some(err.raw.clone()),
                    }
                }
            }
            ResponseEvent::Usage { usage } => self.usage.merge(usage),
            ResponseEvent::Stop { reason } => self.stop_reason = Some(reason.clone()),
            ResponseEvent::Error { error } => {
                if self.error.is_none() {
                    self.error = Some(error.clone());
                }
            }
        }
    }

    /// The turn is over: a finished message, or the first error the stream reported.
    pub fn finish(self) -> StreamOutcome {
        if let Some(error) = self.error {
            return StreamOutcome::Failed {
                error,
                usage: self.usage,
            };
        }
        if let Some((id, _)) = self.open_calls.first() {
            return StreamOutcome::Failed {
                error: ErrorInfo::provider(format!(
                    "the stream ended before tool call {id} was complete"
                )),
                usage: self.usage,
            };
        }
        StreamOutcome::Finished {
            message: Message::new(Role::Assistant, self.blocks),
            stop_reason: self.stop_reason,
            usage: self.usage,
        }
    }

    /// The turn was cancelled: whatever was folded is dropped.
    pub fn cancel(self) -> StreamOutcome {
        StreamOutcome::Cancelled { usage: self.usage }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(events: &[ResponseEvent]) -> StreamOutcome {
        let mut asm = MessageAssembler::new();
        for e in events {
            asm.apply(e);
        }
        asm.finish()
    }

    fn text(t: &str) -> ResponseEvent {
        ResponseEvent::TextDelta { text: t.into() }
    }

    #[test]
    fn folds_thinking_text_and_tool_calls_in_order() {
        let outcome = fold(&[
            ResponseEvent::ThinkingDelta {
                text: "let ".into(),
            },
            ResponseEvent::ThinkingDelta { text: "me".into() },
            ResponseEvent::ThinkingSignature {
                signature: "sig".into(),
            },
            text("Hel"),
            text("lo"),
            ResponseEvent::ToolCallStart {
                id: "a".into(),
                name: "add".into(),
            },
            ResponseEvent::ToolCallStart {
                id: "b".into(),
                name: "sub".into(),
            },
            ResponseEvent::ToolCallEnd {
                id: "b".into(),
                input: ToolCallInput::parse("{oops"),
            },
            ResponseEvent::ToolCallEnd {
                id: "a".into(),
                input: ToolCallInput::parse(r#"{"x":1}"#),
            },
            ResponseEvent::Stop {
                reason: StopReason::ToolUse,
            },
        ]);
        let StreamOutcome::Finished {
            message,
            stop_reason,
            ..
        } = outcome
        else {
            panic!("not finished: {outcome:?}");
        };
        assert_eq!(stop_reason, Some(StopReason::ToolUse));
        assert_eq!(message.role, Role::Assistant);
        assert_eq!(
            message.blocks,
            vec![
                ContentBlock::Thinking {
                    text: "let me".into(),
                    signature: Some("sig".into())
                },
                ContentBlock::text("Hello"),
                ContentBlock::ToolUse {
                    id: "a".into(),
                    name: "add".into(),
                    input: serde_json::json!({"x": 1}),
                    raw_input: None,
                    signature: None,
                },
                ContentBlock::ToolUse {
                    id: "b".into(),
                    name: "sub".into(),
                    input: serde_json::Value::Null,
                    raw_input: Some("{oops".into()),
                    signature: None,
                },
            ]
        );
    }

    #[test]
    fn an_error_fails_the_turn_and_an_unfinished_call_too() {
        let failed = fold(&[
            text("partial"),
            ResponseEvent::Error {
                error: ErrorInfo::provider("overloaded"),
            },
        ]);
        assert!(
            matches!(failed, StreamOutcome::Failed { ref error, .. } if error.message == "overloaded")
        );
        let unfinished = fold(&[ResponseEvent::ToolCallStart {
            id: "a".into(),
            name: "add".into(),
        }]);
        assert!(matches!(unfinished, StreamOutcome::Failed { .. }));
    }

    #[test]
    fn a_part_signature_stays_on_the_part_it_came_with() {
        let sig = |s: &str| ResponseEvent::PartSignature {
            signature: s.into(),
        };
        let outcome = fold(&[
            text("one"),
            sig("s1"),
            text("two"),
            ResponseEvent::ToolCallStart {
                id: "c".into(),
                name: "f".into(),
            },
            sig("s2"),
            ResponseEvent::ToolCallEnd {
                id: "c".into(),
                input: ToolCallInput::parse("{}"),
            },
        ]);
        let StreamOutcome::Finished { message, .. } = outcome else {
            panic!("not finished: {outcome:?}");
        };
        assert_eq!(
            message.blocks,
            vec![
                ContentBlock::Text {
                    text: "one".into(),
                    signature: Some("s1".into())
                },
                ContentBlock::text("two"),
                ContentBlock::ToolUse {
                    id: "c".into(),
                    name: "f".into(),
                    input: serde_json::json!({}),
                    raw_input: None,
                    signature: Some("s2".into()),
                },
            ]
        );
        let alone = fold(&[sig("s3")]);
        let StreamOutcome::Finished { message, .. } = alone else {
            panic!("not finished: {alone:?}");
        };
        assert_eq!(
            message.blocks,
            vec![ContentBlock::Text {
                text: String::new(),
                signature: Some("s3".into())
            }]
        );
    }

    #[test]
    fn redacted_thinking_is_a_block_of_its_own_between_the_others() {
        let outcome = fold(&[
            ResponseEvent::RedactedThinking { data: "e1".into() },
            ResponseEvent::RedactedThinking { data: "e2".into() },
            ResponseEvent::ThinkingDelta { text: "t".into() },
            ResponseEvent::ThinkingSignature {
                signature: "s".into(),
            },
            text("ok"),
        ]);
        let StreamOutcome::Finished { message, .. } = outcome else {
            panic!("not finished: {outcome:?}");
        };
        assert_eq!(
            message.blocks,
            vec![
                ContentBlock::RedactedThinking { data: "e1".into() },
                ContentBlock::RedactedThinking { data: "e2".into() },
                ContentBlock::Thinking {
                    text: "t".into(),
                    signature: Some("s".into())
                },
                ContentBlock::text("ok"),
            ]
        );
    }

    #[test]
    fn cancel_drops_the_partial_message() {
        let mut asm = MessageAssembler::new();
        asm.apply(&text("half"));
        assert!(matches!(asm.cancel(), StreamOutcome::Cancelled { .. }));
    }
}
