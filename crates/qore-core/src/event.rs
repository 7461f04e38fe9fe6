//! What a provider stream says, decoded: [`ResponseEvent`]s.
//!
//! Every codec turns its wire into this one vocabulary, streaming or not, so everything
//! above the codecs (folding, the tool loop, front ends) is protocol-agnostic.

use serde::{Deserialize, Serialize};

use crate::{CallId, ErrorInfo};

/// The text of a delta event: a string that keeps up to 24 bytes inline, so the many small
/// deltas of a stream cost no allocation each. Derefs to `str`; JSON is a plain string.
pub type DeltaText = compact_str::CompactString;

/// One decoded event of a response. JSON: `{"type": "text_delta", "text": "..."}` etc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseEvent {
    /// The provider started a message (its id and the model that answers, when given).
    MessageStart {
        /// The provider's message id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The model that answers (it may differ from the one asked for).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// A piece of the answer's text.
    TextDelta {
        /// The text, appended to the current text block.
        text: DeltaText,
    },
    /// A piece of the model's reasoning.
    ThinkingDelta {
        /// The reasoning text, appended to the current thinking block.
        text: DeltaText,
    },
    /// The signature of the thinking block that is being streamed.
    ThinkingSignature {
        /// The signature, sent back with the block on the next request.
        signature: String,
    },
    /// A whole block of reasoning the provider encrypted (Anthropic `redacted_thinking`):
    /// `data` is replayed verbatim.
    RedactedThinking {
        /// The encrypted reasoning.
        data: String,
    },
    /// An opaque signature of the part just streamed (Gemini `thoughtSignature`): it belongs
    /// to the last block folded so far, whatever its kind (text, thinking or tool call).
    PartSignature {
        /// The signature, attached to the last block.
        signature: String,
    },
    /// The model starts a tool call; its arguments follow as [`ResponseEvent::ToolCallArgsDelta`]s.
    ToolCallStart {
        /// The call's id (unique in the message).
        id: String,
        /// The name of the tool called.
        name: String,
    },
    /// A piece of a tool call's arguments (JSON text).
    ToolCallArgsDelta {
        /// The id of the call the piece belongs to.
        id: CallId,
        /// The next piece of the arguments' JSON text.
        delta: DeltaText,
    },
    /// A tool call is complete: its arguments parsed, or the raw text and why it did not parse.
    ToolCallEnd {
        /// The id of the finished call.
        id: String,
        /// The parsed arguments, or the raw text and the parse error.
        #[serde(flatten)]
        input: ToolCallInput,
    },
    /// Token counts reported so far (later reports of the same turn replace earlier ones).
    Usage {
        /// The counts.
        usage: Usage,
    },
    /// The model stopped generating, and why.
    Stop {
        /// Why it stopped.
        reason: StopReason,
    },
    /// The provider reported an error mid-stream, or the transport failed; the stream ends with it.
    Error {
        /// What went wrong.
        error: ErrorInfo,
    },
}

/// The arguments of a finished tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallInput {
    /// `{"input": {...}}`
    #[serde(rename = "input")]
    Parsed(serde_json::Value),
    /// `{"invalid": {"raw": "...", "message": "..."}}`
    Invalid(ToolArgsError),
}

impl ToolCallInput {
    /// Parse accumulated argument text. Empty text means "no arguments" (`{}`), which is what
    /// every wire sends for zero-argument calls; anything else must be valid JSON.
    pub fn parse(raw: &str) -> Self {
        if raw.trim().is_empty() {
            return ToolCallInput::Parsed(serde_json::Value::Object(Default::default()));
        }
        match serde_json::from_str(raw) {
            Ok(value) => ToolCallInput::Parsed(value),
            Err(err) => ToolCallInput::Invalid(ToolArgsError {
                raw: raw.to_owned(),
                message: err.to_string(),
            }),
        }
    }
}

/// Tool-call arguments that are not valid JSON, kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolArgsError {
    /// The arguments' text exactly as the model wrote it.
    pub raw: String,
    /// Why it is not a JSON object.
    pub message: String,
}

