//! Per-agent model overrides: `agent_models.toml` (qore's, `[models]` table) and the seed's
//! `agent_models.json` (an object of agent name → model), both in the config dir.
//!
//! Promises:
//! - a missing file is no overrides; a file that does not parse is an error naming it (and
//!   its line for TOML, line and column for JSON), and nothing of it is used;
//! - both files are read; on a name both set, `agent_models.toml` wins (it is the file
//!   `qore agents set-model` writes, so the latest choice wins);
//! - [`write()`] writes every override to `agent_models.toml`, keys quoted when needed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use qore_core::ErrorInfo;

use crate::error::AgentError;

/// qore's overrides file.
pub const TOML_FILE: &str = "agent_models.toml";
/// The seed's overrides file.
pub const JSON_FILE: &str = "agent_models.json";

/// The overrides of config dir `dir`, and the errors of files that could not be read.
pub fn read(dir: &Path) -> (BTreeMap<String, String>, Vec<AgentError>) {
    let mut overrides = BTreeMap::new();
    let mut errors = Vec::new();
    for (name, parse) in [(JSON_FILE, parse_json as Parse), (TOML_FILE, parse_toml)] {
        let path = dir.join(name);
        let parsed = match std::fs::read_to_string(&path) {
            Ok(text) => parse(&path, &text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => Err(AgentError::Io {
                path: path.clone(),
                message: err.to_string(),
            }),
        };
        match parsed {
            Ok(models) => overrides.extend(models),
            Err(err) => errors.push(err),
        }
    }
    (overrides, errors)
}

type Parse = fn(&Path, &str) -> Result<BTreeMap<String, String>, AgentError>;

fn parse_toml(path: &Path, text: &str) -> Result<BTreeMap<String, String>, AgentError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        models: BTreeMap<String, String>,
    }
    toml::from_str::<File>(text)
        .map(|f| f.models)
        .map_err(|err| AgentError::toml(path, text, &err))
}

fn parse_json(path: &Path, text: &str) -> Result<BTreeMap<String, String>, AgentError> {
    serde_json::from_str(text).map_err(|err| AgentError::Toml {
        file: path.to_owned(),
        line: err.line(),
        column: err.column(),
        message: format!("expected an object of agent name to model: {err}"),
    })
}

/// Write `overrides` to `agent_models.toml` in `dir`; the file's path.
pub fn write(dir: &Path, overrides: &BTreeMap<String, String>) -> Result<PathBuf, ErrorInfo> {
    let mut text = String::from(
        "# Model overrides: `qore agents set-model NAME MODEL` writes this file.\n[models]\n",
    );
    for (agent, model) in overrides {
        text.push_str(&format!("{} = {}\n", toml_key(agent), toml_string(model)));
    }
    std::fs::create_dir_all(dir)
        .map_err(|err| ErrorInfo::config(format!("{}: {err}", dir.display())))?;
    let path = dir.join(TOML_FILE);
    std::fs::write(&path, text)
        .map_err(|err| ErrorInfo::config(format!("{}: {err}", path.display())))?;
    Ok(path)
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn toml_key(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        s.to_owned()
    } else {
        toml_string(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_toml_are_read_and_toml_wins() {
        let dir = std::env::temp_dir().join(format!("qore-overrides-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(JSON_FILE),
            r#"{"Claude Sonnet": "claude-sonnet-4-5", "gemini-chat": "from-json"}"#,
        )
        .unwrap();
        write(
            &dir,
            &BTreeMap::from([("gemini-chat".into(), "from-toml".into())]),
        )
        .unwrap();
        let (models, errors) = read(&dir);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(models["Claude Sonnet"], "claude-sonnet-4-5");
        assert_eq!(models["gemini-chat"], "from-toml");
        std::fs::write(dir.join(JSON_FILE), "{\n  \"a\": 1\n}").unwrap();
        let (models, errors) = read(&dir);
        assert_eq!(models.len(), 1, "only the TOML file's");
        let error = errors[0].to_string();
        assert!(error.contains("agent_models.json:2:"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
