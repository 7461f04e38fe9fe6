//! Provider instances: a name, a wire protocol, a base URL, where the key comes from, extra
//! headers, timeouts and retries. `providers/*.toml` in the config dir override the
//! built-in instances by name.
//!
//! Promises:
//! - a key is never stored in an instance, only where to get it ([`KeySource`]): an
//!   environment variable, a file, or the OS keyring; it is read when a client is built,
//!   and no error, log line or `Debug`/`show` output contains it;
//! - a missing key is an `Auth` error naming where it was looked for (the variable, the
//!   file, the keyring entry), not the key;
//! - the built-in instances cover the well-known vendors with their documented base URLs
//!   and usual variables; Ollama's honours `OLLAMA_HOST` (with or without a scheme).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use qore_client::{ClientConfig, RetryPolicy, Timeouts};
use qore_core::ErrorInfo;
use serde::{Deserialize, Serialize};

use crate::error::AgentError;

/// Where an instance's key comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// No key (local servers).
    None,
    Env(String),
    File(PathBuf),
    Keyring {
        service: String,
        user: String,
    },
}

/// One provider instance.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderInstance {
    pub name: String,
    pub protocol: String,
    pub url: String,
    pub key: KeySource,
    pub headers: BTreeMap<String, String>,
    pub connect_timeout: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub retry: Option<RetryPolicy>,
    /// The file it was read from, or `<built-in>`.
    pub source: PathBuf,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceFile {
    name: String,
    protocol: String,
    url: String,
    api_key_env: Option<String>,
    api_key_file: Option<PathBuf>,
    keyring: Option<KeyringEntry>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    connect_timeout_secs: Option<f64>,
    idle_timeout_secs: Option<f64>,
    retry: Option<RetryFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyringEntry {
    #[serde(default = "default_service")]
    service: String,
    user: String,
}

fn default_service() -> String {
    "qore".to_owned()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryFile {
    max_attempts: u32,
    initial_delay_ms: Option<u64>,
    max_delay_ms: Option<u64>,
}

/// (name, protocol, base URL, key variable).
const BUILT_IN: &[(&str, &str, &str, Option<&str>)] = &[
    (
        "anthropic",
        "anthropic",
        "https://api.anthropic.com",
        Some("ANTHROPIC_API_KEY"),
    ),
    (
        "openai",
        "openai-chat",
        "https://api.openai.com/v1",
        Some("OPENAI_API_KEY"),
    ),
    (
        "openai-responses",
        "openai-responses",
        "https://api.openai.com/v1",
        Some("OPENAI_API_KEY"),
    ),
    (
        "gemini",
        "gemini",
        "https://generativelanguage.googleapis.com",
        Some("GEMINI_API_KEY"),
    ),
    (
        "mistral",
        "mistral",
        "https://api.mistral.ai/v1",
        Some("MISTRAL_API_KEY"),
    ),
    (
        "codestral",
        "mistral",
        "https://codestral.mistral.ai/v1",
        Some("CODESTRAL_API_KEY"),
    ),
    (
        "openrouter",
        "openai-chat",
        "https://openrouter.ai/api/v1",
        Some("OPENROUTER_API_KEY"),
    ),
    (
        "deepseek",
        "openai-chat",
        "https://api.deepseek.com",
        Some("DEEPSEEK_API_KEY"),
    ),
    ("llamacpp", "llamacpp", "http://127.0.0.1:8080/v1", None),
    ("lmstudio", "openai-chat", "http://127.0.0.1:1234/v1", None),
    (
        "lmstudio-responses",
        "openai-responses",
        "http://127.0.0.1:1234/v1",
        None,
    ),
];

/// The built-in instances (Ollama's URL from `OLLAMA_HOST`, the local model server's
/// from its configured port).
pub fn built_in() -> Vec<ProviderInstance> {
    let mut out: Vec<ProviderInstance> = BUILT_IN
        .iter()
        .map(|(name, protocol, url, env)| instance(name, protocol, url, *env))
        .collect();
    out.push(instance(
        "ollama",
        "ollama",
        &ollama_url(std::env::var("OLLAMA_HOST").ok().as_deref()),
        None,
    ));
    out.push(instance(
        "local",
        "openai-chat",
        &qore_client::local::base_url(),
        None,
    ));
    out
}

fn instance(name: &str, protocol: &str, url: &str, env: Option<&str>) -> ProviderInstance {
    ProviderInstance {
        name: name.to_owned(),
        protocol: protocol.to_owned(),
        url: url.to_owned(),
        key: env.map_or(KeySource::None, |v| KeySource::Env(v.to_owned())),
        headers: BTreeMap::new(),
        connect_timeout: None,
        idle_timeout: None,
        retry: None,
        source: PathBuf::from("<built-in>"),
    }
}

/// Ollama's base URL from `OLLAMA_HOST` (`host`, `host:port` or a URL).
pub fn ollama_url(host: Option<&str>) -> String {
    match host.map(str::trim).filter(|h| !h.is_empty()) {
        None => "http://127.0.0.1:11434".to_owned(),
        Some(h) if h.contains("://") => h.trim_end_matches('/').to_owned(),
        Some(h) if h.contains(':') => format!("http://{h}"),
        Some(h) => format!("http://{h}:11434"),
    }
}

impl ProviderInstance {
    /// Parse a `providers/*.toml` file.
    pub fn parse(path: &Path, text: &str) -> Result<ProviderInstance, AgentError> {
        let file: InstanceFile =
            toml::from_str(text).map_err(|err| AgentError::toml(path, text, &err))?;
        if qore_client::protocols::by_name(&file.protocol).is_none() {
            return Err(AgentError::Profile {
                file: path.to_owned(),
                line: None,
                message: format!("unknown protocol {:?}", file.protocol),
            });
        }
        let sources = [
            file.api_key_env.clone().map(KeySource::Env),
            file.api_key_file.clone().map(KeySource::File),
            (file.keyring.as_ref()).map(|k| KeySource::Keyring {
                service: k.service.clone(),
                user: k.user.clone(),
            }),
        ];
        let mut given = sources.into_iter().flatten();
        let key = given.next().unwrap_or(KeySource::None);
        if given.next().is_some() {
            return Err(AgentError::Profile {
                file: path.to_owned(),
                line: None,
                message: "give one of api_key_env, api_key_file and keyring".to_owned(),
            });
        }
        let secs = |s: Option<f64>| {
            s.filter(|s| s.is_finite() && *s > 0.0)
                .map(Duration::from_secs_f64)
        };
        Ok(ProviderInstance {
            name: file.name,
            protocol: file.protocol,
            url: file.url,
            key,
            headers: file.headers,
            connect_timeout: secs(file.connect_timeout_secs),
            idle_timeout: secs(file.idle_timeout_secs),
            retry: file.retry.map(|r| {
                let defaults = RetryPolicy::default();
                RetryPolicy {
                    max_attempts: r.max_attempts.max(1),
                    initial_delay: r
                        .initial_delay_ms
                        .map_or(defaults.initial_delay, Duration::from_millis),
                    max_delay: r
                        .max_delay_ms
                        .map_or(defaults.max_delay, Duration::from_millis),
                }
            }),
            source: path.to_owned(),
        })
    }

    /// The key, read now from its source; `Ok(None)` for instances without one.
    pub fn api_key(&self) -> Result<Option<String>, ErrorInfo> {
        let missing = |where_: String| {
            ErrorInfo::auth(format!("no API key for provider {:?}: {where_}", self.name))
        };
        match &self.key {
            KeySource::None => Ok(None),
            KeySource::Env(var) => match std::env::var(var) {
                Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_owned())),
                _ => Err(missing(format!("set the environment variable {var}"))),
            },
            KeySource::File(path) => match std::fs::read_to_string(path) {
                Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_owned())),
                Ok(_) => Err(missing(format!("{} is empty", path.display()))),
                Err(err) => Err(missing(format!("cannot read {}: {err}", path.display()))),
            },
            KeySource::Keyring { service, user } => crate::os_keyring::read(service, user)
                .map(Some)
                .map_err(missing),
        }
    }

    /// A client configuration for this instance; `endpoint` overrides the request path.
    pub fn client_config(&self, endpoint: Option<String>) -> Result<ClientConfig, ErrorInfo> {
        let mut timeouts = Timeouts::default();
        if let Some(t) = self.connect_timeout {
            timeouts.connect = t;
        }
        if let Some(t) = self.idle_timeout {
            timeouts.idle = t;
        }
        Ok(ClientConfig {
            base_url: self.url.clone(),
            endpoint,
            api_key: self.api_key()?,
            headers: self.headers.clone().into_iter().collect(),
            timeouts,
            retry: self.retry.unwrap_or_default(),
        })
    }
}

