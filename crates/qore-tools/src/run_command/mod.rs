//! `run_command`: run one allow-listed program in the project root, without a shell.
//!
//! Promises:
//! - the command is an argv array; `argv[0]` must be a bare program name (no `/`) on the
//!   allow-list given at construction ([`DEFAULT_ALLOWED_COMMANDS`] by default), found on
//!   `PATH`; no shell is involved, ever;
//! - an argument containing a shell metacharacter ([`SHELL_METACHARACTERS`]) is refused, so a
//!   model that thinks it has a shell learns it does not;
//! - best effort on arguments that name paths: one that is absolute, starts with `~` or has
//!   a `..` component (also after `=`, as in `--flag=/x`), or that names an existing entry of
//!   the project, must pass [`Sandbox::resolve`]. Programs can still reach outside the root on
//!   their own (a build script, `git -C`), which is why the tool is destructive: the
//!   allow-list and the approval policy are the guard, not this check;
//! - cwd is the project root, stdin is empty, pagers and prompts are off, and the
//!   environment holds only the variables named in `command_env` ([`DEFAULT_COMMAND_ENV`]),
//!   so the host's secrets (provider API keys) do not reach a command;
//! - the run ends at the timeout (default `command_timeout`, a call may ask for 1 s up to
//!   `command_max_timeout`), on cancellation or when the call's future is dropped, and then
//!   the whole process group is killed (Unix), so grandchildren do not linger; after a normal
//!   exit, what is left of the group is killed too;
//! - with [`ToolOptions::sandbox`] set, the program starts through the helper
//!   (`qore sandbox-exec`, see the `confine` module and qore-sandbox) under the sandbox's
//!   policy: Landlock, seccomp, no capabilities, a new session (whose id is the group killed
//!   at the end, since the helper itself leads it), secrets scrubbed from the environment;
//!   a failure that looks like the sandbox's gets a note saying so; when the policy is
//!   missing although asked for, the call is refused, never run unconfined;
//! - a call may ask for more rights (`sandbox`, `network`, `justification`, see the
//!   `escalate` module): [`Tool::rights_asked`] says what, plain [`Tool::call`] refuses such a
//!   call, and only [`Tool::call_with_rights`] (the tool loop, after a person said yes) runs
//!   it wider; on a kernel that cannot confine commands with `[sandbox] unconfinable =
//!   "ask"`, every call asks, and a granted one runs unconfined;
//! - stdout and stderr are captured separately, each keeping its first and last
//!   `command_output_cap / 2` bytes with a note of how much was cut between them;
//! - the result states the exit code and is an error when it is not 0, when the program was
//!   killed by a signal or timed out. `structured` carries `exit_code`, `timed_out` and the
//!   byte counts.

mod capture;
mod confine;
mod escalate;
mod policy;
mod process;
mod schema;

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use qore_core::{CancellationToken, RightsRequest, Tool, ToolFuture, ToolOutput, ToolSpec};
use qore_sandbox::Policy;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::util::{cancelled, parse_args};
use crate::{Sandbox, ToolOptions};
use capture::Capture;
pub use confine::{Escalation, SandboxOptions, Unconfinable};
use policy::validate;
pub use policy::{DEFAULT_ALLOWED_COMMANDS, DEFAULT_COMMAND_ENV, SHELL_METACHARACTERS};
use process::{signal_number, signal_of, GroupKiller};

const NAME: &str = "run_command";

/// How long the output pipes may stay open after the program exited (held by a child it
/// left behind) before they are abandoned.
const PIPE_GRACE: Duration = Duration::from_millis(500);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    argv: Vec<String>,
    #[serde(default)]
    timeout_secs: Option<u64>,
    // Read by `escalate` from the raw arguments; here so that they are not unknown fields.
    #[serde(default, rename = "sandbox")]
    _sandbox: Option<String>,
    #[serde(default, rename = "network")]
    _network: Option<bool>,
    #[serde(default, rename = "justification")]
    _justification: Option<String>,
}

/// Runs allow-listed programs in the project root.
pub struct RunCommand {
    spec: ToolSpec,
    sandbox: Arc<Sandbox>,
    options: Arc<ToolOptions>,
    /// This kernel cannot confine commands (probed once, at construction).
    unconfinable: bool,
}

