//! The loader's error type.
//!
//! Promises: every error names the file; a syntax error gives its line, a section whose
//! value has the wrong shape gives the section's name, the line of the fault when the
//! parser knows it and the line the section starts on; the message is one line.

use std::path::PathBuf;

/// What went wrong reading a config file or one of its sections.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read (or, when the user named it, does not exist).
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not TOML.
    #[error("{}{}: {message}", .path.display(), place(*.line))]
    Syntax {
        path: PathBuf,
        /// 1-based.
        line: Option<usize>,
        message: String,
    },
    /// A top-level table (or value) that its reader cannot use.
    #[error("{}{}: {message}", .path.display(), section_place(section, *.line, *.section_line))]
    Section {
        path: PathBuf,
        /// The top-level key, `serve` for `[serve]`.
        section: String,
        /// Where the fault is, 1-based, when known.
        line: Option<usize>,
        /// Where the section starts, 1-based, when known.
        section_line: Option<usize>,
        message: String,
    },
}

impl ConfigError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            ConfigError::Read { path, .. }
            | ConfigError::Syntax { path, .. }
            | ConfigError::Section { path, .. } => path,
        }
    }

    /// The line of the fault, else of the section, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            ConfigError::Read { .. } => None,
            ConfigError::Syntax { line, .. } => *line,
            ConfigError::Section {
                line, section_line, ..
            } => line.or(*section_line),
        }
    }
}

fn place(line: Option<usize>) -> String {
    line.map_or(String::new(), |n| format!(": line {n}"))
}

fn section_place(section: &str, line: Option<usize>, start: Option<usize>) -> String {
    match (line, start) {
        (Some(line), Some(start)) if line != start => {
            format!(": line {line} in [{section}] (from line {start})")
        }
        (Some(line), _) | (None, Some(line)) => format!(": line {line} in [{section}]"),
        (None, None) => format!(": in [{section}]"),
    }
}
