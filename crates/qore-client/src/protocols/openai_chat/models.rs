//! `GET {base}/models`: `{"object": "list", "data": [{"id", "owned_by", ...}]}`.
//!
//! llama.cpp adds `meta.n_ctx` (the context the server runs with: the context length) and
//! `meta.n_ctx_train` (what the model was trained for: used when `n_ctx` is absent); OpenRouter and Mistral add `context_length` /
//! `max_context_length`. Every entry is kept whole in [`ModelInfo::raw`].

use qore_core::ErrorInfo;
use serde_json::Value;

use crate::{ModelCapabilities, ModelInfo};

pub fn parse(body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| ErrorInfo::provider(format!("model listing is not JSON: {err}")))?;
    let entries = match value.get("data").or_else(|| value.get("models")) {
        Some(Value::Array(entries)) => entries,
        _ => match &value {
            Value::Array(entries) => entries,
            _ => {
                return Err(ErrorInfo::provider(
                    "model listing has no `data` array".to_owned(),
                ))
            }
        },
    };
    Ok(entries.iter().filter_map(entry).collect())
}

fn entry(raw: &Value) -> Option<ModelInfo> {
    let id = raw
        .get("id")
        .or_else(|| raw.get("name"))
        .or_else(|| raw.get("model"))?
        .as_str()?
        .to_owned();
    let context_length = ["context_length", "max_context_length", "context_window"]
        .iter()
        .find_map(|key| raw.get(*key).and_then(Value::as_u64))
        .or_else(|| raw.pointer("/meta/n_ctx").and_then(Value::as_u64))
        .or_else(|| raw.pointer("/meta/n_ctx_train").and_then(Value::as_u64))
        .or_else(|| {
            raw.pointer("/top_provider/context_length")
                .and_then(Value::as_u64)
        });
    Some(ModelInfo {
        id,
        owned_by: raw
            .get("owned_by")
            .and_then(Value::as_str)
            .map(str::to_owned),
        context_length,
        max_output_tokens: raw
            .pointer("/top_provider/max_completion_tokens")
            .and_then(Value::as_u64),
        display_name: raw.get("name").and_then(Value::as_str).map(str::to_owned),
        capabilities: capabilities(raw),
        raw: raw.clone(),
    })
}

/// OpenRouter: `supported_parameters` and `architecture.input_modalities`; Mistral:
/// `capabilities.{function_calling, vision}`.
fn capabilities(raw: &Value) -> ModelCapabilities {
    let params: Option<Vec<&str>> = raw
        .get("supported_parameters")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect());
    let modalities: Option<Vec<&str>> = raw
        .pointer("/architecture/input_modalities")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect());
    let flag = |key: &str| raw.pointer(key).and_then(Value::as_bool);
    ModelCapabilities {
        tools: params
            .as_ref()
            .map(|p| p.contains(&"tools"))
            .or_else(|| flag("/capabilities/function_calling")),
        thinking: params
            .as_ref()
            .map(|p| p.contains(&"reasoning"))
            .or_else(|| flag("/capabilities/reasoning")),
        images: modalities
            .map(|m| m.contains(&"image"))
            .or_else(|| flag("/capabilities/vision")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ids_and_context_lengths() {
        let models = parse(
            br#"{"object":"list","data":[{"id":"a","owned_by":"me","meta":{"n_ctx_train":8192}},{"id":"b","max_context_length":32000},{"no_id":true},{"id":"llama","meta":{"n_ctx":4096,"n_ctx_train":8192}}]}"#,
        )
        .unwrap();
        assert_eq!(models.len(), 3);
        assert_eq!(
            models[2].context_length,
            Some(4096),
            "the server's, not the training's"
        );
        assert_eq!(models[0].id, "a");
        assert_eq!(models[0].owned_by.as_deref(), Some("me"));
        assert_eq!(models[0].context_length, Some(8192));
        assert_eq!(models[1].context_length, Some(32000));
        assert!(parse(b"not json").is_err());
    }

    #[test]
    fn reads_capabilities_where_the_listing_has_them() {
        let models = parse(
            br#"{"data":[{"id":"r","supported_parameters":["tools","temperature"],"architecture":{"input_modalities":["text","image"]}},{"id":"m","capabilities":{"function_calling":false,"vision":true}},{"id":"plain"}]}"#,
        )
        .unwrap();
        assert_eq!(models[0].capabilities.tools, Some(true));
        assert_eq!(models[0].capabilities.thinking, Some(false));
        assert_eq!(models[0].capabilities.images, Some(true));
        assert_eq!(models[1].capabilities.tools, Some(false));
        assert_eq!(models[1].capabilities.images, Some(true));
        assert!(models[2].capabilities.is_unknown());
    }
}
