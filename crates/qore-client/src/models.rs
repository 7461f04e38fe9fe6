//! What a provider says about its models.

use serde::{Deserialize, Serialize};

/// One model a server offers, with whatever capability metadata the wire gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_by: Option<String>,
    /// Context window in tokens, when the listing says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    /// The listing entry as received.
    pub raw: serde_json::Value,
}
