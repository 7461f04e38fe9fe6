//! The crate's errors. Every one names the file it comes from; TOML errors and profile
//! mistakes add the line (1-based), body errors the `[body]` key path. It knows nothing of
//! the modules whose errors these are.

use std::path::PathBuf;

/// Why a profile, a partial or a rendering was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The file is not valid TOML, or a field has the wrong type.
    #[error("{}:{line}:{column}: {message}", file.display())]
    Toml {
        /// The file.
        file: PathBuf,
        /// The 1-based line of the problem.
        line: usize,
        /// The 1-based column of the problem.
        column: usize,
        /// What the TOML parser said.
        message: String,
    },
    /// A profile that parses but cannot be used (unknown parent, cycle, missing field).
    #[error("{}{}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Profile {
        /// The profile file.
        file: PathBuf,
        /// The line that set the offending key, when known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A `[body]` field that does not compile, render, or give valid JSON.
    #[error("{}: [body] {key}: {message}", file.display())]
    Body {
        /// The profile file whose `[body]` failed.
        file: PathBuf,
        /// The body key whose template failed (dotted for nested tables).
        key: String,
        /// What went wrong.
        message: String,
    },
    /// A file that cannot be read.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
}

impl AgentError {
    /// A TOML error of `file` (whose text is `text`), at its line and column.
    pub fn toml(file: &std::path::Path, text: &str, err: &toml::de::Error) -> AgentError {
        let (line, column) = err
            .span()
            .map_or((1, 1), |span| line_and_column(text, span.start));
        AgentError::Toml {
            file: file.to_owned(),
            line,
            column,
            message: err.message().trim().to_owned(),
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
pub fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A warning about a profile that still loads (an unknown key: a typo?).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The profile file.
    pub file: PathBuf,
    /// The 1-based line of the key warned about.
    pub line: usize,
    /// What is odd, with a suggestion when a known key is close.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}
