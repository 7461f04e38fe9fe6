//! The streamable HTTP transport of a server with a `url`.
//!
//! Promises: header names and values that HTTP does not allow are errors naming the header;
//! `bearer_token_env_var` names a variable that must be set (its value is sent as
//! `Authorization: Bearer …`, never logged); TLS is rustls on ring, installed once as the
//! process's provider when none is.

use std::collections::{BTreeMap, HashMap};

use http::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;

/// The transport for `url` (see the module doc).
pub fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
    bearer_token_env_var: Option<&str>,
) -> Result<
    StreamableHttpClientTransport<
        impl rmcp::transport::streamable_http_client::StreamableHttpClient,
    >,
    String,
> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|err| format!("header name {name:?}: {err}"))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|err| format!("header {name}: its value is not allowed in HTTP: {err}"))?;
        custom.insert(header, value);
    }
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(custom);
    if let Some(var) = bearer_token_env_var {
        let token = std::env::var(var)
            .ok()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                format!("environment variable {var} (bearer_token_env_var) is not set")
            })?;
        config = config.auth_header(token);
    }
    Ok(StreamableHttpClientTransport::from_config(config))
}
