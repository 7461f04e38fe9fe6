//! Where the chat's lines come from: the line editor on a terminal, or stdin line by line
//! when it is not one (chat is scriptable: each line is one message or command).
//!
//! Promises: the editor (rustyline) runs on a thread of its own, so the runtime never blocks
//! on a key press; its history is the data dir's `chat_history` (a history that cannot be
//! read or written costs the history, never the chat), shared by every chat of the data dir:
//! it is read when the editor starts and each prompt is appended to it as soon as it is
//! entered, so Up and Ctrl-R (reverse search) in a chat started later find it; a multi-line
//! paste (bracketed paste) is inserted whole and sent as one message by Enter; Tab after an
//! `@` completes a path of the project ([`MentionHelper`]); on a terminal a line ending in `\`
//! continues on the next one and Alt-Enter inserts a new line; Ctrl-C at the prompt is
//! [`Read::Interrupted`] (the chat goes on), Ctrl-D is [`Read::End`]. Piped stdin is read by
//! one [`StdinLines`], shared with a JSON approver so that no line goes to the wrong reader.

use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{Cmd, CompletionType, Config, Editor, KeyCode, KeyEvent, Modifiers};
use tokio::sync::oneshot;

use super::mention::MentionHelper;
use crate::approve::StdinLines;
use crate::console::note;

/// The editor's history file in the data dir.
pub const HISTORY_FILE: &str = "chat_history";

/// The editor's history file in the data dir (created when missing), shared by every chat.
pub fn history_file() -> Option<PathBuf> {
    let dir = qore_store::data_dir().ok()?;
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir.join(HISTORY_FILE))
}

/// Prompts the history keeps (the oldest go first).
const HISTORY_SIZE: usize = 1000;

/// What one read gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D, or the end of stdin.
    End,
}

/// A question for the editor thread: the prompt, whether the answer goes into the history,
/// and where to send it.
struct Ask {
    prompt: String,
    remember: bool,
    answer: oneshot::Sender<Read>,
}

/// The line editor, on its own thread.
#[derive(Clone)]
pub struct Terminal {
    asks: std_mpsc::Sender<Ask>,
}

impl Terminal {
    /// Start the editor thread with the history at `history` (none: no history kept),
    /// completing `@` paths in `project`.
    pub fn start(history: Option<PathBuf>, project: Option<&Path>) -> Result<Terminal, String> {
        let cannot = |err| format!("the line editor cannot start: {err}");
        let config = Config::builder()
            .max_history_size(HISTORY_SIZE)
            .map_err(cannot)?
            .completion_type(CompletionType::List)
            .bracketed_paste(true)
            .build();
        let mut editor =
            Editor::<MentionHelper, FileHistory>::with_config(config).map_err(cannot)?;
        editor.set_helper(Some(MentionHelper::new(project)));
        editor.bind_sequence(KeyEvent(KeyCode::Enter, Modifiers::ALT), Cmd::Newline);
        if let Some(path) = &history {
            match editor.load_history(path) {
                Ok(()) => {}
                Err(ReadlineError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => note!(
                    "qore: the chat history {} is not read: {err}",
                    path.display()
                ),
            }
        }
        let (asks, questions) = std_mpsc::channel::<Ask>();
        std::thread::spawn(move || {
            for ask in questions {
                let read = match editor.readline(&ask.prompt) {
                    Ok(line) => {
                        if ask.remember && !line.trim().is_empty() {
                            remember(&mut editor, &line, history.as_deref());
                        }
                        Read::Line(line)
                    }
                    Err(ReadlineError::Interrupted) => Read::Interrupted,
                    Err(ReadlineError::Eof) => Read::End,
                    Err(err) => {
                        eprintln!("qore: cannot read the terminal: {err}");
                        Read::End
                    }
                };
                let _ = ask.answer.send(read);
            }
        });
        Ok(Terminal { asks })
    }

    /// Show `prompt` and read one line; `remember`: keep it in the history.
    pub async fn read(&self, prompt: &str, remember: bool) -> Read {
        let (answer, reply) = oneshot::channel();
        let ask = Ask {
            prompt: prompt.to_owned(),
            remember,
            answer,
        };
        if self.asks.send(ask).is_err() {
            return Read::End;
        }
        reply.await.unwrap_or(Read::End)
    }
}

fn remember(
    editor: &mut Editor<MentionHelper, FileHistory>,
    line: &str,
    path: Option<&std::path::Path>,
) {
    let _ = editor.add_history_entry(line);
    if let Some(path) = path {
        if let Err(err) = editor.append_history(path) {
            note!(
                "qore: the chat history {} is not written: {err}",
                path.display()
            );
        }
    }
}

/// The chat's source of lines.
pub enum Input {
    Terminal(Terminal),
    Piped(Arc<StdinLines>),
}

impl Input {
    /// One message or command: on a terminal, lines ending in `\` are joined (with new
    /// lines) to the next.
    pub async fn next(&self) -> Read {
        match self {
            Input::Piped(lines) => match lines.next().await {
                Some(line) => Read::Line(line),
                None => Read::End,
            },
            Input::Terminal(terminal) => {
                let mut text = String::new();
                let mut prompt = "> ";
                loop {
                    let line = match terminal.read(prompt, true).await {
                        Read::Line(line) => line,
                        // Ctrl-C in a continued message drops it; Ctrl-D sends what there is.
                        Read::End if !text.is_empty() => return Read::Line(text),
                        other => return other,
                    };
                    match line.strip_suffix('\\') {
                        Some(head) => {
                            text.push_str(head);
                            text.push('\n');
                            prompt = "... ";
                        }
                        None => {
                            text.push_str(&line);
                            return Read::Line(text);
                        }
                    }
                }
            }
        }
    }
}
