//! Encoding a Mistral fill-in-the-middle request: `{"model", "prompt" (the prefix),
//! "suffix", "stream", "max_tokens", "temperature"}`, with `extra` merged last at the top
//! level (`stop`, `min_tokens`, `top_p`, `random_seed`…). The suffix is always sent (empty
//! means "complete at the end").

use qore_core::ErrorInfo;
use serde_json::{json, Value};

use crate::codec::FimRequest;
use crate::protocols::shared;

pub fn encode(request: &FimRequest<'_>) -> Result<Value, ErrorInfo> {
    let mut body = shared::fim_prompt_body(request)?;
    let options = request.options;
    body.insert("stream".into(), json!(options.stream));
    Ok(shared::finish_body(body, options, "max_tokens"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::test_support::{fim_options, fim_request};

    #[test]
    fn encodes_prefix_as_prompt_and_keeps_the_suffix() {
        let options = fim_options(&[("stop", json!(["\n\n"]))]);
        assert_eq!(
            encode(&fim_request("codestral-latest", &options)).unwrap(),
            json!({
                "model": "codestral-latest",
                "prompt": "def add(a, b):\n    return ",
                "suffix": "\n",
                "stream": true,
                "max_tokens": 32,
                "temperature": 0.0,
                "stop": ["\n\n"],
            })
        );
        assert!(encode(&fim_request("", &options)).is_err());
    }
}
