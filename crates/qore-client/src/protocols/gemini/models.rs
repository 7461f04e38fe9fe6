//! `GET {base}/v1beta/models`: `{"models": [{"name": "models/x", "displayName",
//! "inputTokenLimit", "outputTokenLimit", "supportedGenerationMethods", "thinking"}],
//! "nextPageToken"}`.
//!
//! Promises: ids without the `models/` prefix (what `chat_path` takes); context and output
//! limits; capabilities as far as the listing says: `thinking` from its flag; tools and
//! images are not in the listing (None) — except that a model that cannot
//! `generateContent` (embeddings, AQA) can do neither. Every entry is kept whole in
//! [`ModelInfo::raw`]. The path asks for the largest page (1000), which holds the whole
//! catalogue; a `nextPageToken` is not followed.

use qore_core::ErrorInfo;
use serde_json::Value;

use crate::{ModelCapabilities, ModelInfo};

pub fn parse(body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| ErrorInfo::provider(format!("model listing is not JSON: {err}")))?;
    match value.get("models") {
        Some(Value::Array(entries)) => Ok(entries.iter().filter_map(entry).collect()),
        // An empty catalogue is sent as `{}`.
        None if value.is_object() => Ok(Vec::new()),
        _ => Err(ErrorInfo::provider(
            "model listing has no `models` array".to_owned(),
        )),
    }
}

fn entry(raw: &Value) -> Option<ModelInfo> {
    let name = raw.get("name")?.as_str()?;
    let id = name.strip_prefix("models/").unwrap_or(name).to_owned();
    let generates = raw
        .get("supportedGenerationMethods")
        .and_then(Value::as_array)
        .map(|methods| {
            methods
                .iter()
                .any(|m| m.as_str() == Some("generateContent"))
        });
    let thinking = raw.get("thinking").and_then(Value::as_bool);
    Some(ModelInfo {
        id,
        display_name: raw
            .get("displayName")
            .and_then(Value::as_str)
            .map(str::to_owned),
        owned_by: None,
        context_length: raw.get("inputTokenLimit").and_then(Value::as_u64),
        max_output_tokens: raw.get("outputTokenLimit").and_then(Value::as_u64),
        capabilities: ModelCapabilities {
            // Only a model that cannot chat at all is known to lack tools and images.
            tools: generates.filter(|g| !g),
            thinking: match (thinking, generates) {
                (Some(flag), _) => Some(flag),
                (None, Some(false)) => Some(false),
                (None, _) => None,
            },
            images: generates.filter(|g| !g),
        },
        raw: raw.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ids_limits_and_thinking() {
        let models = parse(
            br#"{"models":[
                {"name":"models/gemini-2.5-flash","displayName":"Gemini 2.5 Flash","inputTokenLimit":1048576,"outputTokenLimit":65536,"supportedGenerationMethods":["generateContent","countTokens"],"thinking":true},
                {"name":"models/gemini-2.0-flash","displayName":"Gemini 2.0 Flash","inputTokenLimit":1048576,"outputTokenLimit":8192,"supportedGenerationMethods":["generateContent"]},
                {"name":"models/gemini-embedding-001","supportedGenerationMethods":["embedContent"]},
                {"displayName":"no name"}
            ],"nextPageToken":"abc"}"#,
        )
        .unwrap();
        assert_eq!(models.len(), 3);
        assert_eq!(models[0].id, "gemini-2.5-flash");
        assert_eq!(models[0].display_name.as_deref(), Some("Gemini 2.5 Flash"));
        assert_eq!(models[0].context_length, Some(1_048_576));
        assert_eq!(models[0].max_output_tokens, Some(65_536));
        assert_eq!(models[0].capabilities.thinking, Some(true));
        assert_eq!(models[0].capabilities.tools, None);
        assert_eq!(models[1].capabilities.thinking, None);
        assert_eq!(models[2].id, "gemini-embedding-001");
        assert_eq!(models[2].capabilities.tools, Some(false));
        assert_eq!(models[2].capabilities.thinking, Some(false));
        assert_eq!(models[0].raw["outputTokenLimit"], 65536);
    }

    #[test]
    fn empty_and_broken_listings() {
        assert!(parse(b"{}").unwrap().is_empty());
        assert!(parse(b"not json").is_err());
        assert!(parse(br#"{"models": 3}"#).is_err());
    }
}
