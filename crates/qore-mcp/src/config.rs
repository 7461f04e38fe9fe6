//! MCP server configs: Claude Desktop / Claude Code `mcpServers` JSON (`<config dir>/mcp.json`,
//! a project's `.mcp.json`) and codex's TOML table `[mcp_servers.NAME]` (`<config
//! dir>/config.toml`), with the same keys, spelled the same, in both.
//!
//! Promises:
//! - keys: `command`, `args`, `env`, `cwd` (stdio); `url`, `headers` (codex: `http_headers`),
//!   `env_http_headers`, `bearer_token_env_var` (HTTP); `type` (`stdio`, `http`,
//!   `streamable-http`; `sse` is refused); `enabled`, `required`, `startup_timeout_sec`,
//!   `tool_timeout_sec`, `enabled_tools`, `disabled_tools`, `trusted`, `sandbox` (stdio:
//!   `read-only`, `workspace-write` or `full-access`, the server then starts through `qore
//!   sandbox-exec`; absent: unconfined, as before); codex's `env_vars` is
//!   accepted (qore's servers inherit the environment anyway); other keys are warnings;
//! - `${VAR}` / `${VAR:-default}` expand in `command`, `args`, `env`, `cwd`, `url` and
//!   header values; an unset variable makes that one server invalid, not the file;
//! - a file that does not parse is an error naming it (config.toml is read by qore-config's
//!   loader: the error gives the line, and the section's for a value of the wrong shape);
//!   a missing file is no servers; files load in the order config.toml, mcp.json,
//!   the project's .mcp.json, and a later server of the same name replaces the earlier one
//!   (a warning says so);
//! - servers from a project's `.mcp.json` are marked [`ServerConfig::project`]: the caller
//!   decides whether to run commands a repository brought.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use qore_config::ConfigFile;
use serde::Deserialize;

use crate::error::McpError;
use crate::expand::{env_lookup, expand};

/// Default time a server has to start and list its tools.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time one tool call may take.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// How qore reaches a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        bearer_token_env_var: Option<String>,
    },
}

/// One configured server, expanded and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    /// codex's `required`: kept for display; qore never fails a session for one server.
    pub required: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// Only these tools, when given.
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
    /// Its `readOnlyHint`/`destructiveHint` annotations are believed.
    pub trusted: bool,
    /// The operating-system sandbox a stdio server starts in (`None`: unconfined).
    pub sandbox: Option<qore_sandbox::Mode>,
    /// The file it came from.
    pub source: PathBuf,
    /// It came from a project's `.mcp.json`.
    pub project: bool,
}

impl ServerConfig {
    /// Whether the tool filters let `tool` through.
    pub fn offers(&self, tool: &str) -> bool {
        let enabled = match &self.enabled_tools {
            Some(list) => list.iter().any(|t| t == tool),
            None => true,
        };
        enabled && !self.disabled_tools.iter().any(|t| t == tool)
    }
}

/// Every server found, and what was wrong on the way.
#[derive(Debug, Default)]
pub struct McpConfig {
    pub servers: Vec<ServerConfig>,
    /// Files that do not parse and servers that are unusable; the other servers still load.
    pub errors: Vec<McpError>,
    pub warnings: Vec<String>,
}

/// A server entry as written (either format).
#[derive(Debug, Deserialize)]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    env_vars: Vec<String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default, alias = "http_headers")]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    env_http_headers: BTreeMap<String, String>,
    bearer_token_env_var: Option<String>,
    enabled: Option<bool>,
    required: Option<bool>,
    startup_timeout_sec: Option<f64>,
    tool_timeout_sec: Option<f64>,
    enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
    #[serde(default)]
    trusted: bool,
    sandbox: Option<String>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

#[derive(Deserialize)]
struct JsonFile {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, RawServer>,
}

/// Lookup of environment variables (the process environment outside tests).
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// `<config dir>/mcp.json`, where `qore mcp add` writes.
pub fn user_json(config_dir: &Path) -> PathBuf {
    config_dir.join("mcp.json")
}

impl McpConfig {
    /// Load the config dir's files and the project's `.mcp.json` (see the module doc).
    pub fn load(config_dir: Option<&Path>, project: Option<&Path>) -> McpConfig {
        Self::load_with(config_dir, project, &env_lookup)
    }

    /// [`McpConfig::load`] with its own environment.
    pub fn load_with(
        config_dir: Option<&Path>,
        project: Option<&Path>,
        lookup: Lookup<'_>,
    ) -> McpConfig {
        let mut config = McpConfig::default();
        let mut files: Vec<(PathBuf, Result<Option<Servers>, McpError>, bool)> = Vec::new();
        if let Some(dir) = config_dir {
            files.push((dir.join(qore_config::FILE_NAME), read_toml(dir), false));
            let json = user_json(dir);
            let servers = read_json(&json);
            files.push((json, servers, false));
        }
        if let Some(project) = project {
            let json = project.join(".mcp.json");
            let servers = read_json(&json);
            files.push((json, servers, true));
        }
        for (path, servers, is_project) in files {
            let raw = match servers {
                Ok(Some(raw)) => raw,
                Ok(None) => continue,
                Err(err) => {
                    config.errors.push(err);
                    continue;
                }
            };
            for (name, server) in raw {
                match build(
                    &name,
                    server,
                    &path,
                    is_project,
                    lookup,
                    &mut config.warnings,
                ) {
                    Ok(server) => config.add(server),
                    Err(err) => config.errors.push(err),
                }
            }
        }
        config
    }

