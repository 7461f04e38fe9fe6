//! qore-config: the one loader of `<config dir>/config.toml`, the file whose tables several
//! crates read (`[serve]` by qore-serve, `[mcp_servers.NAME]` by qore-mcp,
//! `[[refactor.actions]]` by qore-lsp). Each crate keeps the meaning of its own section;
//! reading the file, parsing it and naming what is wrong happen here.
//!
//! Promises:
//! - [`ConfigFile::read`]`(dir)` reads `<dir>/config.toml`; a file that does not exist is
//!   `Ok(None)` (no config is a fine config);
//! - [`ConfigFile::at`]`(path)` reads a file the user named; one that does not exist is an
//!   error naming it;
//! - the file is read and parsed once; [`ConfigFile::section`] deserializes one top-level
//!   table (or value) from that parse into the caller's type, `Ok(None)` when it is absent;
//!   any number of sections come from the one parse;
//! - every [`ConfigError`] names the file ([`ConfigFile::path`]) and is one line; a syntax
//!   error gives its line; a section that does not fit its type gives the section's name,
//!   the line of the fault when the parser knows it and the line the section starts on
//!   (found by going over the text again, only when there is an error to report);
//! - [`ConfigFile::invalid`] makes the same kind of error for a value the section's type let
//!   through but its reader refuses (file, section, the line it starts on);
//! - nothing here panics on what a file says.

mod error;
mod locate;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

pub use error::ConfigError;

/// The file's name inside the config dir.
pub const FILE_NAME: &str = "config.toml";

/// One parsed config file.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    path: PathBuf,
    text: String,
    table: toml::Table,
}

impl ConfigFile {
    /// `<dir>/config.toml`, or `None` when there is no such file.
    pub fn read(dir: &Path) -> Result<Option<ConfigFile>, ConfigError> {
        let path = dir.join(FILE_NAME);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(path, text).map(Some),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ConfigError::Read { path, source }),
        }
    }

    /// The file at `path`, which must exist (the user named it).
    pub fn at(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.into(),
            source,
        })?;
        Self::parse(path.into(), text)
    }

    /// `text`, as the contents of the file at `path`.
    pub fn parse(path: PathBuf, text: String) -> Result<ConfigFile, ConfigError> {
        match text.parse::<toml::Table>() {
            Ok(table) => Ok(ConfigFile { path, text, table }),
            Err(err) => Err(ConfigError::Syntax {
                line: err
                    .span()
                    .and_then(|span| locate::line_of(&text, span.start)),
                message: locate::one_line(err.message()),
                path,
            }),
        }
    }

    /// The file this came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The top-level table (or value) `key` as a `T`; `Ok(None)` when the file has none.
    pub fn section<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ConfigError> {
        let Some(value) = self.table.get(key) else {
            return Ok(None);
        };
        match value.clone().try_into::<T>() {
            Ok(section) => Ok(Some(section)),
            Err(err) => Err(self.section_error(key, locate::fault::<T>(&self.text, key), err)),
        }
    }

    /// An error about section `key` that its reader found (a value the type let through
    /// but the reader refuses), naming the file, the section and the line it starts on.
    pub fn invalid(&self, key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::Section {
            path: self.path.clone(),
            section: key.into(),
            line: None,
            section_line: self.section_line(key),
            message: locate::one_line(&message.into()),
        }
    }

    /// The line section `key` starts on, when it is there and its start is known.
    pub fn section_line(&self, key: &str) -> Option<usize> {
        locate::start(&self.text, key).and_then(|start| locate::line_of(&self.text, start))
    }

    fn section_error(
        &self,
        key: &str,
        located: Option<toml::de::Error>,
        err: toml::de::Error,
    ) -> ConfigError {
        // The pass over the text knows where the fault is; the parsed value only what.
        let (line, message) = match &located {
            Some(found) => (
                (found.span())
                    .filter(|span| !span.is_empty())
                    .and_then(|span| locate::line_of(&self.text, span.start)),
                found.message(),
            ),
            None => (None, err.message()),
        };
        ConfigError::Section {
            path: self.path.clone(),
            section: key.into(),
            line,
            section_line: self.section_line(key),
            message: locate::one_line(message),
        }
    }
}

#[cfg(test)]
mod tests;
