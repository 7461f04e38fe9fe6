use std::path::Path;

use super::{project_rules, Layers};

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn prompt(agent: Option<&str>, dir: &Path, additions: &[&str]) -> Option<String> {
    let mut layers = Layers::new(agent.map(Into::into))
        .with_project_rules(dir)
        .unwrap();
    for addition in additions {
        layers.add(*addition);
    }
    layers.system_prompt()
}

#[test]
fn layers_come_in_their_documented_order() {
    // (case, agent prompt, project files, additions, system prompt)
    type Case = (
        &'static str,
        Option<&'static str>,
        Vec<(&'static str, &'static str)>,
        Vec<&'static str>,
        Option<&'static str>,
    );
    let cases: Vec<Case> = vec![
        ("nothing: no system prompt", None, vec![], vec![], None),
        (
            "the agent alone",
            Some("Be brief."),
            vec![],
            vec![],
            Some("Be brief."),
        ),
        (
            "agent, AGENTS.md, rules sorted by name, additions",
            Some("Be brief."),
            vec![
                (".qore/rules/b.md", "Rule B."),
                ("AGENTS.md", "Use tabs.\n"),
                (".qore/rules/a.md", "Rule A."),
                (".qore/rules/notes.txt", "not a rule"),
            ],
            vec!["Session one.", "Session two."],
            Some("Be brief.\n\nUse tabs.\n\nRule A.\n\nRule B.\n\nSession one.\n\nSession two."),
        ),
        (
            "rules without an agent prompt",
            None,
            vec![("AGENTS.md", "Use tabs.")],
            vec![],
            Some("Use tabs."),
        ),
        (
            "AGENTS.md already in the agent's prompt is not repeated",
            Some("Rules: Use tabs."),
            vec![
                ("AGENTS.md", "Use tabs.\n"),
                (".qore/rules/a.md", "Rule A."),
            ],
            vec![],
            Some("Rules: Use tabs.\n\nRule A."),
        ),
        (
            "blank files and a blank agent prompt add nothing",
            Some("  "),
            vec![("AGENTS.md", "\n\n"), (".qore/rules/a.md", "Rule A.")],
            vec![""],
            Some("Rule A."),
        ),
    ];
    for (case, agent, files, additions, expected) in cases {
        let dir = project(&files);
        assert_eq!(
            prompt(agent, dir.path(), &additions).as_deref(),
            expected,
            "{case}"
        );
    }
}

#[test]
fn an_unreadable_rules_file_is_an_error_naming_it() {
    let dir = project(&[]);
    // A directory where a file is expected cannot be read as text.
    std::fs::create_dir_all(dir.path().join("AGENTS.md")).unwrap();
    let error = project_rules(dir.path()).unwrap_err();
    assert!(error.message.contains("AGENTS.md"), "{error:?}");
}
