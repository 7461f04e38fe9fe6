//! `GET {base}/v1/models`: `{"data": [{"id", "display_name", "created_at", "type": "model",
//! "max_input_tokens", "max_tokens", "capabilities": {...}}], "has_more", "first_id",
//! "last_id"}`.
//!
//! Promises: every entry with an id becomes a [`ModelInfo`] (kept whole in `raw`), with
//! `display_name`, `max_input_tokens` as the context length, `max_tokens` as the output
//! limit, and the capabilities the listing states: `capabilities.thinking.supported`,
//! `capabilities.image_input.supported` (tool use is not listed, so it stays unknown).

use qore_core::ErrorInfo;
use serde_json::Value;

use crate::{ModelCapabilities, ModelInfo};

pub fn parse(body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| ErrorInfo::provider(format!("model listing is not JSON: {err}")))?;
    let Some(Value::Array(entries)) = value.get("data") else {
        return Err(ErrorInfo::provider(
            "model listing has no `data` array".to_owned(),
        ));
    };
    Ok(entries.iter().filter_map(entry).collect())
}

fn entry(raw: &Value) -> Option<ModelInfo> {
    let id = raw.get("id")?.as_str()?.to_owned();
    let supported = |capability: &str| {
        raw.get("capabilities")?
            .get(capability)?
            .get("supported")?
            .as_bool()
    };
    Some(ModelInfo {
        id,
        display_name: raw
            .get("display_name")
            .and_then(Value::as_str)
            .map(str::to_owned),
        owned_by: None,
        context_length: raw.get("max_input_tokens").and_then(Value::as_u64),
        max_output_tokens: raw.get("max_tokens").and_then(Value::as_u64),
        capabilities: ModelCapabilities {
            tools: None,
            thinking: supported("thinking"),
            images: supported("image_input"),
        },
        raw: raw.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ids_names_limits_and_capabilities() {
        let models = parse(
            br#"{"data":[{"capabilities":{"image_input":{"supported":true},"thinking":{"supported":false,"types":{}}},"created_at":"2025-02-19T00:00:00Z","display_name":"Claude Opus 4.7","id":"claude-opus-4-7","max_input_tokens":1000000,"max_tokens":128000,"type":"model"},{"id":"claude-3-haiku-20240307","display_name":"Claude Haiku 3","type":"model"},{"type":"model"}],"has_more":false}"#,
        )
        .unwrap();
        assert_eq!(models.len(), 2);
        let opus = &models[0];
        assert_eq!(opus.id, "claude-opus-4-7");
        assert_eq!(opus.display_name.as_deref(), Some("Claude Opus 4.7"));
        assert_eq!(opus.context_length, Some(1_000_000));
        assert_eq!(opus.max_output_tokens, Some(128_000));
        assert_eq!(opus.capabilities.images, Some(true));
        assert_eq!(opus.capabilities.thinking, Some(false));
        assert_eq!(opus.capabilities.tools, None);
        assert_eq!(opus.raw["created_at"], "2025-02-19T00:00:00Z");
        assert!(models[1].capabilities.is_unknown());
        assert_eq!(models[1].context_length, None);
    }

    #[test]
    fn a_body_without_data_is_an_error() {
        assert!(parse(b"not json").is_err());
        assert!(parse(br#"{"models":[]}"#).is_err());
    }
}