/// Every instance: built-ins, then `providers/*.toml` replacing them by name.
#[derive(Debug, Default)]
pub struct Providers {
    instances: BTreeMap<String, ProviderInstance>,
    pub errors: Vec<AgentError>,
}

impl Providers {
    pub fn load(user_dir: Option<&Path>) -> Providers {
        let mut providers = Providers::default();
        for instance in built_in() {
            providers.instances.insert(instance.name.clone(), instance);
        }
        let Some(dir) = user_dir.filter(|d| d.is_dir()) else {
            return providers;
        };
        let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect(),
            Err(err) => {
                providers.errors.push(AgentError::Io {
                    path: dir.to_owned(),
                    message: err.to_string(),
                });
                return providers;
            }
        };
        paths.sort();
        for path in paths {
            let parsed = std::fs::read_to_string(&path)
                .map_err(|err| AgentError::Io {
                    path: path.clone(),
                    message: err.to_string(),
                })
                .and_then(|text| ProviderInstance::parse(&path, &text));
            match parsed {
                Ok(instance) => {
                    providers.instances.insert(instance.name.clone(), instance);
                }
                Err(err) => providers.errors.push(err),
            }
        }
        providers
    }

    pub fn get(&self, name: &str) -> Option<&ProviderInstance> {
        self.instances.get(name)
    }

    pub fn all(&self) -> impl Iterator<Item = &ProviderInstance> {
        self.instances.values()
    }
}

#[cfg(test)]
#[path = "providers_tests.rs"]
mod tests;
