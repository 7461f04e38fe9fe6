//! What a provider says about its models.

use serde::{Deserialize, Serialize};

/// One model a server offers, with whatever capability metadata the wire gave. Every field
/// but `id` and `raw` is optional: absent means the listing did not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The model's id, as requests name it.
    pub id: String,
    /// A human name, when the listing has one (Anthropic, Gemini).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The organisation that owns the model (OpenAI-style listings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_by: Option<String>,
    /// Context window in tokens, when the listing says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    /// Most output tokens per answer, when the listing says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// What the model can do, as far as the listing says.
    #[serde(default, skip_serializing_if = "ModelCapabilities::is_unknown")]
    pub capabilities: ModelCapabilities,
    /// The listing entry as received.
    pub raw: serde_json::Value,
}

/// What a model can do, as far as the listing says (`None`: not said).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCapabilities {
    /// Whether the model can call tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    /// Whether the model can reason before answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
    /// Whether the model takes images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
}

impl ModelCapabilities {
    /// Whether the listing said nothing about any capability.
    pub fn is_unknown(&self) -> bool {
        *self == ModelCapabilities::default()
    }
}
