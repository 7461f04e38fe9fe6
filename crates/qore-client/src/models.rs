//! What a provider says about its models.

use serde::{Deserialize, Serialize};

/// One model a server offers, with whatever capability metadata the wire gave. Every field
/// but `id` and `raw` is optional: absent means the listing did not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    /// A human name, when the listing has one (Anthropic, Gemini).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_by: Option<String>,
    /// Context window in tokens, when the listing says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    /// Most output tokens per answer, when the listing says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "ModelCapabilities::is_unknown")]
    pub capabilities: ModelCapabilities,
    /// The listing entry as received.
    pub raw: serde_json::Value,
}

/// What a model can do, as far as the listing says (`None`: not said).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
}

impl ModelCapabilities {
    pub fn is_unknown(&self) -> bool {
        *self == ModelCapabilities::default()
    }
}