impl RunCommand {
    pub fn new(sandbox: Arc<Sandbox>, options: Arc<ToolOptions>) -> Self {
        let spec = schema::tool_spec(&options);
        let unconfinable = options.sandbox.is_some() && !qore_sandbox::probe().confines();
        RunCommand {
            spec,
            sandbox,
            options,
            unconfinable,
        }
    }
}

impl Tool for RunCommand {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn timeout(&self) -> Duration {
        // The command's own timeout ends it; leave room for the kill and the report.
        self.options.command_max_timeout + Duration::from_secs(5)
    }
    fn rights_asked(&self, input: &Value) -> Option<RightsRequest> {
        escalate::asked(
            self.options.sandbox.as_ref(),
            self.sandbox.policy(),
            self.unconfinable,
            input,
        )
    }

    fn call(&self, input: Value, cancel: CancellationToken) -> ToolFuture {
        if escalate::asks_more(self.sandbox.policy(), &input) {
            return Box::pin(async {
                ToolOutput::error(
                    "Not run: this call asks for more rights than the sandbox gives, which only \
                     a person's approval grants, and none was given here.",
                )
            });
        }
        self.run(input, false, cancel)
    }

    fn call_with_rights(
        &self,
        input: Value,
        _granted: RightsRequest,
        cancel: CancellationToken,
    ) -> ToolFuture {
        self.run(input, true, cancel)
    }
}

impl RunCommand {
    /// Run a call; `granted`: a person granted the rights it asks for.
    fn run(&self, input: Value, granted: bool, cancel: CancellationToken) -> ToolFuture {
        let sandbox = self.sandbox.clone();
        let options = self.options.clone();
        let policy =
            (sandbox.policy()).map(|p| escalate::policy_for(p, &input, granted, self.unconfinable));
        Box::pin(async move {
            let args = match parse_args::<Args>(NAME, input) {
                Ok(args) => args,
                Err(out) => return out,
            };
            // Path checks touch the file system: keep them off the async threads.
            let checked = {
                let (sandbox, options) = (sandbox.clone(), options.clone());
                let argv = args.argv.clone();
                tokio::task::spawn_blocking(move || validate(&sandbox, &options, &argv)).await
            };
            match checked {
                Ok(Ok(())) => {}
                Ok(Err(message)) => return ToolOutput::error(message),
                Err(e) => return ToolOutput::error(format!("internal error: {e}")),
            }
            let timeout = match args.timeout_secs {
                Some(0) => return ToolOutput::error("timeout_secs must be at least 1"),
                Some(s) => Duration::from_secs(s).min(options.command_max_timeout),
                None => options.command_timeout,
            };
            execute(
                &sandbox,
                policy.as_ref(),
                &options,
                &args.argv,
                timeout,
                cancel,
            )
            .await
        })
    }
}

/// `sandbox` confined by `options.sandbox`'s policy, when set and not confined yet.
pub(crate) fn confine_for(sandbox: Sandbox, options: &ToolOptions) -> Sandbox {
    match &options.sandbox {
        Some(opts) if sandbox.policy().is_none() => match opts.policy(sandbox.root()) {
            Ok(policy) => sandbox.confined(policy),
            Err(_) => sandbox,
        },
        _ => sandbox,
    }
}

enum Ended {
    Exited(std::io::Result<std::process::ExitStatus>),
    TimedOut,
    Cancelled,
}

