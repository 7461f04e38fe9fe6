//! Encoding llama.cpp fill-in-the-middle request bodies (chat is encoded by
//! [`crate::protocols::openai_chat`]).
//!
//! - [`LlamaFim::Infill`] → `POST /infill` `{"input_prefix", "input_suffix", "stream", …}`,
//!   plus the request's other open files as `input_extra` (`[{"filename", "text"}]`) when
//!   there are any: the server wraps them in the model's own FIM tokens (and answers 501
//!   when the model has none).
//! - [`LlamaFim::Completion`] → `POST /completion` `{"prompt", "stream", …}` for models
//!   without FIM tokens. The prompt is the prefix alone (a plain continuation: the suffix
//!   cannot be expressed to such a model), unless a template is given: then every
//!   `{prefix}` and `{suffix}` in it is replaced, in one pass (text inside the prefix or
//!   suffix is never substituted again), e.g. `<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}
//!   <|fim_middle|>` for a model whose FIM tokens are written out as text.
//!
//! Both carry `n_predict` (max tokens), `temperature` and `model` (used by llama.cpp's
//! multi-model router, ignored by a single-model server); `extra` is merged last at the top
//! level (`stop`, `input_extra`, `cache_prompt`, samplers…).

use qore_core::ErrorInfo;
use serde_json::{json, Map, Value};

use crate::codec::FimRequest;
use crate::protocols::shared;

/// Which llama.cpp endpoint fill-in-the-middle requests go to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LlamaFim {
    /// `POST /infill`: for models with FIM tokens.
    #[default]
    Infill,
    /// `POST /completion`: for models without FIM tokens; the prompt is the prefix, or the
    /// template with `{prefix}` and `{suffix}` filled in.
    Completion {
        /// The prompt with `{prefix}` and `{suffix}` in it (`None`: the prefix alone).
        template: Option<String>,
    },
}

pub fn encode_fim(fim: &LlamaFim, request: &FimRequest<'_>) -> Result<Value, ErrorInfo> {
    let mut body = Map::new();
    match fim {
        LlamaFim::Infill => {
            body.insert("input_prefix".into(), json!(request.prefix));
            body.insert("input_suffix".into(), json!(request.suffix));
            if !request.extra.is_empty() {
                body.insert("input_extra".into(), json!(request.extra));
            }
        }
        LlamaFim::Completion { template } => {
            let prompt = match template {
                Some(template) => fill_template(template, request.prefix, request.suffix),
                None => request.prefix.to_owned(),
            };
            if prompt.is_empty() {
                return Err(ErrorInfo::validation(
                    "nothing to complete: the prompt built from the prefix is empty",
                ));
            }
            body.insert("prompt".into(), json!(prompt));
        }
    }
    if !request.model.is_empty() {
        body.insert("model".into(), json!(request.model));
    }
    let options = request.options;
    body.insert("stream".into(), json!(options.stream));
    Ok(shared::finish_body(body, options, "n_predict"))
}

/// `template` with each `{prefix}` and `{suffix}` replaced, in one left-to-right pass.
pub fn fill_template(template: &str, prefix: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(template.len() + prefix.len() + suffix.len());
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("{prefix}") {
            out.push_str(prefix);
            rest = after;
        } else if let Some(after) = tail.strip_prefix("{suffix}") {
            out.push_str(suffix);
            rest = after;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestOptions;

    fn request<'a>(options: &'a RequestOptions) -> FimRequest<'a> {
        FimRequest {
            model: "m",
            prefix: "def add(a, b):\n    return ",
            suffix: "\n\nprint(add(1, 2))\n",
            extra: &[],
            options,
        }
    }

    #[test]
    fn infill_carries_prefix_and_suffix() {
        let mut extra = Map::new();
        extra.insert("stop".into(), json!(["\n\n"]));
        let options = RequestOptions {
            max_tokens: Some(16),
            temperature: Some(0.0),
            extra,
            ..RequestOptions::default()
        };
        let body = encode_fim(&LlamaFim::Infill, &request(&options)).unwrap();
        assert_eq!(
            body,
            json!({
                "input_prefix": "def add(a, b):\n    return ",
                "input_suffix": "\n\nprint(add(1, 2))\n",
                "model": "m",
                "stream": true,
                "n_predict": 16,
                "temperature": 0.0,
                "stop": ["\n\n"],
            })
        );
    }

    #[test]
    fn completion_prompt_is_the_prefix_or_the_filled_template() {
        let options = RequestOptions::default();
        let plain = encode_fim(&LlamaFim::Completion { template: None }, &request(&options));
        let plain = plain.unwrap();
        assert_eq!(plain["prompt"], "def add(a, b):\n    return ");
        assert!(plain.get("input_suffix").is_none());
        let fim = LlamaFim::Completion {
            template: Some("<PRE>{prefix}<SUF>{suffix}<MID>".into()),
        };
        let body = encode_fim(&fim, &request(&options)).unwrap();
        assert_eq!(
            body["prompt"],
            "<PRE>def add(a, b):\n    return <SUF>\n\nprint(add(1, 2))\n<MID>"
        );
        let empty = FimRequest {
            model: "",
            prefix: "",
            suffix: "x",
            extra: &[],
            options: &options,
        };
        assert!(encode_fim(&LlamaFim::Completion { template: None }, &empty).is_err());
    }

    #[test]
    fn templates_fill_in_one_pass() {
        assert_eq!(
            fill_template("{prefix}|{suffix}", "{suffix}", "S"),
            "{suffix}|S"
        );
        assert_eq!(fill_template("{ {pre}{prefix}}", "P", ""), "{ {pre}P}");
        assert_eq!(fill_template("é{suffix}ü", "", "ß"), "éßü");
    }
}
