//! Reaching `provider/model` without an agent: the provider instance's wire, URL, key and
//! headers (built-in vendors, `providers/*.toml`), the model as named, the wire's own request
//! encoder. This is how `qore serve` answers a request whose `model` is not an agent.
//!
//! Promises: an unknown provider is a config error naming the known ones; the local model
//! server is started when needed and `local/default` names its one model; requests carry the
//! output cap the server's `/props` asks for ([`ServerRules`]), as `qore run`'s do.

use qore_agents::config::Config;
use qore_client::protocols;
use qore_client::{local, Client, RequestOptions};
use qore_core::ErrorInfo;

use crate::server_rules::ServerRules;
use crate::target::doing;
use crate::Target;

/// The provider and model of a `provider/model` name, split at the first `/` (a model id may
/// hold more slashes: `openrouter/meta-llama/llama-3`). `None` without a slash.
pub fn split_provider_model(name: &str) -> Option<(&str, &str)> {
    let (provider, model) = name.split_once('/')?;
    (!provider.is_empty() && !model.is_empty()).then_some((provider, model))
}

/// A ready target for `model` at the provider instance named `provider`.
pub async fn reach_provider(
    config: &Config,
    provider: &str,
    model: &str,
) -> Result<Target, ErrorInfo> {
    let instance = config.providers.get(provider).ok_or_else(|| {
        let known: Vec<&str> = config.providers.all().map(|p| p.name.as_str()).collect();
        ErrorInfo::config(format!(
            "unknown provider {provider:?} (known: {})",
            known.join(", ")
        ))
    })?;
    let protocol = protocols::by_name(&instance.protocol).ok_or_else(|| {
        ErrorInfo::config(format!(
            "provider {provider:?} names an unknown protocol {:?}",
            instance.protocol
        ))
    })?;
    let is_local = instance.url == local::base_url();
    if is_local {
        local::ensure_running()
            .await
            .map_err(|e| doing("starting the local model server", e))?;
    }
    let client = Client::new(protocol, instance.client_config(None)?)?;
    let model = match (is_local, model) {
        (true, "default") => local::MODEL_ID.to_owned(),
        _ => model.to_owned(),
    };
    let rules = ServerRules::of(&client, is_local, false).await;
    let options = RequestOptions {
        max_tokens: rules.max_tokens(None),
        ..RequestOptions::default()
    };
    Ok(Target {
        client,
        model,
        tool_calling: None,
        agent: None,
        local: is_local,
        options,
        system: None,
        context_window: rules.context_window,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_the_first_slash() {
        let cases = [
            (
                "anthropic/claude-sonnet-4-5",
                Some(("anthropic", "claude-sonnet-4-5")),
            ),
            (
                "openrouter/meta/llama-3",
                Some(("openrouter", "meta/llama-3")),
            ),
            ("local/default", Some(("local", "default"))),
            ("claude-chat", None),
            ("/x", None),
            ("x/", None),
        ];
        for (name, want) in cases {
            assert_eq!(split_provider_model(name), want, "{name}");
        }
    }
}