async fn execute(
    sandbox: &Sandbox,
    policy: Option<&Policy>,
    options: &ToolOptions,
    argv: &[String],
    timeout: Duration,
    cancel: CancellationToken,
) -> ToolOutput {
    let program = &argv[0];
    let mut command = match (&options.sandbox, policy) {
        (None, _) => {
            let mut command = tokio::process::Command::new(program);
            command.args(&argv[1..]);
            #[cfg(unix)]
            command.process_group(0);
            command
        }
        (Some(opts), Some(policy)) => match confine::helper_command(opts, policy, argv) {
            Ok((helper, args)) => {
                // No process_group: the helper makes a new session, whose id is its pid.
                let mut command = tokio::process::Command::new(helper);
                command.args(args);
                command
            }
            Err(e) => {
                return ToolOutput::error(format!(
                    "cannot find the sandbox helper (qore itself): {e}; `{program}` did not run"
                ))
            }
        },
        (Some(_), None) => {
            return ToolOutput::error(format!(
                "the sandbox policy for the project root could not be made, so `{program}` \
                 did not run (commands never run unconfined)"
            ))
        }
    };
    command
        .current_dir(sandbox.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_clear()
        .envs(
            options
                .command_env
                .iter()
                .filter_map(|name| std::env::var_os(name).map(|value| (name, value))),
        )
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .kill_on_drop(true);
    // The test switch for kernels without Landlock reaches the helper (it can only make the
    // helper refuse).
    if let (Some(_), Some(v)) = (
        &options.sandbox,
        std::env::var_os(qore_sandbox::SIMULATE_NO_LANDLOCK),
    ) {
        command.env(qore_sandbox::SIMULATE_NO_LANDLOCK, v);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ToolOutput::error(format!(
                "`{program}` is allowed but was not found on this machine's PATH"
            ))
        }
        Err(e) => return ToolOutput::error(format!("cannot start `{program}`: {e}")),
    };
    let mut group = GroupKiller(child.id());
    let mut stdout_pipe = child.stdout.take();
    let mut stderr_pipe = child.stderr.take();
    let mut out = Capture::new(options.command_output_cap);
    let mut err = Capture::new(options.command_output_cap);

    let ended = {
        let work = async {
            let readers = async {
                tokio::join!(
                    out.read_all(stdout_pipe.as_mut()),
                    err.read_all(stderr_pipe.as_mut())
                )
            };
            tokio::pin!(readers);
            let mut readers_done = false;
            let status = loop {
                tokio::select! {
                    status = child.wait() => break status,
                    _ = &mut readers, if !readers_done => readers_done = true,
                }
            };
            if !readers_done {
                let _ = tokio::time::timeout(PIPE_GRACE, &mut readers).await;
            }
            status
        };
        tokio::select! {
            status = work => Ended::Exited(status),
            _ = tokio::time::sleep(timeout) => Ended::TimedOut,
            _ = cancel.cancelled() => Ended::Cancelled,
        }
    };
    // Kill the group before reaping the leader, so its id cannot have been reused.
    group.kill();
    let _ = child.start_kill();
    let _ = child.wait().await;

    let status = match ended {
        Ended::Cancelled => return cancelled(),
        Ended::TimedOut => None,
        Ended::Exited(Ok(status)) => Some(status),
        Ended::Exited(Err(e)) => {
            return ToolOutput::error(format!("lost track of `{program}`: {e}"))
        }
    };
    let shown = argv.join(" ");
    let (head, exit_code, is_error) = match status {
        None => (
            format!(
                "`{shown}` timed out after {} s and was killed.",
                timeout.as_secs_f64()
            ),
            None,
            true,
        ),
        Some(status) => match status.code() {
            Some(code) => (
                format!("`{shown}` exited with code {code}."),
                Some(code),
                code != 0,
            ),
            None => (
                format!("`{shown}` was killed by {}.", signal_of(&status)),
                None,
                true,
            ),
        },
    };
    let mut text = format!("{head}\n{}\n{}", out.render("stdout"), err.render("stderr"));
    let note = status.and_then(|status| {
        confine::denial_note(
            policy,
            (options.sandbox.as_ref()).map_or(Escalation::Never, |o| o.escalation),
            program,
            status.code(),
            signal_number(&status),
            &out.render("stdout"),
            &err.render("stderr"),
        )
    });
    if let Some(note) = &note {
        text.push_str(&format!("\n{note}"));
    }
    ToolOutput {
        is_error,
        structured: Some(json!({
            "exit_code": exit_code,
            "timed_out": status.is_none(),
            "stdout_bytes": out.total,
            "stderr_bytes": err.total,
        }))
        .map(|mut structured| {
            if let Some(policy) = policy {
                structured["sandbox"] = json!(policy.mode.name());
                structured["network"] = json!(policy.network);
                structured["sandbox_note"] = json!(note);
            }
            structured
        }),
        ..ToolOutput::text(text)
    }
}
