//! `GET {base}/api/tags`: `{"models": [{"name", "model", "size", "digest",
//! "details": {"family", "families", "parameter_size", "quantization_level", …}}]}`.
//!
//! The id is `name` (what `/api/chat` takes), else `model`. The listing says nothing about
//! context length or tools; `display_name` spells out the family, parameter size and
//! quantization (`qwen3:4b (qwen3, 4.0B, Q4_K_M)`), and a model whose families include
//! `clip` (a vision projector) is marked as taking images. Every entry is kept whole in
//! [`ModelInfo::raw`].

use qore_core::ErrorInfo;
use serde_json::Value;

use crate::{ModelCapabilities, ModelInfo};

pub fn parse(body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| ErrorInfo::provider(format!("model listing is not JSON: {err}")))?;
    let Some(entries) = value.get("models").and_then(Value::as_array) else {
        return Err(ErrorInfo::provider(
            "Ollama model listing has no `models` array",
        ));
    };
    Ok(entries.iter().filter_map(entry).collect())
}

fn entry(raw: &Value) -> Option<ModelInfo> {
    let id = ["name", "model"]
        .iter()
        .find_map(|key| raw.get(*key).and_then(Value::as_str))
        .filter(|id| !id.is_empty())?;
    let details = raw.get("details");
    let detail = |key: &str| {
        details
            .and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let facts: Vec<&str> = ["family", "parameter_size", "quantization_level"]
        .iter()
        .filter_map(|key| detail(key))
        .collect();
    let display_name = (!facts.is_empty()).then(|| format!("{id} ({})", facts.join(", ")));
    let has_projector = details
        .and_then(|d| d.get("families"))
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|f| f.as_str() == Some("clip")));
    Some(ModelInfo {
        id: id.to_owned(),
        display_name,
        owned_by: None,
        context_length: None,
        max_output_tokens: None,
        capabilities: ModelCapabilities {
            images: has_projector.then_some(true),
            ..ModelCapabilities::default()
        },
        raw: raw.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_names_and_details() {
        let models = parse(
            br#"{"models":[
              {"name":"qwen3:4b","model":"qwen3:4b","details":{"family":"qwen3","families":["qwen3"],"parameter_size":"4.0B","quantization_level":"Q4_K_M"}},
              {"model":"llava:latest","details":{"family":"llama","families":["llama","clip"]}},
              {"name":"","model":""},
              {"name":"bare"}
            ]}"#,
        )
        .unwrap();
        let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["qwen3:4b", "llava:latest", "bare"]);
        assert_eq!(
            models[0].display_name.as_deref(),
            Some("qwen3:4b (qwen3, 4.0B, Q4_K_M)")
        );
        assert_eq!(models[0].capabilities.images, None);
        assert_eq!(models[1].capabilities.images, Some(true));
        assert_eq!(models[2].display_name, None);
        assert_eq!(models[0].raw["details"]["family"], "qwen3");
    }

    #[test]
    fn rejects_bodies_that_are_not_a_listing() {
        assert!(parse(b"nope").is_err());
        assert!(parse(br#"{"data":[]}"#).is_err());
    }
}
