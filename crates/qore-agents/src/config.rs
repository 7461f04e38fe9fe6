//! The config dir and everything in it: `agents/`, `partials/`, `providers/`, `roles/` (and
//! the seed's `agent_roles/`), `pipelines.toml`, `agent_models.toml` or the seed's
//! `agent_models.json` (model overrides, [`crate::overrides`]).
//!
//! Promises:
//! - the dir is `QORE_CONFIG_DIR`, else `qore` in the platform's config dir (`etcetera`:
//!   `$XDG_CONFIG_HOME/qore` when that is an absolute path, else `~/.config/qore`, on
//!   Linux and macOS; `%APPDATA%\qore` on Windows); a missing dir is an empty config
//!   (bundled agents, built-in providers);
//! - [`Config::resolve`] gives a ready agent (provider instance, protocol, model, endpoint
//!   with `${MODEL}` filled, compiled body) or an error that says what to fix;
//! - the resolved model is: an explicit choice (e.g. `--model`), else the persisted
//!   override (`qore agents set-model`), else the profile's `model`;
//! - includes are read through the config dir's `partials/` when finding what bodies read;
//!   a concrete profile `pipelines.toml`'s `code_completion` names whose body reads neither
//!   the prefix/suffix nor the history is refused ([`crate::body_reads`]);
//! - [`Config::init`] writes a commented starter config and never overwrites a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use qore_core::ErrorInfo;

use crate::catalog::refuse_unaskable_completers;
use crate::catalog::{Agent, Catalog};
use crate::error::AgentError;
use crate::overrides;
use crate::partials::Partials;
use crate::providers::{ProviderInstance, Providers};
use crate::render::AgentRenderer;
use crate::routing::Pipelines;
use crate::system_prompt::PromptEnv;
use crate::validate::validate_agent;

/// Everything loaded from one config dir.
pub struct Config {
    /// The config directory read (`None`: only the bundled profiles and providers).
    pub dir: Option<PathBuf>,
    /// Every agent profile, bundled and the user's.
    pub catalog: Catalog,
    /// The provider instances (`providers.toml` over the bundled ones).
    pub providers: Providers,
    /// The include partials: the bundled ones, then the user's `partials/`.
    pub partials: Partials,
    /// The agent rosters of `pipelines.toml` (completion, chat, compression, refactor).
    pub pipelines: Pipelines,
    /// Agent replacements of `overrides.toml`: a name mapped to the agent used in its place.
    pub overrides: BTreeMap<String, String>,
    /// Problems outside profiles (pipelines, overrides, providers).
    pub errors: Vec<AgentError>,
}

/// An agent bound to its provider, protocol and model.
pub struct ResolvedAgent {
    /// The agent's renderer: the profile bound to its protocol and model.
    pub renderer: Arc<AgentRenderer>,
    /// The provider instance the agent reaches.
    pub provider: ProviderInstance,
}

/// The config dir (see the module doc).
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("QORE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    use etcetera::BaseStrategy as _;
    let dirs = etcetera::choose_base_strategy().ok()?;
    Some(dirs.config_dir().join("qore"))
}

impl Config {
    /// Load `dir` (or nothing but the bundled parts when `None`).
    pub fn load(dir: Option<&Path>) -> Config {
        let sub = |name: &str| dir.map(|d| d.join(name));
        let partials = Partials::new(sub("partials").filter(|p| p.is_dir()));
        let mut catalog = Catalog::load_with(sub("agents").as_deref(), &partials);
        let mut providers = Providers::load(sub("providers").as_deref());
        let mut errors = std::mem::take(&mut providers.errors);
        let pipelines_path = sub("pipelines.toml");
        let pipelines = match &pipelines_path {
            Some(path) => Pipelines::read(path).unwrap_or_else(|err| {
                errors.push(err);
                Pipelines::default()
            }),
            None => Pipelines::default(),
        };
        if let Some(path) = &pipelines_path {
            errors.extend(pipelines.check(&catalog, path));
        }
        refuse_unaskable_completers(&mut catalog, &pipelines.code_completion);
        let overrides = match dir {
            Some(dir) => {
                let (overrides, mut problems) = overrides::read(dir);
                errors.append(&mut problems);
                overrides
            }
            None => BTreeMap::new(),
        };
        Config {
            dir: dir.map(Path::to_owned),
            catalog,
            providers,
            partials,
            pipelines,
            overrides,
            errors,
        }
    }

