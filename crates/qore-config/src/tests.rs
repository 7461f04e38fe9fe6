//! The loader, one table of files: what each section reads as, or the words of the error.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{ConfigError, ConfigFile};

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Serve {
    listen: Option<String>,
    drain_timeout_secs: Option<u64>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Server {
    command: String,
}

/// What a case checks once the file is read.
enum Expect {
    /// No file at all.
    NoFile,
    /// Both sections, as debug text (`None` when absent).
    Sections(Option<&'static str>, Option<&'static str>),
    /// Reading fails: these words, and the line the error gives.
    Error(&'static [&'static str], Option<usize>),
}

/// Reads `[serve]` and `[mcp_servers]` from one parse, as `Debug` text.
fn both(file: &ConfigFile) -> Result<(Option<String>, Option<String>), ConfigError> {
    let serve = file.section::<Serve>("serve")?;
    let servers = file.section::<BTreeMap<String, Server>>("mcp_servers")?;
    Ok((
        serve.map(|s| format!("{s:?}")),
        servers.map(|s| format!("{s:?}")),
    ))
}

#[test]
fn files_and_sections_read_or_name_the_fault() {
    let cases: &[(&str, Option<&str>, Expect)] = &[
        ("absent file", None, Expect::NoFile),
        (
            "two sections from one parse",
            Some(
                "model = \"o4\"\n[mcp_servers.x]\ncommand = \"y\"\n\n[serve]\n\
                 listen = \"0.0.0.0:9000\"\n",
            ),
            Expect::Sections(
                Some("Serve { listen: Some(\"0.0.0.0:9000\"), drain_timeout_secs: None }"),
                Some("{\"x\": Server { command: \"y\" }}"),
            ),
        ),
        (
            "absent sections",
            Some("[other]\nx = 1\n"),
            Expect::Sections(None, None),
        ),
        (
            "syntax error with its line",
            Some("[serve]\nlisten = \n"),
            Expect::Error(&["config.toml: line 2: "], Some(2)),
        ),
        (
            "a header cut short",
            Some("a = 1\n[serve\n"),
            Expect::Error(&["config.toml: line 2: ", "invalid table header"], Some(2)),
        ),
        (
            "wrong type: file, section, line",
            Some("[serve]\nlisten = \"x\"\ndrain_timeout_secs = \"soon\"\n"),
            Expect::Error(
                &[
                    "config.toml: line 3 in [serve] (from line 1): ",
                    "invalid type: string",
                ],
                Some(3),
            ),
        ),
        (
            "unknown field, deny_unknown_fields",
            Some("\n[serve]\nlisen = \"1\"\n"),
            Expect::Error(
                &["config.toml: line 3 in [serve] (from line 2): ", "lisen"],
                Some(3),
            ),
        ),
        (
            "a table named only by its children's headers",
            Some("a = 1\n\n[mcp_servers.x]\ncommand = 3\n"),
            Expect::Error(
                &[
                    "config.toml: line 4 in [mcp_servers] (from line 3): ",
                    "integer `3`",
                ],
                Some(4),
            ),
        ),
        (
            "a section of the wrong shape altogether",
            Some("a = 1\nmcp_servers = [1]\n"),
            Expect::Error(
                &["config.toml: line 2 in [mcp_servers]: ", "expected a map"],
                Some(2),
            ),
        ),
    ];
    for (name, text, expect) in cases {
        let dir = tempfile_dir(name);
        if let Some(text) = text {
            std::fs::write(dir.join("config.toml"), text).expect("write");
        }
        let got = ConfigFile::read(&dir).and_then(|file| file.map(|f| both(&f)).transpose());
        match (got, expect) {
            (Ok(None), Expect::NoFile) => {}
            (Ok(Some((serve, servers))), Expect::Sections(want_serve, want_servers)) => {
                assert_eq!(serve.as_deref(), *want_serve, "{name}");
                assert_eq!(servers.as_deref(), *want_servers, "{name}");
            }
            (Err(err), Expect::Error(words, line)) => {
                let message = err.to_string();
                for word in *words {
                    assert!(message.contains(word), "{name}: {message:?} lacks {word:?}");
                }
                assert!(!message.contains('\n'), "{name}: {message:?} is one line");
                assert_eq!(err.line(), *line, "{name}: {message}");
                assert_eq!(err.path(), dir.join("config.toml"), "{name}");
            }
            (Ok(got), _) => panic!("{name}: read {got:?}"),
            (Err(err), _) => panic!("{name}: {err}"),
        }
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}

#[test]
fn a_named_file_must_exist_and_readers_can_refuse_a_section() {
    let dir = tempfile_dir("named");
    let path = dir.join("serve.toml");
    let err = ConfigFile::at(&path).expect_err("absent");
    assert!(matches!(err, ConfigError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("serve.toml"), "{err}");

    std::fs::write(&path, "# mine\n[[refactor.actions]]\ntitle = \"A\"\n").expect("write");
    let file = ConfigFile::at(&path).expect("reads");
    assert_eq!(file.path(), path);
    assert_eq!(file.section_line("refactor"), Some(2));
    let err = file.invalid("refactor", "refactor.actions needs an instruction");
    let message = err.to_string();
    assert!(
        message
            .ends_with("serve.toml: line 2 in [refactor]: refactor.actions needs an instruction"),
        "{message}"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// A fresh directory of the test's own under the system's temp dir.
fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let tag: String = name.chars().filter(char::is_ascii_alphanumeric).collect();
    let dir = std::env::temp_dir().join(format!("qore-config-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
