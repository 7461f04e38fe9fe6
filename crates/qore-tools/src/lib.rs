//! qore-tools: the built-in tools an agent works a project with, all sandboxed to a project
//! root.
//!
//! This crate promises:
//! - a [`Sandbox`] every path goes through: canonical, inside the root, no symlink leading
//!   out, nothing in `.git`, nothing `.gitignore` or `.qoreignore` excludes; files are then
//!   opened through a handle on the root ([`Sandbox::open_file`] and its siblings), so a
//!   symlink swapped in after the check cannot lead out either;
//! - read-only, parallel-safe tools: [`ListFiles`], [`FindFile`], [`ReadFile`] (1-based line
//!   ranges, size caps, binary files refused), [`Search`] (literal or regex, ignore-aware) and
//!   [`Todo`] (an in-memory list per instance, i.e. per session);
//! - destructive tools: [`CreateFile`] (refuses existing files), [`WriteFile`] (creates or
//!   overwrites), [`EditFile`] (one exact match, or one whitespace-tolerant match; atomic write;
//!   a unified diff in the result) and [`RunCommand`] (an allow-list of programs, no shell,
//!   shell metacharacters refused, cwd = root, timeout, output caps, the whole process group
//!   killed on timeout, cancellation or drop);
//! - every tool validates its arguments and answers mistakes with an error output the model
//!   can act on, never a panic; long work stops promptly when the call is cancelled;
//! - the writing tools record what they change, with the prior content, into the
//!   [`ChangeRecorder`] given as [`ToolOptions::record_changes`], so a turn can be undone
//!   (`run_command` is not recorded: see the `changes` module);
//! - `@path` mentions in a message ([`mentions`]) attach files and listings under the same
//!   sandbox ([`attach_mentions`]), and complete to the paths it allows ([`complete_mention`]);
//! - [`builtin_tools`] builds them all for one session.

mod attach;
mod changes;
mod diff;
mod edit_file;
mod file_tool;
mod find_file;
mod list_files;
mod mention;
mod preview;
mod read_file;
mod rooted;
mod run_command;
mod sandbox;
mod search;
mod todo;
mod util;
mod walk;
mod write_file;

use std::sync::Arc;
use std::time::Duration;

pub use attach::{
    attach_mentions, complete_mention, Attached, MentionError, DEFAULT_BUDGET, LISTING_LIMIT,
};
pub use changes::{
    content_hash, records_every_change, Before, ChangeRecorder, FileChange, MAX_RECORDED_BYTES,
    MAX_RECORDED_TURN_BYTES, RECORDING_TOOLS,
};
pub use diff::unified_diff;
pub use edit_file::EditFile;
pub use find_file::FindFile;
pub use list_files::ListFiles;
pub use mention::{mentions, typed_mention, Mention};
pub use preview::{preview, Preview};
pub use qore_sandbox::{Mode as SandboxMode, Policy as SandboxPolicy};
pub use read_file::ReadFile;
pub use run_command::{
    Escalation, RunCommand, SandboxOptions, Unconfinable, DEFAULT_ALLOWED_COMMANDS,
    DEFAULT_COMMAND_ENV, SHELL_METACHARACTERS,
};
pub use sandbox::{Sandbox, SandboxError, QOREIGNORE};
pub use search::Search;
pub use todo::{Todo, TodoItem};
pub use walk::{NotADir, Walked};
pub use write_file::{CreateFile, WriteFile};

use qore_core::Tool;