    /// The agent `name`, ready to send with `model` (or the override, or its default).
    pub fn resolve(&self, name: &str, model: Option<&str>) -> Result<ResolvedAgent, ErrorInfo> {
        let Some(agent) = self.catalog.get(name) else {
            let refused = self
                .catalog
                .errors
                .iter()
                .find(|e| e.to_string().contains(name));
            return Err(ErrorInfo::config(match refused {
                Some(err) => format!("agent {name:?} was refused: {err}"),
                None => format!("no agent {name:?} (see `qore agents list`)"),
            }));
        };
        if agent.is_abstract {
            return Err(ErrorInfo::config(format!(
                "agent {name:?} is abstract: use one that extends it"
            )));
        }
        let provider = self.provider_of(agent)?;
        let mut protocol =
            qore_client::protocols::by_name(&provider.protocol).ok_or_else(|| {
                ErrorInfo::config(format!("unknown protocol {:?}", provider.protocol))
            })?;
        // Without a [body], the codec writes the request: give it the cache marks.
        if agent.body.is_none() && !agent.cache_breakpoints.is_empty() {
            if let Some(marking) = protocol.with_cache_marks() {
                protocol = marking;
            }
        }
        let model = model
            .map(str::to_owned)
            .or_else(|| self.overrides.get(&agent.name).cloned())
            .or_else(|| agent.model.clone())
            .ok_or_else(|| {
                ErrorInfo::config(format!(
                    "agent {name:?} names no model: pass --model or run `qore agents set-model {name} MODEL`"
                ))
            })?;
        let renderer = AgentRenderer::new(agent, protocol, model, self.partials.clone())
            .map_err(|err| ErrorInfo::config(err.to_string()))?;
        Ok(ResolvedAgent {
            renderer: Arc::new(renderer),
            provider: provider.clone(),
        })
    }

    fn provider_of(&self, agent: &Agent) -> Result<&ProviderInstance, ErrorInfo> {
        let name = agent.provider.as_deref().ok_or_else(|| {
            ErrorInfo::config(format!("agent {:?} names no provider", agent.name))
        })?;
        self.providers.get(name).ok_or_else(|| {
            ErrorInfo::config(format!(
                "agent {:?}: unknown provider {name:?} (see `qore providers list`)",
                agent.name
            ))
        })
    }

    /// The agent's system prompt for `project_dir`, rendered; `None` when it has none.
    pub fn system_prompt(
        &self,
        agent: &Agent,
        project_dir: Option<&Path>,
    ) -> Result<Option<String>, ErrorInfo> {
        self.render_system_prompt(agent, project_dir)
            .map_err(|err| ErrorInfo::config(err.to_string()))
    }

    fn render_system_prompt(
        &self,
        agent: &Agent,
        project_dir: Option<&Path>,
    ) -> Result<Option<String>, AgentError> {
        let Some(template) = &agent.system_prompt else {
            return Ok(None);
        };
        let env = PromptEnv {
            project_dir: project_dir.map(Path::to_owned),
            config_dir: self.dir.clone(),
            home: etcetera::home_dir().ok(),
        };
        let text = env.render(template).map_err(|message| {
            let (file, line) = agent.where_set("system_prompt");
            AgentError::Profile {
                file,
                line,
                message: format!("system_prompt: {message}"),
            }
        })?;
        Ok(Some(text).filter(|t| !t.trim().is_empty()))
    }

    /// Check `agent` as `qore agents validate` does: its body renders for its wire
    /// ([`validate_agent`]) and its system prompt renders (without a project dir: roles and
    /// config-dir files resolve, an unknown role is an error at the line that uses it).
    pub fn validate(&self, agent: &Agent) -> Result<(), AgentError> {
        validate_agent(agent, &self.providers, &self.partials)?;
        if !agent.is_abstract {
            self.render_system_prompt(agent, None)?;
        }
        Ok(())
    }

    /// Persist `model` as `name`'s model.
    pub fn set_model(&mut self, name: &str, model: &str) -> Result<PathBuf, ErrorInfo> {
        let Some(agent) = self.catalog.get(name) else {
            return Err(ErrorInfo::config(format!("no agent {name:?}")));
        };
        let name = agent.name.clone();
        let dir = self
            .dir
            .clone()
            .ok_or_else(|| ErrorInfo::config("no config dir (set QORE_CONFIG_DIR)"))?;
        self.overrides.insert(name, model.to_owned());
        overrides::write(&dir, &self.overrides)
    }

    /// Write a commented starter config into `dir`; returns the files written (existing
    /// files are left alone).
    pub fn init(dir: &Path) -> Result<Vec<PathBuf>, ErrorInfo> {
        let io = |path: &Path, err: std::io::Error| {
            ErrorInfo::config(format!("{}: {err}", path.display()))
        };
        let mut written = Vec::new();
        for sub in ["agents", "partials", "providers", "roles"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path).map_err(|e| io(&path, e))?;
        }
        let bundled = Catalog::load_with(None, &Partials::new(None));
        let pipelines = starter_pipelines(&tagged_completers(&bundled));
        let starter = (STARTER
            .iter()
            .map(|(name, text)| (*name, (*text).to_owned())))
        .chain([("pipelines.toml", pipelines)]);
        for (name, text) in starter {
            let path = dir.join(name);
            if path.exists() {
                continue;
            }
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
            written.push(path);
        }
        Ok(written)
    }
}

