//! The settings of the tools' sandbox: `[sandbox]` and `[tools]` in `<config dir>/config.toml`.
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

/// The tools' options for `project` from the config dir's `config.toml` (defaults when
/// there is none).
pub fn tool_options(project: &Path) -> Result<ToolOptions, ErrorInfo> {
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
    let mode = match &sandbox.mode {
        None => Mode::default(),
        Some(name) => (name.parse::<Mode>()).map_err(|e| invalid("mode", e.to_string()))?,
    };
    let escalation = match &sandbox.escalation {
        None => Escalation::default(),
        Some(name) => name.parse().map_err(|e| invalid("escalation", e))?,
    };
    let unconfinable = match &sandbox.unconfinable {
        None => Unconfinable::default(),
        Some(name) => name.parse().map_err(|e| invalid("unconfinable", e))?,
    };
    if mode != Mode::FullAccess {
        warn_unconfinable_once(unconfinable);
    }
    let mut unreadable: Vec<PathBuf> = config_dir.into_iter().collect();
    unreadable.extend(qore_store::data_dir().ok());
    let options = SandboxOptions {
        mode,
        network: sandbox.network.unwrap_or(false),
        writable: (sandbox.writable.unwrap_or_default().into_iter())
            .map(|p| project.join(p))
            .collect(),
        keep_env: sandbox.env.unwrap_or_default(),
        unreadable,
        helper: None,
        escalation,
        unconfinable,
    };
    let mut tool_options = ToolOptions {
        sandbox: Some(options),
        ..ToolOptions::default()
    };
    if let Some(allowed) = tools.allowed_commands {
        tool_options.allowed_commands = allowed;
    }
    Ok(tool_options)
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
