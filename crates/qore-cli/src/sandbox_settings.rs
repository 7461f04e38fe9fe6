//! The settings of the tools' sandbox: `[sandbox]` and `[tools]` in `<config dir>/config.toml`,
//! and the same tables in the profile of the agent in use, whose keys win ([`in_force`]).
//!
//! Promises:
//! - `[sandbox] mode` (`read-only`, `workspace-write`: the default, `full-access`),
//!   `network` (bool, default false), `writable` (paths, relative ones to the project root)
//!   and `env` (variable names passed on although they look like secrets), `escalation`
//!   (`ask`: the default, the model may ask a person for more rights for one command;
//!   `never`) and `unconfinable` (`refuse`: the default, or `ask`: on a kernel that cannot
//!   confine commands, ask a person before each one);
//! - `[tools] allowed_commands` (program names) replaces `run_command`'s default list;
//! - an unknown key or a value of the wrong kind is an error naming the file and the line;
//! - qore's own config and data directories join the unreadable places;
//! - on a kernel that cannot confine commands (no Landlock or seccomp), stderr says so once
//!   per process, unless the mode is `full-access`, and says what happens to commands
//!   (refused, or asked about one by one);
//! - commands always go through the sandbox helper (the current executable), full access
//!   included (it still makes a new session and scrubs the environment).

use std::path::{Path, PathBuf};

