//! Settings merging, one table: a message, the settings after it, the keys warned about.

use qore_session::completion::clean::Mode;
use serde_json::{json, Value};

use super::{actions_from_config, default_actions, Action, Settings};

struct Case {
    name: &'static str,
    message: Value,
    /// Changes the defaults into the expected settings.
    expect: fn(&mut Settings),
    /// Keys the warnings name, in order.
    warned: &'static [&'static str],
}

#[test]
fn messages_merge_into_the_settings() {
    let cases = vec![
        Case {
            name: "null changes nothing",
            message: Value::Null,
            expect: |_| {},
            warned: &[],
        },
        Case {
            name: "the qore section",
            message: json!({"qore": {"enabled": false}, "other": {"enabled": true}}),
            expect: |s| s.enabled = false,
            warned: &[],
        },
        Case {
            name: "the object itself, every completion key",
            message: json!({"completion": {"agent": "fim", "prefixLines": 5, "suffixLines": 6,
                "mode": "single", "debounceMs": 0, "openDocuments": false,
                "openDocumentsBudget": 10}}),
            expect: |s| {
                let c = &mut s.completion;
                c.agent = Some("fim".into());
                (c.prefix_lines, c.suffix_lines, c.mode) = (5, 6, Mode::Single);
                (c.debounce_ms, c.open_documents, c.open_documents_budget) = (0, false, 10);
            },
            warned: &[],
        },
        Case {
            name: "refactor agent and actions; an empty agent is the roster",
            message: json!({"refactor": {"agent": "", "actions": [
                {"title": "Tidy", "instruction": "Tidy it."}]}}),
            expect: |s| {
                s.refactor.actions = vec![Action {
                    title: "Tidy".into(),
                    instruction: "Tidy it.".into(),
                }]
            },
            warned: &[],
        },
        Case {
            name: "unknown keys are ignored",
            message: json!({"colour": "red", "completion": {"speed": 11}}),
            expect: |_| {},
            warned: &[],
        },
        Case {
            name: "bad values keep the old ones and name their keys",
            message: json!({"enabled": "yes", "completion": {"mode": "sideways",
                "prefixLines": -1, "debounceMs": 1.5, "agent": 3},
                "refactor": {"actions": [{"title": "No instruction"}]}}),
            expect: |_| {},
            warned: &[
                "\"enabled\"",
                "\"completion.agent\"",
                "\"completion.prefixLines\"",
                "\"completion.mode\"",
                "\"completion.debounceMs\"",
                "\"refactor.actions\"",
            ],
        },
        Case {
            name: "a section that is no object",
            message: json!({"completion": 3, "refactor": null}),
            expect: |_| {},
            warned: &["\"completion\""],
        },
        Case {
            name: "a message that is no object",
            message: json!([1]),
            expect: |_| {},
            warned: &["settings ignored"],
        },
    ];
    for case in cases {
        let mut settings = Settings::default();
        let warnings = settings.apply(&case.message);
        let mut expected = Settings::default();
        (case.expect)(&mut expected);
        assert_eq!(settings, expected, "{}", case.name);
        assert_eq!(
            warnings.len(),
            case.warned.len(),
            "{}: {warnings:?}",
            case.name
        );
        for (warning, key) in warnings.iter().zip(case.warned) {
            assert!(
                warning.contains(key),
                "{}: {warning} lacks {key}",
                case.name
            );
        }
    }
}

/// A config.toml case: its name, the file (if any), the titles read or words of the error.
type ConfigCase = (
    &'static str,
    Option<&'static str>,
    Result<Option<Vec<&'static str>>, &'static str>,
);

#[test]
fn config_toml_gives_refactor_actions() {
    let cases: Vec<ConfigCase> = vec![
        ("no file", None, Ok(None)),
        ("no table", Some("[other]\nx = 1\n"), Ok(None)),
        (
            "two actions",
            Some(
                "[[refactor.actions]]\ntitle = \"A\"\ninstruction = \"a\"\n\
                  [[refactor.actions]]\ntitle = \"B\"\ninstruction = \"b\"\n",
            ),
            Ok(Some(vec!["A", "B"])),
        ),
        (
            "an action without instruction",
            Some("[[refactor.actions]]\ntitle = \"A\"\n"),
            Err("refactor.actions"),
        ),
        ("not TOML", Some("[[[\n"), Err("config.toml")),
    ];
    for (name, file, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = file {
            std::fs::write(dir.path().join("config.toml"), text).unwrap();
        }
        let got = actions_from_config(dir.path());
        match (got, expected) {
            (Ok(actions), Ok(titles)) => {
                let got = actions.map(|a| a.into_iter().map(|a| a.title).collect::<Vec<_>>());
                let titles = titles.map(|t| t.into_iter().map(String::from).collect());
                assert_eq!(got, titles, "{name}");
            }
            (Err(why), Err(words)) => assert!(why.contains(words), "{name}: {why}"),
            (got, expected) => panic!("{name}: {got:?} vs {expected:?}"),
        }
    }
    assert_eq!(default_actions().len(), 3);
}
