//! Probes of a llama.cpp server beside the chat wire: `GET /health` and `GET /props`.
//!
//! Both go through [`Client::get`] (credentials included) at `../health` and `../props`
//! relative to the base URL, i.e. at the server root whether the base is the root or ends
//! in `/v1` (see the module doc of [`super`]).
//!
//! Promises: [`health`] answers `Ok` for a server that is up (200) or still loading its model
//! (503: not ready, with the server's message); any other status is the server's error
//! envelope as an [`ErrorInfo`] (401/403 → Auth). [`props`] reads the fields a client
//! needs (model path and alias, context size, slots, build, tool and vision support) and
//! keeps the whole body in [`Props::raw`]; [`supports_tools`] is the chat template's tool
//! support, `None` when the server cannot tell. `/props` does not say whether the model has FIM
//! tokens (checked on build b10499 and the local xllamacpp build): `/infill` answering 501
//! is how a server says it has none.

use qore_core::{ErrorInfo, ProviderDetail};
use serde_json::Value;

use super::error;
use crate::Client;

/// What `GET /health` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// The model is loaded and requests are served.
    pub ready: bool,
    /// The HTTP status (200 when ready, 503 while loading).
    pub status: u16,
    /// `status` of a ready answer (`ok`), the error message of a loading one.
    pub message: Option<String>,
}

/// What `GET /props` said about the server and its model.
#[derive(Debug, Clone, PartialEq)]
pub struct Props {
    /// The model file the server loaded (`model_path`).
    pub model_path: Option<String>,
    /// The model's alias, when the server was given one.
    pub model_alias: Option<String>,
    /// Context size per slot (`default_generation_settings.n_ctx`).
    pub n_ctx: Option<u64>,
    /// How many requests the server runs at once (`total_slots`).
    pub total_slots: Option<u64>,
    /// The server's build (`build_info`).
    pub build_info: Option<String>,
    /// The chat template supports tools (`chat_template_caps.supports_tools`).
    pub tools: Option<bool>,
    /// The model takes images (`modalities.vision`).
    pub vision: Option<bool>,
    /// The body as received.
    pub raw: Value,
}

/// `GET /health`.
pub async fn health(client: &Client) -> Result<Health, ErrorInfo> {
    let (status, body) = client.get("../health").await?;
    let text = String::from_utf8_lossy(&body);
    let json = serde_json::from_str::<Value>(&text).ok();
    match status {
        200..=299 => Ok(Health {
            ready: true,
            status,
            message: json
                .as_ref()
                .and_then(|v| v.get("status"))
                .and_then(Value::as_str)
                .map(str::to_owned),
        }),
        503 => Ok(Health {
            ready: false,
            status,
            message: Some(error::from_http(status, &text).message),
        }),
        _ => Err(error::from_http(status, &text)),
    }
}

/// `GET /props`.
pub async fn props(client: &Client) -> Result<Props, ErrorInfo> {
    let (status, body) = client.get("../props").await?;
    let text = String::from_utf8_lossy(&body);
    if !(200..300).contains(&status) {
        return Err(error::from_http(status, &text));
    }
    parse_props(&text)
}

/// Whether the server's chat template takes tool definitions (`/props`
/// `chat_template_caps.supports_tools`); `None` when `/props` cannot be read or does not say.
/// A template without tool support drops the definitions a request carries (the local
/// SmolLM2 server does), so such a model can only use tools described in its prompt.
pub async fn supports_tools(client: &Client) -> Option<bool> {
    props(client).await.ok()?.tools
}

/// The fields of a `/props` body.
pub fn parse_props(body: &str) -> Result<Props, ErrorInfo> {
    let raw: Value =
        match serde_json::from_str(body) {
            Ok(value @ Value::Object(_)) => value,
            _ => {
                return Err(ErrorInfo::provider("llama.cpp /props is not a JSON object")
                    .with_detail(ProviderDetail {
                        status: None,
                        error_type: None,
                        body: Some(body.to_owned()),
                    }))
            }
        };
    let text = |pointer: &str| {
        raw.pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let number = |pointer: &str| raw.pointer(pointer).and_then(Value::as_u64);
    let flag = |pointer: &str| raw.pointer(pointer).and_then(Value::as_bool);
    Ok(Props {
        model_path: text("/model_path"),
        model_alias: text("/model_alias"),
        n_ctx: number("/default_generation_settings/n_ctx"),
        total_slots: number("/total_slots"),
        build_info: text("/build_info"),
        tools: flag("/chat_template_caps/supports_tools"),
        vision: flag("/modalities/vision"),
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_a_client_needs() {
        let props = parse_props(
            r#"{"model_alias":"smollm2","model_path":"/m/SmolLM2.gguf","total_slots":1,
                "default_generation_settings":{"n_ctx":4096,"params":{"n_predict":-1}},
                "modalities":{"vision":false},"build_info":"b1",
                "chat_template_caps":{"supports_tools":true}}"#,
        )
        .unwrap();
        assert_eq!(props.model_alias.as_deref(), Some("smollm2"));
        assert_eq!(props.model_path.as_deref(), Some("/m/SmolLM2.gguf"));
        assert_eq!(props.n_ctx, Some(4096));
        assert_eq!(props.total_slots, Some(1));
        assert_eq!(props.build_info.as_deref(), Some("b1"));
        assert_eq!(props.tools, Some(true));
        assert_eq!(props.vision, Some(false));
        let bare = parse_props("{}").unwrap();
        assert_eq!((bare.n_ctx, bare.tools), (None, None));
        assert!(parse_props("[1]").is_err());
        assert!(parse_props("nope").is_err());
    }
}
