//! The process's two outputs: stdout for the answer (and JSON lines), stderr for notes.
//!
//! Promises:
//! - nothing here panics on a closed stdout (`qore run … | head -c 10`): the first write
//!   that fails marks stdout closed, cancels the token given to [`cancel_on_closed_stdout`]
//!   (the run stops and its connection is dropped), and later writes are skipped; the
//!   command then exits with [`CLOSED_STDOUT`] and prints nothing more;
//! - [`note!`] lines go to stderr unless `-q/--quiet` was given ([`set_quiet`]); errors are
//!   not notes and are always shown.
//! - styles (colours, bold, dim) are written to a stream only when it is a terminal, `--plain`
//!   was not given ([`set_plain`]), `NO_COLOR` is unset or empty (no-color.org) and `TERM` is
//!   not `dumb` ([`styled_stdout`], [`styled_stderr`]); otherwise what is written is exactly
//!   the text, byte for byte.

use std::io::{IsTerminal as _, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use qore_client::CancellationToken;

/// Exit code of a command whose stdout was closed early (128 + SIGPIPE, as a shell reports
/// a program killed by a broken pipe).
pub const CLOSED_STDOUT: u8 = 141;

static QUIET: AtomicBool = AtomicBool::new(false);
static PLAIN: AtomicBool = AtomicBool::new(false);
static CLOSED: AtomicBool = AtomicBool::new(false);
static ON_CLOSED: OnceLock<CancellationToken> = OnceLock::new();

/// `-q/--quiet`: hide notes, reasoning and tool activity.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// `--plain`: the answer exactly as the model wrote it, also on a terminal.
pub fn set_plain(plain: bool) {
    PLAIN.store(plain, Ordering::Relaxed);
}

/// Styles may be written at all: not `--plain`, `NO_COLOR` unset or empty, `TERM` not `dumb`.
fn styles_allowed() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
    !PLAIN.load(Ordering::Relaxed) && !no_color && !dumb
}

/// The answer on stdout is rendered (Markdown, colours): stdout is a terminal and styles
/// are allowed.
pub fn styled_stdout() -> bool {
    styles_allowed() && std::io::stdout().is_terminal()
}

/// Styles on stderr (dimmed reasoning, coloured diffs): stderr is a terminal and styles are
/// allowed.
pub fn styled_stderr() -> bool {
    styles_allowed() && std::io::stderr().is_terminal()
}

/// Columns of the terminal on stdout; else `COLUMNS`; else 80.
pub fn width() -> usize {
    if let Some((terminal_size::Width(columns), _)) =
        terminal_size::terminal_size_of(std::io::stdout())
    {
        return usize::from(columns);
    }
    (std::env::var("COLUMNS").ok())
        .and_then(|columns| columns.trim().parse().ok())
        .filter(|columns| *columns > 0)
        .unwrap_or(80)
}

/// 24-bit colours where the terminal says it has them (`COLORTERM` of `truecolor` or
/// `24bit`), else the 256-colour palette.
pub fn true_colour() -> bool {
    std::env::var("COLORTERM").is_ok_and(|value| matches!(value.as_str(), "truecolor" | "24bit"))
}

/// Cancel `token` when stdout turns out to be closed.
pub fn cancel_on_closed_stdout(token: &CancellationToken) {
    let _ = ON_CLOSED.set(token.clone());
    if stdout_closed() {
        token.cancel();
    }
}

/// A write to stdout failed: the reader went away.
pub fn stdout_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Write `text` to stdout and flush; `false` (and stdout marked closed) when that fails.
pub fn out(text: &str) -> bool {
    if stdout_closed() {
        return false;
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    if written.is_err() {
        CLOSED.store(true, Ordering::Relaxed);
        if let Some(token) = ON_CLOSED.get() {
            token.cancel();
        }
        return false;
    }
    true
}

/// `println!` onto stdout through [`out`].
macro_rules! outln {
    () => {
        $crate::console::out("\n")
    };
    ($($arg:tt)*) => {
        $crate::console::out(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` unless `--quiet`.
macro_rules! note {
    ($($arg:tt)*) => {
        if !$crate::console::quiet() {
            eprintln!($($arg)*);
        }
    };
}

pub(crate) use {note, outln};
