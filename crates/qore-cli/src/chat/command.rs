//! The chat's slash commands: one input line parsed into a [`Line`], and the `/help` text.
//!
//! Promises: a line whose first character is `/` is a command (`//text` sends `/text` as a
//! message); a known command with a missing or extra argument, or an unknown command, is an
//! [`Line::Invalid`] with a message that says what was meant (the closest command name,
//! by edit distance, for a typo), never a message sent to the model.

/// One parsed input line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A message for the model.
    Message(String),
    /// Nothing but whitespace: nothing to do.
    Empty,
    Command(Command),
    /// A line that starts with `/` but is not a command: what to tell the user.
    Invalid(String),
}

/// A slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    /// Start a new session (the current one stays on disk).
    New,
    /// List this project's sessions.
    Sessions,
    /// Continue another session: its id, unique id prefix or name.
    Switch(String),
    /// Talk to another agent from the next turn on.
    Agent(String),
    /// Use another model from the next turn on.
    Model(String),
    Compress,
    Undo,
    /// What the last turn changed, a unified diff per file.
    Diff,
    Tokens,
    /// Write the session to this file.
    Export(String),
    /// List the session's "always" approvals, or revoke the one of this tool.
    Approvals(Option<String>),
    Exit,
}

/// What a command takes after its name.
#[derive(Clone, Copy)]
enum Takes {
    Nothing,
    /// One argument (the rest of the line, trimmed), shown in help as the given word.
    One(&'static str),
    /// Nothing, or `revoke` and one argument, shown in help as the given word.
    Revoke(&'static str),
}

/// Name, argument, help line.
const COMMANDS: &[(&str, Takes, &str)] = &[
    ("help", Takes::Nothing, "this help"),
    (
        "new",
        Takes::Nothing,
        "start a new session (this one stays saved)",
    ),
    ("sessions", Takes::Nothing, "list this project's sessions"),
    (
        "switch",
        Takes::One("ID"),
        "continue another session (id, id prefix or name)",
    ),
    (
        "agent",
        Takes::One("NAME"),
        "talk to another agent from the next message on",
    ),
    (
        "model",
        Takes::One("MODEL"),
        "use another model from the next message on",
    ),
    (
        "compress",
        Takes::Nothing,
        "summarise the older turns into a new session",
    ),
    (
        "undo",
        Takes::Nothing,
        "undo the last turn: its files put back, the turn out of the history",
    ),
    (
        "diff",
        Takes::Nothing,
        "what the last turn changed, a unified diff per file",
    ),
    (
        "tokens",
        Takes::Nothing,
        "the session's token estimate against the context window",
    ),
    (
        "export",
        Takes::One("FILE"),
        "write the session to FILE (qore's JSON; Markdown for .md)",
    ),
    (
        "approvals",
        Takes::Revoke("TOOL"),
        "list the tools allowed always in this session; `revoke TOOL` asks again",
    ),
    ("exit", Takes::Nothing, "leave (Ctrl-D does the same)"),
];

/// Parse one input line (without its line ending).
pub fn parse(line: &str) -> Line {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Line::Empty;
    }
    if let Some(escaped) = trimmed.strip_prefix("//") {
        return Line::Message(format!("/{escaped}"));
    }
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Line::Message(line.to_owned());
    };
    let (name, argument) = match rest.split_once(char::is_whitespace) {
        Some((name, argument)) => (name, argument.trim()),
        None => (rest, ""),
    };
    let Some(&(name, takes, _)) = COMMANDS.iter().find(|(known, ..)| *known == name) else {
        return Line::Invalid(unknown(name));
    };
    match (takes, argument.is_empty()) {
        (Takes::Nothing, true) => Line::Command(without_argument(name)),
        (Takes::Nothing, false) => Line::Invalid(format!("/{name} takes no argument")),
        (Takes::One(word), true) => Line::Invalid(format!("/{name} needs {word}: /{name} {word}")),
        (Takes::One(_), false) => Line::Command(with_argument(name, argument.to_owned())),
        (Takes::Revoke(_), true) => Line::Command(Command::Approvals(None)),
        (Takes::Revoke(word), false) => match argument.split_once(char::is_whitespace) {
            Some(("revoke", tool)) => Line::Command(Command::Approvals(Some(tool.trim().into()))),
            _ => Line::Invalid(format!("/{name} lists; /{name} revoke {word} revokes one")),
        },
    }
}

fn without_argument(name: &str) -> Command {
    match name {
        "new" => Command::New,
        "sessions" => Command::Sessions,
        "compress" => Command::Compress,
        "undo" => Command::Undo,
        "diff" => Command::Diff,
        "tokens" => Command::Tokens,
        "exit" => Command::Exit,
        _ => Command::Help,
    }
}

fn with_argument(name: &str, argument: String) -> Command {
    match name {
        "switch" => Command::Switch(argument),
        "agent" => Command::Agent(argument),
        "model" => Command::Model(argument),
        _ => Command::Export(argument),
    }
}

/// The message for an unknown command: the one command it begins, else the closest one
/// within two edits.
fn unknown(name: &str) -> String {
    let names = || COMMANDS.iter().map(|(known, ..)| *known);
    let mut extended = names().filter(|known| !name.is_empty() && known.starts_with(name));
    let meant = match (extended.next(), extended.next()) {
        (Some(known), None) => Some(known),
        _ => names()
            .map(|known| (strsim::damerau_levenshtein(name, known), known))
            .min()
            .filter(|(distance, _)| *distance <= 2)
            .map(|(_, known)| known),
    };
    match meant {
        Some(known) => {
            format!("unknown command /{name}; did you mean /{known}? (/help lists them)")
        }
        None => format!("unknown command /{name} (/help lists them)"),
    }
}

/// The `/help` text.
pub fn help() -> String {
    let mut text = String::from("Commands:\n");
    for (name, takes, about) in COMMANDS {
        let usage = match takes {
            Takes::Nothing => format!("/{name}"),
            Takes::One(word) => format!("/{name} {word}"),
            Takes::Revoke(word) => format!("/{name} [revoke {word}]"),
        };
        text.push_str(&format!("  {usage:<16} {about}\n"));
    }
    text.push_str(
        "Anything else is sent to the model (`//text` sends `/text`).\n\
         A line ending in \\ continues on the next line; Alt-Enter inserts a new line.\n\
         @path attaches a project file (or a directory's listing); Tab completes the path.\n\
         Ctrl-C cancels the answer being written (the session keeps what came before); \
         Ctrl-D leaves.\n",
    );
    text
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