use qore_config::ConfigFile;
use qore_core::ErrorInfo;
use qore_sandbox::Mode;
use qore_tools::{Escalation, SandboxOptions, ToolOptions, Unconfinable};
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxSection {
    mode: Option<String>,
    network: Option<bool>,
    writable: Option<Vec<PathBuf>>,
    env: Option<Vec<String>>,
    escalation: Option<String>,
    unconfinable: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ToolsSection {
    allowed_commands: Option<Vec<String>>,
}

fn config_error(e: impl std::fmt::Display) -> ErrorInfo {
    ErrorInfo::config(e.to_string())
}

/// The options in force and where each setting came from (for `qore sandbox check`).
pub struct InForce {
    pub options: ToolOptions,
    /// `(setting, where it was set)`: the profile's file and line, config.toml, or the
    /// default.
    pub origins: Vec<(&'static str, String)>,
}

/// The tools' options for `project` from the config dir's `config.toml` (defaults when
/// there is none).
pub fn tool_options(project: &Path) -> Result<ToolOptions, ErrorInfo> {
    in_force(project, None).map(|f| f.options)
}

/// The tools' options for `project`: `agent`'s profile's `[sandbox]` and `[tools]` keys
/// over `config.toml`'s, over the defaults. An agent that is not in the catalog adds nothing
/// (the session reports it).
pub fn in_force(project: &Path, agent: Option<&str>) -> Result<InForce, ErrorInfo> {
    let config_dir = qore_agents::config::default_dir();
    let file = match &config_dir {
        Some(dir) => ConfigFile::read(dir).map_err(config_error)?,
        None => None,
    };
    let (sandbox, tools) = match &file {
        Some(file) => (
            file.section::<SandboxSection>("sandbox")
                .map_err(config_error)?
                .unwrap_or_default(),
            file.section::<ToolsSection>("tools")
                .map_err(config_error)?
                .unwrap_or_default(),
        ),
        None => Default::default(),
    };
    let invalid = |key: &str, e: String| match &file {
        Some(file) => config_error(file.invalid("sandbox", format!("{key}: {e}"))),
        None => config_error(e),
    };
    let mut mode = match &sandbox.mode {
        None => None,
        Some(name) => Some((name.parse::<Mode>()).map_err(|e| invalid("mode", e.to_string()))?),
    };
    let mut escalation: Option<Escalation> = match &sandbox.escalation {
        None => None,
        Some(name) => Some(name.parse().map_err(|e| invalid("escalation", e))?),
    };
    let mut unconfinable: Option<Unconfinable> = match &sandbox.unconfinable {
        None => None,
        Some(name) => Some(name.parse().map_err(|e| invalid("unconfinable", e))?),
    };
    let (mut network, mut writable, mut env) = (sandbox.network, sandbox.writable, sandbox.env);
    let mut allowed = tools.allowed_commands;
    let config_name = (file.as_ref()).map_or_else(
        || "config.toml".to_owned(),
        |f| f.path().display().to_string(),
    );
    let mut origins: Vec<(&'static str, String)> = Vec::new();
    let mut from = |key: &'static str, set: bool, by: &str| {
        if set {
            origins.push((key, by.to_owned()));
        }
    };
    from("mode", mode.is_some(), &config_name);
    from("network", network.is_some(), &config_name);
    from("writable", writable.is_some(), &config_name);
    from("env", env.is_some(), &config_name);
    from("escalation", escalation.is_some(), &config_name);
    from("unconfinable", unconfinable.is_some(), &config_name);
    from("allowed_commands", allowed.is_some(), &config_name);
    if let Some(name) = agent {
        let catalog = qore_agents::config::Config::load(config_dir.as_deref()).catalog;
        if let Some(found) = catalog.get(name) {
            let (p_sandbox, p_tools) =
                qore_agents::tool_settings::of_agent(found).map_err(ErrorInfo::config)?;
            if let Some(set) = p_sandbox {
                let by = where_set(&set.at);
                let v = set.value;
                if let Some(m) = v.mode {
                    mode = Some(m.name().parse().map_err(config_error)?);
                }
                escalation = (v.escalation.map(|e| e.name().parse()).transpose())
                    .map_err(config_error)?
                    .or(escalation);
                unconfinable = (v.unconfinable.map(|u| u.name().parse()).transpose())
                    .map_err(config_error)?
                    .or(unconfinable);
                from("mode", v.mode.is_some(), &by);
                from("network", v.network.is_some(), &by);
                from("writable", v.writable.is_some(), &by);
                from("env", v.env.is_some(), &by);
                from("escalation", v.escalation.is_some(), &by);
                from("unconfinable", v.unconfinable.is_some(), &by);
                network = v.network.or(network);
                writable = v.writable.or(writable);
                env = v.env.or(env);
            }
            if let Some(set) = p_tools {
                from(
                    "allowed_commands",
                    set.value.allowed_commands.is_some(),
                    &where_set(&set.at),
                );
                allowed = set.value.allowed_commands.or(allowed);
            }
        }
    }
    // The last word on each key is the one in force.
    origins.reverse();
    let mut seen = std::collections::BTreeSet::new();
    origins.retain(|(key, _)| seen.insert(*key));
    origins.reverse();
    let mode = mode.unwrap_or_default();
    let unconfinable = unconfinable.unwrap_or_default();
    if mode != Mode::FullAccess {
        warn_unconfinable_once(unconfinable);
    }
    let mut unreadable: Vec<PathBuf> = config_dir.into_iter().collect();
    unreadable.extend(qore_store::data_dir().ok());
    let options = SandboxOptions {
        mode,
        network: network.unwrap_or(false),
        writable: (writable.unwrap_or_default().into_iter())
            .map(|p| project.join(p))
            .collect(),
        keep_env: env.unwrap_or_default(),
        unreadable,
        helper: None,
        escalation: escalation.unwrap_or_default(),
        unconfinable,
    };
    let mut tool_options = ToolOptions {
        sandbox: Some(options),
        ..ToolOptions::default()
    };
    if let Some(allowed) = allowed {
        tool_options.allowed_commands = allowed;
    }
    Ok(InForce {
        options: tool_options,
        origins,
    })
}

fn where_set(at: &(PathBuf, Option<usize>)) -> String {
    match at.1 {
        Some(line) => format!("{} line {line}", at.0.display()),
        None => at.0.display().to_string(),
    }
}

/// Say once that this kernel cannot confine commands, if it cannot, and what happens then.
fn warn_unconfinable_once(unconfinable: Unconfinable) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let support = qore_sandbox::probe();
        if !support.confines() {
            let then = match unconfinable {
                Unconfinable::Refuse => {
                    "run_command refuses every command unless config.toml sets [sandbox] \
                     mode = \"full-access\" (or unconfinable = \"ask\")"
                }
                Unconfinable::Ask => {
                    "run_command asks before every command, which then runs unconfined \
                     (refused when nobody can be asked)"
                }
            };
            crate::console::note!(
                "qore: this kernel cannot confine commands ({}); {then}",
                support.gaps().join("; ")
            );
        }
    });
}