/// Token counts. Each is optional: absent means "not reported", which is not zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompt (the whole input, cached parts included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Tokens the model generated (reasoning included where the provider counts it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Input tokens served from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Input tokens written to the provider's prompt cache (Anthropic cache creation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Output tokens spent on reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// Merge a later report into this one: values it has replace ours, values it lacks never
    /// erase ours.
    pub fn merge(&mut self, later: &Usage) {
        fn take(ours: &mut Option<u64>, theirs: Option<u64>) {
            if theirs.is_some() {
                *ours = theirs;
            }
        }
        take(&mut self.input_tokens, later.input_tokens);
        take(&mut self.output_tokens, later.output_tokens);
        take(&mut self.cached_input_tokens, later.cached_input_tokens);
        take(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
        take(&mut self.reasoning_tokens, later.reasoning_tokens);
    }

    /// True when no count at all was reported.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The output token limit (`max_tokens`) cut the answer.
    MaxTokens,
    /// The model called tools and waits for their results.
    ToolUse,
    /// A stop sequence ended the answer.
    StopSequence,
    /// The provider refused to answer (a safety refusal).
    Refusal,
    /// The provider paused a long turn (Anthropic `pause_turn`): send the turn back as is to
    /// let it continue.
    PauseTurn,
    /// A reason this vocabulary does not name, verbatim from the wire.
    Other(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_partial_usage_never_erases_earlier_values() {
        let mut usage = Usage {
            input_tokens: Some(10),
            cached_input_tokens: Some(4),
            ..Usage::default()
        };
        usage.merge(&Usage {
            output_tokens: Some(7),
            ..Usage::default()
        });
        assert_eq!(usage.input_tokens, Some(10));
        assert_eq!(usage.cached_input_tokens, Some(4));
        assert_eq!(usage.output_tokens, Some(7));
        assert_eq!(usage.reasoning_tokens, None);
        usage.merge(&Usage {
            output_tokens: Some(9),
            ..Usage::default()
        });
        assert_eq!(usage.output_tokens, Some(9));
    }

    #[test]
    fn tool_args_parse_errors_keep_the_raw_text() {
        match ToolCallInput::parse("{\"a\": 1") {
            ToolCallInput::Invalid(err) => assert_eq!(err.raw, "{\"a\": 1"),
            other => panic!("expected invalid, got {other:?}"),
        }
        assert_eq!(
            ToolCallInput::parse(""),
            ToolCallInput::Parsed(serde_json::json!({}))
        );
    }

    #[test]
    fn events_round_trip_with_a_type_tag() {
        let events = vec![
            ResponseEvent::MessageStart {
                id: Some("m".into()),
                model: None,
            },
            ResponseEvent::TextDelta { text: "a".into() },
            ResponseEvent::ThinkingDelta { text: "b".into() },
            ResponseEvent::ThinkingSignature {
                signature: "s".into(),
            },
            ResponseEvent::RedactedThinking { data: "enc".into() },
            ResponseEvent::ToolCallStart {
                id: "c".into(),
                name: "n".into(),
            },
            ResponseEvent::ToolCallArgsDelta {
                id: "c".into(),
                delta: "{".into(),
            },
            ResponseEvent::ToolCallEnd {
                id: "c".into(),
                input: ToolCallInput::Parsed(serde_json::json!({"x": 1})),
            },
            ResponseEvent::ToolCallEnd {
                id: "d".into(),
                input: ToolCallInput::parse("{oops"),
            },
            ResponseEvent::Usage {
                usage: Usage {
                    input_tokens: Some(1),
                    ..Usage::default()
                },
            },
            ResponseEvent::Stop {
                reason: StopReason::Other("weird".into()),
            },
            ResponseEvent::Stop {
                reason: StopReason::ToolUse,
            },
            ResponseEvent::Error {
                error: ErrorInfo::provider("boom"),
            },
        ];
        for event in events {
            let json = serde_json::to_value(&event).unwrap();
            assert!(json["type"].is_string(), "{json}");
            let back: ResponseEvent = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(back, event, "{json}");
        }
        let end = serde_json::to_value(ResponseEvent::ToolCallEnd {
            id: "c".into(),
            input: ToolCallInput::Parsed(serde_json::json!({"x": 1})),
        })
        .unwrap();
        assert_eq!(end["input"]["x"], 1);
        assert_eq!(
            serde_json::to_value(StopReason::EndTurn).unwrap(),
            "end_turn"
        );
    }
}
