//! Content blocks: the pieces a message is made of.
//!
//! Every provider's parts (text, images, thinking with signatures, redacted thinking, tool
//! calls and their results) map onto [`ContentBlock`] without loss, so an assistant turn can
//! be replayed to the provider that produced it exactly as it arrived.

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text. `signature`: an opaque provider signature carried by this very part
    /// (Gemini `thoughtSignature` on a text part), sent back on the same part.
    Text {
        /// The text.
        text: String,
        /// The provider's signature for this part, when it gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// An image, inline bytes or a URL.
    Image(ImageSource),
    /// Model reasoning. `signature` is the provider's opaque proof that must be sent back
    /// with the block (Anthropic `signature`, Gemini `thoughtSignature`).
    Thinking {
        /// The reasoning text as streamed (empty when the provider only sent a signature).
        text: String,
        /// The provider's proof for this block, when it gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider encrypted; `data` is replayed verbatim.
    RedactedThinking {
        /// The encrypted reasoning, opaque to qore.
        data: String,
    },
    /// A tool call made by the model.
    ToolUse {
        /// The call's id, which its result names in [`ContentBlock::ToolResult::tool_use_id`].
        id: String,
        /// The name of the tool called.
        name: String,
        /// Parsed arguments. `Null` when the model sent arguments that are not JSON; the raw
        /// text is then in `raw_input` (never a silent `{}`).
        input: serde_json::Value,
        /// The arguments exactly as the model wrote them, kept only when they are not JSON.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw_input: Option<String>,
        /// An opaque provider signature carried by the call's part (Gemini
        /// `thoughtSignature` on a `functionCall`), sent back on the same part.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// The result of a tool call, sent back by the user side.
    ToolResult {
        /// The id of the call this result answers.
        tool_use_id: String,
        /// What the tool returned: text and images.
        content: Vec<ToolResultPart>,
        /// Whether the tool failed (the content then says why).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            signature: None,
        }
    }

    /// A tool call with parsed arguments (no raw text, no signature).
    pub fn tool_use(
        id: impl Into<String>,
        name: impl Into<String>,
        input: serde_json::Value,
    ) -> Self {
        ContentBlock::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            raw_input: None,
            signature: None,
        }
    }

    /// A tool result of one text part.
    pub fn tool_result(id: impl Into<String>, text: impl Into<String>, is_error: bool) -> Self {
        ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: vec![ToolResultPart::Text { text: text.into() }],
            is_error,
        }
    }

    /// The text of a text block, `None` for every other kind.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// What a tool result may carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolResultPart {
    /// Text the tool returned.
    Text {
        /// The text.
        text: String,
    },
    /// An image the tool returned.
    Image(ImageSource),
}

/// An image and its media type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageSource {
    /// e.g. `image/png`. May be absent for URLs whose type the caller does not know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The bytes inline or the URL they are at.
    #[serde(flatten)]
    pub data: ImageData,
}

/// Where the image's bytes are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageData {
    /// Raw bytes; base64 in JSON.
    Bytes(#[serde(with = "base64_bytes")] Vec<u8>),
    /// A URL (http(s) or `data:`) the provider fetches.
    Url(String),
}

mod base64_bytes {
    use super::*;

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(block: ContentBlock) {
        let json = serde_json::to_string(&block).unwrap();
        let back: ContentBlock = serde_json::from_str(&json).unwrap();
        assert_eq!(back, block, "{json}");
    }

    #[test]
    fn every_block_kind_round_trips() {
        round_trip(ContentBlock::text("héllo \n \u{1F600}"));
        round_trip(ContentBlock::Image(ImageSource {
            media_type: Some("image/png".into()),
            data: ImageData::Bytes(vec![0, 1, 2, 255]),
        }));
        round_trip(ContentBlock::Image(ImageSource {
            media_type: None,
            data: ImageData::Url("https://example.com/a.png".into()),
        }));
        round_trip(ContentBlock::Thinking {
            text: "hmm".into(),
            signature: Some("sig==".into()),
        });
        round_trip(ContentBlock::Thinking {
            text: "no sig".into(),
            signature: None,
        });
        round_trip(ContentBlock::RedactedThinking { data: "Enc".into() });
        round_trip(ContentBlock::ToolUse {
            id: "call_1".into(),
            name: "add".into(),
            input: serde_json::json!({"x": 1, "nested": {"y": [1, 2]}}),
            raw_input: None,
            signature: Some("Cv0BAQ==".into()),
        });
        round_trip(ContentBlock::Text {
            text: "signed".into(),
            signature: Some("sig".into()),
        });
        round_trip(ContentBlock::ToolUse {
            id: "call_2".into(),
            name: "add".into(),
            input: serde_json::Value::Null,
            raw_input: Some("{not json".into()),
            signature: None,
        });
        round_trip(ContentBlock::ToolResult {
            tool_use_id: "call_1".into(),
            content: vec![
                ToolResultPart::Text { text: "3".into() },
                ToolResultPart::Image(ImageSource {
                    media_type: Some("image/jpeg".into()),
                    data: ImageData::Bytes(vec![9; 10]),
                }),
            ],
            is_error: true,
        });
    }

    #[test]
    fn image_bytes_are_base64_in_json() {
        let block = ContentBlock::Image(ImageSource {
            media_type: Some("image/png".into()),
            data: ImageData::Bytes(b"abc".to_vec()),
        });
        let json = serde_json::to_value(&block).unwrap();
        assert_eq!(json["bytes"], "YWJj");
        assert_eq!(json["type"], "image");
    }
}
