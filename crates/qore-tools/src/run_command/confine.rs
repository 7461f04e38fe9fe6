//! How `run_command` confines a command: the settings ([`SandboxOptions`]), the command
//! line of the helper (`qore sandbox-exec`), and the note that tells the model a failure
//! may be the sandbox's.
//!
//! Promises:
//! - [`SandboxOptions::policy`] gives the qore-sandbox [`Policy`] of a project; the same
//!   policy object is stored in the tools' [`crate::Sandbox`] (so the file tools check it too);
//! - [`helper_command`] starts the helper (the current executable unless the options name
//!   one) as `HELPER sandbox-exec <policy flags> -- argv...`;
//! - [`denial_note`] classifies an ended command: a helper failure (exit 125 with the
//!   helper's prefix) is reported as "the sandbox could not be set up", a missing program
//!   (127 from the helper) as such, and a failure whose output says "Permission denied",
//!   "Operation not permitted" or "Read-only file system" (or death by SIGSYS) gets one line
//!   naming the policy, so the model knows the sandbox may have refused it, and (unless
//!   `[sandbox] escalation = "never"`) how to ask a person for more rights.

use std::ffi::OsString;
use std::path::PathBuf;

use qore_sandbox::{Mode, Policy};

/// The operating-system sandbox of `run_command` (`[sandbox]` in config.toml and profiles).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxOptions {
    pub mode: Mode,
    /// Network allowed (off by default).
    pub network: bool,
    /// More writable places than the project root and the session's temporary directory.
    pub writable: Vec<PathBuf>,
    /// Secret-looking variables passed on anyway.
    pub keep_env: Vec<String>,
    /// More unreadable places (qore's own config and data directories, when the front end
    /// knows them) on top of the user's default secret places.
    pub unreadable: Vec<PathBuf>,
    /// The helper program (`qore`); `None`: the current executable.
    pub helper: Option<PathBuf>,
    /// Whether the model may ask for more rights for one command (`[sandbox] escalation`).
    pub escalation: Escalation,
    /// What happens to commands on a kernel that cannot confine them (`[sandbox]
    /// unconfinable`).
    pub unconfinable: Unconfinable,
}

/// `[sandbox] escalation`: may the model ask for more rights for one command?
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Escalation {
    /// It may (`sandbox`, `network` and `justification` in `run_command`'s arguments); a
    /// person must grant each such call (the tool loop asks, whatever its mode).
    #[default]
    Ask,
    /// It may not: the arguments are not offered, and the failure note does not mention
    /// them.
    Never,
}

impl std::str::FromStr for Escalation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ask" => Ok(Escalation::Ask),
            "never" => Ok(Escalation::Never),
            other => Err(format!("unknown escalation `{other}`; use ask or never")),
        }
    }
}

/// `[sandbox] unconfinable`: what to do with commands on a kernel without Landlock or seccomp.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unconfinable {
    /// Refuse them (the helper exits 125; the command never runs).
    #[default]
    Refuse,
    /// Ask a person for every call (each time, never remembered), and run the granted ones
    /// unconfined; refused when nobody can be asked.
    Ask,
}

impl std::str::FromStr for Unconfinable {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "refuse" => Ok(Unconfinable::Refuse),
            "ask" => Ok(Unconfinable::Ask),
            other => Err(format!("unknown unconfinable `{other}`; use refuse or ask")),
        }
    }
}

impl SandboxOptions {
    /// The policy for `root` (canonicalized; the session directory is set by
    /// [`crate::Sandbox::confined`]).
    pub fn policy(&self, root: &std::path::Path) -> Result<Policy, qore_sandbox::SandboxError> {
        let mut policy = Policy::new(self.mode, root)?;
        policy.network = self.network;
        policy.writable = self.writable.clone();
        policy.keep_env = self.keep_env.clone();
        policy.unreadable.extend(self.unreadable.iter().cloned());
        Ok(policy)
    }
}

/// The helper's command line for `argv` under `policy`.
pub(super) fn helper_command(
    options: &SandboxOptions,
    policy: &Policy,
    argv: &[String],
) -> std::io::Result<(PathBuf, Vec<OsString>)> {
    let helper = match &options.helper {
        Some(path) => path.clone(),
        None => std::env::current_exe()?,
    };
    let mut args: Vec<OsString> = vec!["sandbox-exec".into()];
    args.extend(policy.to_args());
    args.push("--".into());
    args.extend(argv.iter().map(OsString::from));
    Ok((helper, args))
}

/// What the model should know about how a command confined by `policy` ended, if anything
/// (`escalation`: whether it may ask for more rights).
pub(super) fn denial_note(
    policy: Option<&Policy>,
    escalation: Escalation,
    program: &str,
    code: Option<i32>,
    signal: Option<i32>,
    stdout: &str,
    stderr: &str,
) -> Option<String> {
    let policy = policy?;
    if code == Some(qore_sandbox::SETUP_FAILED as i32)
        && stderr.contains(qore_sandbox::HELPER_PREFIX)
    {
        return Some(format!(
            "The sandbox could not be set up, so `{program}` did not run: {}",
            stderr.trim()
        ));
    }
    if code == Some(127) && stderr.contains(qore_sandbox::HELPER_PREFIX) {
        return Some(format!(
            "`{program}` is allowed but was not found on this machine's PATH"
        ));
    }
    if policy.mode == Mode::FullAccess || code == Some(0) {
        return None;
    }
    let text = format!("{stdout}\n{stderr}").to_ascii_lowercase();
    let looks_denied = [
        "permission denied",
        "operation not permitted",
        "read-only file system",
    ]
    .iter()
    .any(|k| text.contains(k))
        || signal == Some(libc::SIGSYS);
    let next = match escalation {
        Escalation::Ask => {
            "Do not try to get around it. If the task needs it, call run_command again with \
             the same argv plus `\"sandbox\": \"full-access\"` (or `\"network\": true` when only \
             the network is missing) and a `\"justification\"` telling the user why: a person \
             must approve it. Otherwise tell the user what needs more rights and why."
        }
        Escalation::Never => {
            "Do not try to get around it; tell the user what needs more rights and why."
        }
    };
    looks_denied.then(|| {
        format!(
            "This failure may come from the sandbox, not the command: it ran under `{}`. \
             Inside the project root, `.git` and `.qore` are read-only and new entries cannot \
             be created directly in the root (create them with write_file); the user's \
             secret places are unreadable; {}. {next}",
            policy.describe(),
            if policy.network {
                "the network is on"
            } else {
                "there is no network"
            }
        )
    })
}
