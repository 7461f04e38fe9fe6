//! What `run_command` lets through: the allow-list, the shell metacharacters it refuses, the
//! environment it passes on, and the best-effort check of arguments that name paths.
//!
//! Promises: [`validate`] accepts an argv only when its program is a bare, allow-listed name,
//! no argument holds a NUL or a shell metacharacter, and every argument that looks like a
//! path out of the project (absolute, `~`, a `..` component, also after `=`) or names an
//! existing entry of the project passes [`Sandbox::resolve`]. Its errors say what to do
//! instead.

use crate::{Sandbox, ToolOptions};

/// The programs `run_command` may start unless the host gives its own list: version control,
/// listing and reading, searching, the Rust build tool, and `echo` and `pwd`, which only print.
/// `cargo` runs build scripts and tests, i.e. project code: keep the tool behind approval.
pub const DEFAULT_ALLOWED_COMMANDS: &[&str] =
    &["git", "ls", "cat", "grep", "rg", "cargo", "echo", "pwd"];

/// The environment variables a command gets from the host unless the host gives its own
/// list: what finding programs, git, cargo/rustup, locales, temp files and proxies need.
pub const DEFAULT_COMMAND_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "TERM",
    "SYSTEMROOT",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
];

/// Text that makes an argument refused: command separators, pipes, background `&`,
/// command substitution, redirections and line breaks.
pub const SHELL_METACHARACTERS: &[&str] = &[";", "|", "&", "$(", "`", ">", "<", "\n", "\r"];

/// Why `argv` may not run, if it may not.
pub(super) fn validate(
    sandbox: &Sandbox,
    options: &ToolOptions,
    argv: &[String],
) -> Result<(), String> {
    let Some(program) = argv.first() else {
        return Err(
            "argv is empty; give the program and its arguments, e.g. [\"git\", \"status\"]".into(),
        );
    };
    let allowed = options.allowed_commands.join(", ");
    if program.contains(['/', '\\']) {
        return Err(format!(
            "give the program by its bare name, not a path (`{program}`); allowed programs: {allowed}"
        ));
    }
    if !options.allowed_commands.iter().any(|a| a == program) {
        return Err(format!(
            "`{program}` is not an allowed program; allowed programs: {allowed}"
        ));
    }
    for (i, arg) in argv.iter().enumerate() {
        if arg.contains('\0') {
            return Err(format!("argument {i} contains a NUL byte"));
        }
        if let Some(meta) = SHELL_METACHARACTERS.iter().find(|m| arg.contains(**m)) {
            return Err(format!(
                "argument {i} ({arg:?}) contains {meta:?}, a shell metacharacter; run_command \
                 runs one program without a shell: put each argument in its own array element, \
                 and run separate commands as separate calls (no pipes, redirections, `&&`, \
                 `;`, `$(...)` or backticks)"
            ));
        }
    }
    for arg in &argv[1..] {
        let value = arg.split_once('=').map(|(_, v)| v);
        for candidate in std::iter::once(arg.as_str()).chain(value) {
            check_path_arg(sandbox, candidate)?;
        }
    }
    Ok(())
}

fn check_path_arg(sandbox: &Sandbox, arg: &str) -> Result<(), String> {
    if arg.is_empty() {
        return Ok(());
    }
    if arg.starts_with('~') {
        return Err(format!(
            "argument `{arg}` names a home directory path, which is outside the project root"
        ));
    }
    let path = std::path::Path::new(arg);
    let looks_escaping = path.has_root()
        || path
            .components()
            .any(|c| c == std::path::Component::ParentDir);
    let names_entry = !arg.starts_with('-') && sandbox.root().join(path).symlink_metadata().is_ok();
    if looks_escaping || names_entry {
        sandbox
            .resolve(arg)
            .map_err(|e| format!("argument refused: {e}"))?;
    }
    Ok(())
}
