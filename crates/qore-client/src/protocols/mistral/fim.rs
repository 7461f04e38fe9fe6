//! Encoding a Mistral fill-in-the-middle request: `{"model", "prompt" (the prefix),
//! "suffix", "stream", "max_tokens", "temperature"}`, with `extra` merged last at the top
//! level (`stop`, `min_tokens`, `top_p`, `random_seed`…). The suffix is always sent (empty
//! means "complete at the end").

use qore_core::ErrorInfo;
use serde_json::{json, Map, Value};

use crate::codec::FimRequest;
use crate::protocols::shared;

pub fn encode(request: &FimRequest<'_>) -> Result<Value, ErrorInfo> {
    if request.model.is_empty() {
        return Err(ErrorInfo::config("no model given for the request"));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("prompt".into(), json!(request.prefix));
    body.insert("suffix".into(), json!(request.suffix));
    let options = request.options;
    body.insert("stream".into(), json!(options.stream));
    Ok(shared::finish_body(body, options, "max_tokens"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestOptions;

    #[test]
    fn encodes_prefix_as_prompt_and_keeps_the_suffix() {
        let mut extra = Map::new();
        extra.insert("stop".into(), json!(["\n\n"]));
        let options = RequestOptions {
            max_tokens: Some(32),
            temperature: Some(0.0),
            extra,
            ..RequestOptions::default()
        };
        let request = FimRequest {
            model: "codestral-latest",
            prefix: "def fib(n):",
            suffix: "    return a",
            extra: &[],
            options: &options,
        };
        assert_eq!(
            encode(&request).unwrap(),
            json!({
                "model": "codestral-latest",
                "prompt": "def fib(n):",
                "suffix": "    return a",
                "stream": true,
                "max_tokens": 32,
                "temperature": 0.0,
                "stop": ["\n\n"],
            })
        );
        let anonymous = FimRequest {
            model: "",
            ..request
        };
        assert!(encode(&anonymous).is_err());
    }
}
