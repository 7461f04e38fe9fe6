//! `qore chat`: the interactive REPL on a saved session.
//!
//! Promises:
//! - On a terminal (stdin and stderr): the line editor ([`input`]), slash commands
//!   ([`command`]), answers streamed to stdout as they come, tool approvals asked through
//!   the editor ([`approve`]). Otherwise each stdin line is one message or command, so chat
//!   is scriptable; `--json` prints the events of `run --json`, after a first
//!   `{"type":"session","id":…}` line (again after `/new` and `/switch`, and with
//!   `"compressed_from"` when the session goes on in a compressed one: `/compress` or
//!   automatically before a send).
//! - On a terminal, a tool call waiting for approval first shows what it would change (a
//!   coloured diff, or the command and its directory), each answer is followed by a status
//!   line on stderr ([`status`]), and `/diff` shows what the last turn changed ([`changes`]).
//! - Ctrl-C cancels the turn in flight and the chat goes on with the session's earlier
//!   turns ([`interrupt`]); at the prompt it does nothing; Ctrl-D (the end of stdin) exits 0.
//! - The conversation is a qore-session `Session` ([`conversation`]): each turn is saved in
//!   the store (`--store`, else `QORE_DATA_DIR`'s file) as it ends, a cancelled or failed one without its partial
//!   answer, so the history stays well-formed; `--ephemeral` saves nothing.

mod approve;
mod changes;
mod command;
mod conversation;
mod input;
mod interrupt;
mod mention;
mod repl;
pub(crate) mod status;
pub(crate) mod timing;

use std::process::ExitCode;

use clap::Args;

use crate::{EndpointArgs, TargetArgs, ToolArgs};

pub use mention::attach_words;
pub use repl::chat;

/// What `qore chat` talks to and keeps.
#[derive(Args, Clone)]
pub struct ChatArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub tools: ToolArgs,
    #[command(flatten)]
    pub show: crate::flags::ShowArgs,
    /// Continue this session (id, unique id prefix or name); a name that is not taken
    /// starts a session with that name. Default: a new session.
    #[arg(long, value_name = "ID|NAME")]
    pub session: Option<String>,
    /// Continue the most recent session of the project (a new one when it has none).
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub continue_session: bool,
    /// Save nothing: the chat is forgotten when it ends.
    #[arg(long, conflicts_with_all = ["session", "continue_session"])]
    pub ephemeral: bool,
}

/// Exit code of a chat whose last turn failed or that could not start.
const FAILURE: ExitCode = ExitCode::FAILURE;
