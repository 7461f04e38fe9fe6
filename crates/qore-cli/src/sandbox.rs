//! `qore sandbox-exec` (the helper every sandboxed command goes through) and `qore sandbox
//! check` (what the kernel supports and the policy in force).
//!
//! Promises: this module only parses and prints; the policy and the confinement are
//! qore-sandbox's. `sandbox-exec` runs before any async runtime starts (the helper must be
//! single-threaded when it forks and confines itself), exits 125 when the sandbox cannot be
//! set up (the command never ran) and 127 when the program is not found.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use qore_sandbox::{Mode, Policy};

#[path = "sandbox_settings.rs"]
mod settings;
pub use settings::{in_force, tool_options};

/// `qore sandbox-exec [OPTIONS] -- COMMAND [ARGS...]`
#[derive(Debug, Clone, Args)]
pub struct ExecArgs {
    /// read-only, workspace-write or full-access.
    #[arg(long, default_value = "workspace-write")]
    mode: String,
    /// Network on or off.
    #[arg(long, default_value = "off", value_parser = ["on", "off"])]
    network: String,
    /// The project root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// The session's private temporary directory (writable; the command's TMPDIR).
    #[arg(long)]
    tmpdir: Option<PathBuf>,
    /// Another writable place (repeatable).
    #[arg(long)]
    writable: Vec<PathBuf>,
    /// A place neither readable nor writable (repeatable; default: the user's secret places).
    #[arg(long)]
    unreadable: Vec<PathBuf>,
    /// A variable passed on although its name looks like a secret (repeatable).
    #[arg(long = "keep-env")]
    keep_env: Vec<String>,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<OsString>,
}

#[derive(Parser)]
#[command(name = "qore sandbox-exec")]
struct ExecCli {
    #[command(flatten)]
    args: ExecArgs,
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Print what the kernel supports (Landlock ABI, seccomp) and the policy in force here.
    Check {
        /// The policy of this agent's profile (its `[sandbox]` and `[tools]` over
        /// config.toml's).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
}

/// Is this command line `qore sandbox-exec ...`? (Checked before the runtime starts.)
pub fn is_exec(args: &[OsString]) -> bool {
    args.get(1).is_some_and(|a| a == "sandbox-exec")
}

/// Run the helper: parse, confine, exec. Returns only on failure.
pub fn exec_main(args: Vec<OsString>) -> ExitCode {
    let mut argv = vec![OsString::from("qore sandbox-exec")];
    argv.extend(args.into_iter().skip(2));
    let cli = ExecCli::parse_from(argv);
    exec(cli.args)
}

/// The helper with parsed arguments.
pub fn exec(args: ExecArgs) -> ExitCode {
    let policy = match policy_of(&args) {
        Ok(policy) => policy,
        Err(e) => return helper_failed(e),
    };
    let err = qore_sandbox::exec(&policy, &args.command);
    let not_found = matches!(&err, qore_sandbox::SandboxError::Exec { source, .. }
        if source.kind() == std::io::ErrorKind::NotFound);
    let code = helper_failed(err);
    if not_found {
        ExitCode::from(127)
    } else {
        code
    }
}

fn helper_failed(err: qore_sandbox::SandboxError) -> ExitCode {
    eprintln!("{}{err}", qore_sandbox::HELPER_PREFIX);
    ExitCode::from(qore_sandbox::SETUP_FAILED)
}

fn policy_of(args: &ExecArgs) -> Result<Policy, qore_sandbox::SandboxError> {
    let mode: Mode = args.mode.parse()?;
    let root = match &args.root {
        Some(root) => root.clone(),
        None => std::env::current_dir().map_err(|source| qore_sandbox::SandboxError::Root {
            root: ".".into(),
            source,
        })?,
    };
    let mut policy = Policy::new(mode, &root)?;
    policy.network = args.network == "on";
    policy.session_tmp = args.tmpdir.clone();
    policy.writable = args.writable.clone();
    if !args.unreadable.is_empty() {
        policy.unreadable = args.unreadable.clone();
    }
    policy.keep_env = args.keep_env.clone();
    Ok(policy)
}

/// `qore sandbox check`.
pub fn sandbox(command: SandboxCommand) -> ExitCode {
    match command {
        SandboxCommand::Check { agent } => check(agent.as_deref()),
    }
}

fn check(agent: Option<&str>) -> ExitCode {
    let support = qore_sandbox::probe();
    let landlock = if support.landlock_abi > 0 {
        format!("ABI {}", support.landlock_abi)
    } else if support.simulated {
        "none (simulated by QORE_SANDBOX_SIMULATE_NO_LANDLOCK)".to_string()
    } else {
        "none".to_string()
    };
    crate::console::out(&format!(
        "landlock: {landlock}\nseccomp: {}\n",
        if support.seccomp { "yes" } else { "no" }
    ));
    for gap in support.gaps() {
        crate::console::out(&format!("missing: {gap}\n"));
    }
    let root = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if let Some(name) = agent {
        let config =
            qore_agents::config::Config::load(qore_agents::config::default_dir().as_deref());
        if config.catalog.get(name).is_none() {
            let errors: Vec<String> = (config.catalog.errors.iter())
                .map(|e| e.to_string())
                .collect();
            return crate::fail(match errors.is_empty() {
                true => format!("no agent called {name:?} (qore agents list)"),
                false => format!(
                    "no agent called {name:?}; profiles that did not load: {}",
                    errors.join("; ")
                ),
            });
        }
    }
    let (options, origins) = match in_force(&root, agent) {
        Ok(found) => (found.options, found.origins),
        Err(e) => return crate::fail(e.message),
    };
    let policy = match options.sandbox.as_ref().map(|s| s.policy(&root)) {
        Some(Ok(policy)) => policy,
        Some(Err(e)) => return crate::fail(e),
        None => return crate::fail("no sandbox settings"),
    };
    crate::console::out(&format!("policy: {}\n", policy.describe()));
    for (key, by) in &origins {
        crate::console::out(&format!("  {key} set in {by}\n"));
    }
    if let Some(sandbox) = &options.sandbox {
        crate::console::out(&format!(
            "escalation: {}\nunconfinable: {}\n",
            match sandbox.escalation {
                qore_tools::Escalation::Ask =>
                    "ask (a person grants more rights, one call at a time)",
                qore_tools::Escalation::Never => "never",
            },
            match sandbox.unconfinable {
                qore_tools::Unconfinable::Refuse => "refuse",
                qore_tools::Unconfinable::Ask => "ask before every command",
            }
        ));
    }
    crate::console::out(&format!(
        "read-only inside the root: {}\n",
        qore_sandbox::PROTECTED.join(", ")
    ));
    let hidden: Vec<String> = (policy.unreadable.iter())
        .map(|p| p.display().to_string())
        .collect();
    crate::console::out(&format!("unreadable: {}\n", hidden.join(", ")));
    crate::console::out(&format!(
        "allowed commands: {}\n",
        options.allowed_commands.join(", ")
    ));
    if support.confines() {
        ExitCode::SUCCESS
    } else {
        crate::fail("this kernel cannot confine commands")
    }
}