    fn add(&mut self, server: ServerConfig) {
        if let Some(old) = self.servers.iter_mut().find(|s| s.name == server.name) {
            self.warnings.push(format!(
                "MCP server '{}' in {} replaces the one in {}",
                server.name,
                server.source.display(),
                old.source.display()
            ));
            *old = server;
        } else {
            self.servers.push(server);
        }
    }

    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// The servers of one file, by name.
type Servers = BTreeMap<String, RawServer>;

/// `[mcp_servers]` of `<config dir>/config.toml`, through qore-config's loader (which
/// names the file, the section and the line of a fault); `None` without the file.
fn read_toml(config_dir: &Path) -> Result<Option<Servers>, McpError> {
    let Some(file) = ConfigFile::read(config_dir)? else {
        return Ok(None);
    };
    Ok(Some(file.section("mcp_servers")?.unwrap_or_default()))
}

/// The `mcpServers` of one JSON file, or `None` when it does not exist.
fn read_json(path: &Path) -> Result<Option<Servers>, McpError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(McpError::Read {
                path: path.into(),
                source,
            })
        }
    };
    let file: JsonFile = serde_json::from_str(&text).map_err(|e| McpError::Parse {
        path: path.into(),
        message: e.to_string(),
    })?;
    Ok(Some(file.servers))
}

fn seconds(value: Option<f64>, default: Duration, key: &str) -> Result<Duration, String> {
    match value {
        None => Ok(default),
        Some(secs) => Duration::try_from_secs_f64(secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("{key} must be a positive number of seconds, not {secs}")),
    }
}

fn build(
    name: &str,
    raw: RawServer,
    path: &Path,
    project: bool,
    lookup: Lookup<'_>,
    warnings: &mut Vec<String>,
) -> Result<ServerConfig, McpError> {
    let invalid = |message: String| McpError::Invalid {
        path: path.into(),
        server: name.into(),
        message,
    };
    if name.trim().is_empty() {
        return Err(invalid("a server needs a name".into()));
    }
    for key in raw.other.keys() {
        warnings.push(format!(
            "{}: server '{name}': unknown key '{key}' ignored",
            path.display()
        ));
    }
    let x = |text: &str| expand(text, lookup).map_err(&invalid);
    let transport = match (raw.kind.as_deref(), raw.command, raw.url) {
        (Some("sse"), ..) => {
            return Err(invalid(
                "the SSE transport is not supported; use streamable HTTP (\"type\": \"http\")"
                    .into(),
            ))
        }
        (Some(kind), ..)
            if !matches!(
                kind,
                "stdio" | "http" | "streamable-http" | "streamable_http"
            ) =>
        {
            return Err(invalid(format!(
                "unknown type '{kind}' (stdio, http, streamable-http)"
            )))
        }
        (_, Some(_), Some(_)) => {
            return Err(invalid("give either `command` or `url`, not both".into()))
        }
        (_, None, None) => return Err(invalid("needs `command` (stdio) or `url` (HTTP)".into())),
        (_, Some(command), None) => Transport::Stdio {
            command: x(&command)?,
            args: raw.args.iter().map(|a| x(a)).collect::<Result<_, _>>()?,
            env: raw
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), x(v)?)))
                .collect::<Result<_, McpError>>()?,
            cwd: raw.cwd.as_deref().map(x).transpose()?.map(PathBuf::from),
        },
        (_, None, Some(url)) => {
            let mut headers: BTreeMap<String, String> = raw
                .headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), x(v)?)))
                .collect::<Result<_, McpError>>()?;
            for (header, var) in &raw.env_http_headers {
                if let Some(value) = lookup(var).filter(|v| !v.is_empty()) {
                    headers.insert(header.clone(), value);
                }
            }
            Transport::Http {
                url: x(&url)?,
                headers,
                bearer_token_env_var: raw.bearer_token_env_var,
            }
        }
    };
    let _ = raw.env_vars;
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        enabled: raw.enabled.unwrap_or(true),
        required: raw.required.unwrap_or(false),
        startup_timeout: seconds(
            raw.startup_timeout_sec,
            DEFAULT_STARTUP_TIMEOUT,
            "startup_timeout_sec",
        )
        .map_err(&invalid)?,
        tool_timeout: seconds(
            raw.tool_timeout_sec,
            DEFAULT_TOOL_TIMEOUT,
            "tool_timeout_sec",
        )
        .map_err(&invalid)?,
        enabled_tools: raw.enabled_tools,
        disabled_tools: raw.disabled_tools,
        trusted: raw.trusted,
        sandbox: (raw.sandbox.as_deref())
            .map(str::parse::<qore_sandbox::Mode>)
            .transpose()
            .map_err(|e| invalid(format!("sandbox: {e}")))?,
        source: path.into(),
        project,
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