/// The concrete agents of `catalog` tagged `completion`, by name: the code_completion roster
/// a new configuration starts with. Choosing these defaults is all the tag does; how a
/// completion is asked is what the body reads ([`crate::body_reads`]).
pub fn tagged_completers(catalog: &Catalog) -> Vec<String> {
    let mut names: Vec<String> = (catalog.all())
        .filter(|agent| !agent.is_abstract && agent.tags.iter().any(|t| t == "completion"))
        .map(|agent| agent.name.clone())
        .collect();
    names.sort();
    names
}

/// The starter `pipelines.toml`, its code_completion roster `completers`.
fn starter_pipelines(completers: &[String]) -> String {
    let roster = (completers.iter().map(|name| format!("{name:?}")))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "# Which agents serve which job. code_completion: the first whose [match] accepts the file;\n\
         # it starts as the agents tagged \"completion\" (reorder it, or name yours).\n\
         code_completion = [{roster}]\n\
         chat = [\"my-chat\", \"claude-chat\", \"openai-chat\", \"local-chat\"]\n\
         compression = [\"claude-compression\"]\n\
         refactor = [\"claude-refactor\"]\n"
    )
}

const STARTER: &[(&str, &str)] = &[
    ("agents/my-chat.toml", r#"# A user agent: two lines on top of a bundled one (`qore agents list` shows them all).
# Every key of [body] is sent as is; strings with {{ }} or {% %} are Jinja rendered from
# the conversation (see the bundled partials). `qore agents validate` checks this file.
schema_version = 1
name = "my-chat"
extends = "claude-chat"
description = "Claude, a little cooler."

[body]
temperature = 0.3
"#),
    ("providers/example.toml.disabled", r#"# A provider instance (rename to .toml to use it). Agents name it in `provider`.
name = "my-server"
protocol = "openai-chat"          # openai-chat | openai-responses | anthropic | gemini | ollama | llamacpp | mistral
                                  # (or the seed's client_api = "OpenAI Compatible", "Claude", ...)
url = "http://127.0.0.1:8000/v1"  # endpoints are appended: /chat/completions -> .../v1/chat/completions
api_key_env = "MY_SERVER_KEY"     # or api_key_file = "/path", keyring = { user = "my-server" },
                                  # or api_key_ref = "env:VAR" | "file:PATH" | "keyring entry name"
# idle_timeout_secs = 120
# [headers]
# X-Title = "qore"
"#),
    ("roles/README.md", "Role texts: `roles/<id>.md` here replaces the bundled role `<id>` used by `{{ role(\"<id>\") }}` in a system_prompt.\n"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "qore-config-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn init_writes_a_config_that_loads_cleanly_and_is_never_overwritten() {
        let dir = temp();
        let written = Config::init(&dir).unwrap();
        assert_eq!(written.len(), STARTER.len() + 1, "and pipelines.toml");
        let config = Config::load(Some(&dir));
        assert!(config.errors.is_empty(), "{:?}", config.errors);
        assert!(
            config.catalog.errors.is_empty(),
            "{:?}",
            config.catalog.errors
        );
        assert!(config.catalog.get("my-chat").is_some());
        assert_eq!(config.pipelines.chat[0], "my-chat");
        // The completion roster starts as the bundled agents tagged "completion" (two by
        // `extends`), by name: written out by hand, so a tag lost or ignored fails here.
        assert_eq!(
            config.pipelines.code_completion,
            [
                "codestral-completion",
                "deepseek-completion",
                "llamacpp-completion",
                "local-completion",
                "mistral-completion",
                "ollama-completion"
            ]
        );
        std::fs::write(dir.join("pipelines.toml"), "chat = []\n").unwrap();
        assert!(Config::init(&dir).unwrap().is_empty());
        assert_eq!(
            std::fs::read_to_string(dir.join("pipelines.toml")).unwrap(),
            "chat = []\n"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn model_choice_then_override_then_profile_and_endpoint_model() {
        let dir = temp();
        let mut config = Config::load(Some(&dir));
        let model = |c: &Config, flag: Option<&str>| {
            c.resolve("gemini-chat", flag)
                .unwrap()
                .renderer
                .model
                .clone()
        };
        assert_eq!(model(&config, None), "gemini-2.5-flash");
        let path = config.set_model("gemini-chat", "gemini-3-pro").unwrap();
        assert!(path.ends_with("agent_models.toml"));
        let config = Config::load(Some(&dir));
        assert_eq!(model(&config, None), "gemini-3-pro");
        assert_eq!(model(&config, Some("flag")), "flag");
        let resolved = config.resolve("gemini-chat", None).unwrap();
        assert_eq!(
            resolved.renderer.endpoint.as_deref(),
            Some("/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse")
        );
        let error = |name: &str| config.resolve(name, None).err().map(|e| e.message);
        assert!(error("base-gemini").is_some_and(|m| m.contains("abstract")));
        assert!(error("nope").is_some_and(|m| m.contains("no agent")));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
