//! The rules a model server sets for requests to it, as its `GET /props` says them, never
//! as its provider is named. Asked of the local server (llama.cpp's, at its address), and of
//! any other when the caller probes it and its wire's servers answer `/props`
//! ([`qore_client::Protocol::server_props`]).
//!
//! Promises: a server whose default output cap is none (`n_predict` -1) gets requests capped
//! at [`local::DEFAULT_MAX_TOKENS`] unless the caller sets a cap (a small model can ramble
//! for minutes); its chat template's tool support and its context size are what `/props`
//! says. A server that is not asked, or does not answer, sets no rule.

use qore_client::protocols::llamacpp::{self, Props};
use qore_client::{local, Client};

/// What a server's `/props` says requests to it follow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerRules {
    /// The server's own default is no output cap.
    pub uncapped: bool,
    /// The chat template takes tool definitions; `None`: not said.
    pub tools: Option<bool>,
    /// The context size per slot; `None`: not said.
    pub context_window: Option<u64>,
}

impl ServerRules {
    /// The rules of the server `client` reaches: asked when it is the `local` server, or when
    /// `probe` and its wire's servers answer `/props`; none when it is not asked or does not
    /// answer.
    pub async fn of(client: &Client, local: bool, probe: bool) -> ServerRules {
        if !(local || probe && client.protocol().server_props()) {
            return ServerRules::default();
        }
        match llamacpp::props(client).await {
            Ok(props) => ServerRules::from_props(&props),
            Err(_) => ServerRules::default(),
        }
    }

    /// The rules `props` says.
    pub fn from_props(props: &Props) -> ServerRules {
        let n_predict = |pointer: &str| props.raw.pointer(pointer).and_then(|v| v.as_i64());
        let default_cap = n_predict("/default_generation_settings/params/n_predict")
            .or_else(|| n_predict("/default_generation_settings/n_predict"));
        ServerRules {
            uncapped: default_cap.is_some_and(|n| n < 0),
            tools: props.tools,
            context_window: props.n_ctx,
        }
    }

    /// The output cap of a request: the one asked for, else the server's rule.
    pub fn max_tokens(&self, requested: Option<u32>) -> Option<u32> {
        local::max_tokens(requested, self.uncapped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn props_set_the_cap_the_tools_and_the_context() {
        // (the /props body, the rules)
        let cases = [
            (
                r#"{"default_generation_settings":{"n_ctx":4096,"params":{"n_predict":-1}},
                    "chat_template_caps":{"supports_tools":false}}"#,
                (true, Some(false), Some(4096)),
            ),
            (
                r#"{"default_generation_settings":{"n_ctx":8192,"n_predict":256}}"#,
                (false, None, Some(8192)),
            ),
            (
                r#"{"default_generation_settings":{"n_predict":-1}}"#,
                (true, None, None),
            ),
            ("{}", (false, None, None)),
        ];
        for (body, (uncapped, tools, context_window)) in cases {
            let props = llamacpp::parse_props(body).unwrap();
            let expected = ServerRules {
                uncapped,
                tools,
                context_window,
            };
            assert_eq!(ServerRules::from_props(&props), expected, "{body}");
        }
        let rules = ServerRules {
            uncapped: true,
            ..ServerRules::default()
        };
        assert_eq!(rules.max_tokens(None), Some(local::DEFAULT_MAX_TOKENS));
        assert_eq!(rules.max_tokens(Some(9)), Some(9));
        assert_eq!(ServerRules::default().max_tokens(None), None);
    }
}
