//! `GET {base}/models`: the OpenAI model listing, the same on every server that speaks the
//! Responses API (OpenAI, OpenRouter, llama.cpp), so it is read by the Chat Completions
//! parser: ids, context lengths and capabilities where the listing has them, each entry
//! kept whole in [`crate::ModelInfo::raw`].

use qore_core::ErrorInfo;

use crate::protocols::openai_chat;
use crate::ModelInfo;

pub fn parse(body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo> {
    openai_chat::models::parse(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_openai_listing() {
        let models =
            parse(br#"{"object":"list","data":[{"id":"gpt-5.4","owned_by":"system"}]}"#).unwrap();
        assert_eq!(models.len(), 1);
        assert_eq!(models[0].id, "gpt-5.4");
        assert_eq!(models[0].owned_by.as_deref(), Some("system"));
        assert!(parse(b"{}").is_err());
    }
}
