//! The settings of the tools' sandbox: `[sandbox]` and `[tools]` in `<config dir>/config.toml`.
//!
//! Promises:
//! - `[sandbox] mode` (`read-only`, `workspace-write`: the default, `full-access`),
//!   `network` (bool, default false), `writable` (paths, relative ones to the project root)
//!   and `env` (variable names passed on although they look like secrets);
//! - `[tools] allowed_commands` (program names) replaces `run_command`'s default list;
//! - an unknown key or a value of the wrong kind is an error naming the file and the line;
//! - qore's own config and data directories join the unreadable places;
//! - on a kernel that cannot confine commands (no Landlock or seccomp), stderr says so once
//!   per process, unless the mode is `full-access`: every command is then refused;
//! - commands always go through the sandbox helper (the current executable), full access
//!   included (it still makes a new session and scrubs the environment).

use std::path::{Path, PathBuf};

use qore_config::ConfigFile;
use qore_core::ErrorInfo;
use qore_sandbox::Mode;
use qore_tools::{SandboxOptions, ToolOptions};
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxSection {
    mode: Option<String>,
    network: Option<bool>,
    writable: Option<Vec<PathBuf>>,
    env: Option<Vec<String>>,
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
    let mode = match &sandbox.mode {
        None => Mode::default(),
        Some(name) => name.parse::<Mode>().map_err(|e| match &file {
            Some(file) => config_error(file.invalid("sandbox", format!("mode: {e}"))),
            None => config_error(e),
        })?,
    };
    if mode != Mode::FullAccess {
        warn_unconfinable_once();
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

/// Say once that this kernel cannot confine commands, if it cannot.
fn warn_unconfinable_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let support = qore_sandbox::probe();
        if !support.confines() {
            crate::console::note!(
                "qore: this kernel cannot confine commands ({}); run_command refuses every \
                 command unless config.toml sets [sandbox] mode = \"full-access\"",
                support.gaps().join("; ")
            );
        }
    });
}
