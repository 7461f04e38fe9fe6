//! Provider instances: a name, a wire protocol, a base URL, where the key comes from, extra
//! headers, timeouts and retries. `providers/*.toml` in the config dir override the
//! built-in instances by name. A file gives the wire as `protocol` (qore's names) or
//! `client_api` (the seed's, see [`crate::provider_names`]), and its key as `api_key_env`,
//! `api_key_file`, `keyring` or `api_key_ref` (one of them).
//!
//! Promises:
//! - a key is never stored in an instance, only where to get it ([`KeySource`]): an
//!   environment variable, a file, or the OS keyring; it is read when a client is built,
//!   and no error, log line or `Debug`/`show` output contains it;
//! - a missing key is an `Auth` error naming where it was looked for (the variable, the
//!   file, the keyring entry), not the key;
//! - [`Providers::get`] finds an instance by its `name` or an alias (a file's stem, a
//!   built-in's display name such as `"Claude"`), the user's files before the built-ins,
//!   else by the loose form of those ([`name_key`]) when only one instance has it (several:
//!   none, as for agents, [`only_loose_match`]);
//! - the built-in instances cover the well-known vendors with their documented base URLs
//!   and usual variables; Ollama's honours `OLLAMA_HOST` (with or without a scheme).
//!
//! A file's mistakes (an unknown protocol or `client_api`, two key sources) name its line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use qore_client::{ClientConfig, RetryPolicy, Timeouts};
use qore_core::ErrorInfo;
use serde::Deserialize;

use crate::error::AgentError;
pub use crate::provider_names::KeySource;
use crate::provider_names::{key_line, key_ref, name_key, only_loose_match, protocol_of, BUILT_IN};

/// One provider instance.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderInstance {
    /// The instance's name, what profiles' `provider` refers to.
    pub name: String,
    /// The wire protocol it speaks (`openai-chat`, `anthropic`, ...).
    pub protocol: String,
    /// The base URL as the provider documents it.
    pub url: String,
    /// Where its API key comes from.
    pub key: KeySource,
    /// Extra headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// The connect timeout (`None`: the client's default).
    pub connect_timeout: Option<Duration>,
    /// The longest silence allowed while an answer streams (`None`: the client's default).
    pub idle_timeout: Option<Duration>,
    /// When requests are sent again (`None`: the client's default).
    pub retry: Option<RetryPolicy>,
    /// The file it was read from, or `<built-in>`.
    pub source: PathBuf,
    /// Other names it is found by: a file's stem, a built-in's display name.
    pub aliases: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceFile {
    name: String,
    protocol: Option<String>,
    client_api: Option<String>,
    url: String,
    api_key_ref: Option<String>,
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

impl RetryFile {
    fn policy(self) -> RetryPolicy {
        let defaults = RetryPolicy::default();
        let ms = |ms: Option<u64>, default| ms.map_or(default, Duration::from_millis);
        RetryPolicy {
            max_attempts: self.max_attempts.max(1),
            initial_delay: ms(self.initial_delay_ms, defaults.initial_delay),
            max_delay: ms(self.max_delay_ms, defaults.max_delay),
        }
    }
}

/// The `source` of the built-in instances.
pub const BUILT_IN_SOURCE: &str = "<built-in>";

/// The built-in instances (Ollama's URL from `OLLAMA_HOST`, the local model server's
/// from its configured port).
pub fn built_in() -> Vec<ProviderInstance> {
    let mut out: Vec<ProviderInstance> = BUILT_IN
        .iter()
        .map(|(name, display, protocol, url, env)| {
            let mut instance = instance(name, protocol, url, *env);
            instance.aliases.push((*display).to_owned());
            instance
        })
        .collect();
    let ollama = ollama_url(std::env::var("OLLAMA_HOST").ok().as_deref());
    let mut ollama = instance("ollama", "ollama", &ollama, None);
    ollama.aliases.push("Ollama (Native)".to_owned());
    out.push(ollama);
    // The local server is llama.cpp's: chat as Chat Completions, and its native /infill
    // answers decoded as llama.cpp's (what the `local-completion` agent asks).
    out.push(instance(
        "local",
        "llamacpp",
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
        source: PathBuf::from(BUILT_IN_SOURCE),
        aliases: Vec::new(),
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
        let fail = |key: &str, message: String| AgentError::Profile {
            file: path.to_owned(),
            line: key_line(text, key),
            message,
        };
        let protocol = match (&file.protocol, &file.client_api) {
            (Some(_), Some(_)) => {
                let message = "give one of protocol and client_api".to_owned();
                return Err(fail("client_api", message));
            }
            (Some(protocol), None) => protocol.clone(),
            (None, Some(api)) => protocol_of(api).map_err(|m| fail("client_api", m))?.into(),
            (None, None) => return Err(fail("name", "no protocol (or client_api)".into())),
        };
        if qore_client::protocols::by_name(&protocol).is_none() {
            return Err(fail("protocol", format!("unknown protocol {protocol:?}")));
        }
        let key_ref = (file.api_key_ref.as_deref())
            .map(key_ref)
            .transpose()
            .map_err(|m| fail("api_key_ref", m))?;
        let sources = [
            key_ref,
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
            let message = "give one of api_key_ref, api_key_env, api_key_file and keyring";
            return Err(fail("name", message.to_owned()));
        }
        let secs = |s: Option<f64>| {
            s.filter(|s| s.is_finite() && *s > 0.0)
                .map(Duration::from_secs_f64)
        };
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        Ok(ProviderInstance {
            aliases: stem.into_iter().filter(|s| *s != file.name).collect(),
            name: file.name,
            protocol,
            url: file.url,
            key,
            headers: file.headers,
            connect_timeout: secs(file.connect_timeout_secs),
            idle_timeout: secs(file.idle_timeout_secs),
            retry: file.retry.map(RetryFile::policy),
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
    /// Instances that could not be loaded, each naming its file and line.
    pub errors: Vec<AgentError>,
}

impl Providers {
    /// The bundled instances, then `providers.toml` in `user_dir` over them (when given and present).
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

    /// The instance called `name` (see the module doc for the order).
    pub fn get(&self, name: &str) -> Option<&ProviderInstance> {
        let built_in = |i: &&ProviderInstance| i.source == Path::new(BUILT_IN_SOURCE);
        let mut user_first: Vec<&ProviderInstance> = self.instances.values().collect();
        user_first.sort_by_key(|i| built_in(i));
        let matches = |i: &ProviderInstance, test: &dyn Fn(&str) -> bool| {
            test(&i.name) || i.aliases.iter().any(|a| test(a))
        };
        (user_first.iter())
            .find(|i| matches(i, &|n| n == name))
            .copied()
            .or_else(|| {
                only_loose_match(self.instances.values(), name, |i, loose| {
                    matches(i, &|n| name_key(n) == loose)
                })
            })
    }

    /// Every instance, by name.
    pub fn all(&self) -> impl Iterator<Item = &ProviderInstance> {
        self.instances.values()
    }
}

#[cfg(test)]
#[path = "providers_tests.rs"]
mod tests;