/// Limits and policy for the built-in tools. [`Default`] gives the documented values.
#[derive(Debug, Clone)]
pub struct ToolOptions {
    /// Lines `read_file` returns at most per call (2000).
    pub read_max_lines: usize,
    /// Bytes of file text `read_file` returns at most per call (256 KiB).
    pub read_max_bytes: usize,
    /// Characters shown of one line by `read_file` and `search` before it is cut (2000).
    pub max_line_chars: usize,
    /// Entries `list_files` shows at most (1000).
    pub list_limit: usize,
    /// Paths `find_file` shows at most (200).
    pub find_limit: usize,
    /// Matching lines `search` shows at most (200).
    pub search_limit: usize,
    /// Files larger than this are skipped by `search` (4 MiB).
    pub search_max_file_bytes: u64,
    /// Lines of unified diff shown at most by `edit_file` and `write_file` (400).
    pub diff_max_lines: usize,
    /// Programs `run_command` may start, by bare name ([`DEFAULT_ALLOWED_COMMANDS`]).
    pub allowed_commands: Vec<String>,
    /// How long a command may run by default (60 s); a call may ask for less or up to
    /// `command_max_timeout`.
    pub command_timeout: Duration,
    /// The longest timeout a call may ask for (600 s).
    pub command_max_timeout: Duration,
    /// Bytes kept of each of stdout and stderr (32 KiB: the first and the last half).
    pub command_output_cap: usize,
    /// Environment variables passed on to commands, by name ([`DEFAULT_COMMAND_ENV`]); the
    /// rest of the host's environment (API keys included) is not.
    pub command_env: Vec<String>,
    /// Where `create_file`, `write_file` and `edit_file` record the files they change (none:
    /// nothing is recorded). A session shares one recorder with its tools and takes the
    /// record when a turn ends.
    pub record_changes: Option<ChangeRecorder>,
    /// The operating-system sandbox of `run_command` and the write check of the file tools
    /// ([`SandboxOptions`]: default workspace-write, network off). `None` (the library's
    /// default): commands run with the caller's rights, for hosts that confine them
    /// otherwise; qore's front ends always set it.
    pub sandbox: Option<SandboxOptions>,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            read_max_lines: 2000,
            read_max_bytes: 256 * 1024,
            max_line_chars: 2000,
            list_limit: 1000,
            find_limit: 200,
            search_limit: 200,
            search_max_file_bytes: 4 * 1024 * 1024,
            diff_max_lines: 400,
            allowed_commands: DEFAULT_ALLOWED_COMMANDS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            command_timeout: Duration::from_secs(60),
            command_max_timeout: Duration::from_secs(600),
            command_output_cap: 32 * 1024,
            command_env: DEFAULT_COMMAND_ENV.iter().map(|s| s.to_string()).collect(),
            record_changes: None,
            sandbox: None,
        }
    }
}

/// Every built-in tool over one sandbox, for one session (the [`Todo`] list lives as long as
/// the returned tools).
///
/// With [`ToolOptions::sandbox`] set, the sandbox is [`Sandbox::confined`] by its policy
/// first (unless it already is); when the policy cannot be made (the root vanished),
/// `run_command` refuses every call rather than run unconfined.
pub fn builtin_tools(sandbox: Sandbox, options: &ToolOptions) -> Vec<Arc<dyn Tool>> {
    let sandbox = Arc::new(run_command::confine_for(sandbox, options));
    let options = Arc::new(options.clone());
    vec![
        Arc::new(ListFiles::new(sandbox.clone(), options.clone())),
        Arc::new(FindFile::new(sandbox.clone(), options.clone())),
        Arc::new(ReadFile::new(sandbox.clone(), options.clone())),
        Arc::new(Search::new(sandbox.clone(), options.clone())),
        Arc::new(Todo::new()),
        Arc::new(CreateFile::new(sandbox.clone(), options.clone())),
        Arc::new(WriteFile::new(sandbox.clone(), options.clone())),
        Arc::new(EditFile::new(sandbox.clone(), options.clone())),
        Arc::new(RunCommand::new(sandbox, options)),
    ]
}

/// A `ToolSpec` from its parts.
fn spec(name: &str, description: &str, input_schema: serde_json::Value) -> qore_core::ToolSpec {
    qore_core::ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        input_schema,
    }
}

/// Records a change the tool made to `rel` when the options carry a recorder.
fn record_change(options: &ToolOptions, rel: &str, before: Option<&[u8]>, after: &[u8]) {
    if let Some(recorder) = &options.record_changes {
        recorder.record(rel, before, after);
    }
}

/// `requested` clamped to `1..=cap`, `cap` when absent.
fn clamp_limit(requested: Option<usize>, cap: usize) -> usize {
    requested.unwrap_or(cap).clamp(1, cap.max(1))
}
