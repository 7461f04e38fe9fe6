//! `qore mcp add` / `qore mcp rm`: stdio servers written into and removed from an
//! `mcpServers` JSON file (`<config dir>/mcp.json`).
//!
//! Promises: everything else in the file (other servers, other keys) is kept; the file is
//! replaced atomically (a temporary file beside it, then a rename), its directory created
//! when missing; a file that is not an `mcpServers` object is an error naming it and is
//! left as it was.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::error::McpError;

/// Add (or replace) server `name` running `command` with `args` and `env`; `true` when it
/// replaced one.
pub fn add_server(
    path: &Path,
    name: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
) -> Result<bool, McpError> {
    if name.trim().is_empty() {
        return Err(McpError::Invalid {
            path: path.into(),
            server: name.into(),
            message: "a server needs a name".into(),
        });
    }
    let mut file = read(path)?;
    let mut entry = json!({"command": command, "args": args});
    if !env.is_empty() {
        entry["env"] = json!(env);
    }
    let replaced = servers(&mut file, path)?
        .insert(name.into(), entry)
        .is_some();
    write(path, &file)?;
    Ok(replaced)
}

/// Remove server `name`; `false` when the file has no such server (nothing is written).
pub fn remove_server(path: &Path, name: &str) -> Result<bool, McpError> {
    let mut file = read(path)?;
    if servers(&mut file, path)?.remove(name).is_none() {
        return Ok(false);
    }
    write(path, &file)?;
    Ok(true)
}

fn read(path: &Path) -> Result<Value, McpError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| McpError::Parse {
            path: path.into(),
            message: e.to_string(),
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(source) => Err(McpError::Read {
            path: path.into(),
            source,
        }),
    }
}

fn servers<'a>(file: &'a mut Value, path: &Path) -> Result<&'a mut Map<String, Value>, McpError> {
    let shape = || McpError::Parse {
        path: path.into(),
        message: "expected a JSON object whose \"mcpServers\" is an object".into(),
    };
    let object = file.as_object_mut().ok_or_else(shape)?;
    object
        .entry("mcpServers")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(shape)
}

fn write(path: &Path, file: &Value) -> Result<(), McpError> {
    let fail = |message: String| McpError::Write {
        path: path.into(),
        message,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    let mut text = serde_json::to_string_pretty(file).map_err(|e| fail(e.to_string()))?;
    text.push('\n');
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(e.to_string()))?;
    temp.write_all(text.as_bytes())
        .map_err(|e| fail(e.to_string()))?;
    temp.persist(path).map_err(|e| fail(e.error.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{McpConfig, Transport};

    #[test]
    fn servers_are_added_replaced_and_removed_keeping_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/mcp.json");
        let env = BTreeMap::from([("K".to_string(), "v".to_string())]);
        let args = vec!["-y".to_string(), "pkg".to_string()];
        assert!(!add_server(&path, "a", "npx", &args, &env).unwrap());
        assert!(add_server(&path, "a", "uvx", &[], &BTreeMap::new()).unwrap());
        assert!(!add_server(&path, "b", "npx", &args, &env).unwrap());
        let config = McpConfig::load(Some(&dir.path().join("sub")), None);
        assert!(config.errors.is_empty(), "{:?}", config.errors);
        let Transport::Stdio {
            command,
            args: b_args,
            env: b_env,
            ..
        } = &config.get("b").unwrap().transport
        else {
            panic!("stdio")
        };
        assert_eq!((command.as_str(), b_args, b_env), ("npx", &args, &env));
        assert!(remove_server(&path, "a").unwrap());
        assert!(!remove_server(&path, "a").unwrap());

        // Other keys survive; a file of the wrong shape is an error and stays as it was.
        std::fs::write(&path, r#"{"globalShortcut": "x", "mcpServers": {}}"#).unwrap();
        add_server(&path, "c", "c", &[], &BTreeMap::new()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("globalShortcut") && text.contains("\"c\""),
            "{text}"
        );
        for bad in ["[]", r#"{"mcpServers": []}"#, "{"] {
            std::fs::write(&path, bad).unwrap();
            let err = add_server(&path, "d", "d", &[], &BTreeMap::new()).unwrap_err();
            assert!(err.to_string().contains("mcp.json"), "{err}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
        }
    }
}
