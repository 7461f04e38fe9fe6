use std::path::Path;

use serde_json::json;

use super::*;

/// Name, description and instructions, or the start of the error.
type Parsed = Result<(&'static str, &'static str, &'static str), &'static str>;

#[test]
fn skill_files_parse_or_say_what_is_wrong() {
    let dir = Path::new("/s");
    let cases: &[(&str, Parsed)] = &[
        (
            "---\nname: pdf\ndescription: Fill PDF forms.\n---\nStep 1.\n",
            Ok(("pdf", "Fill PDF forms.", "Step 1.")),
        ),
        (
            "\u{feff}---\r\nname: a\ndescription: b\n---\r\n\nBody\n",
            Ok(("a", "b", "Body")),
        ),
        (
            "---\nname: a\ndescription: >\n  folded\n  text\nlicense: MIT\n---\n",
            Ok(("a", "folded text", "")),
        ),
        ("# no front matter\n", Err("no front matter")),
        ("---\nname: a\n", Err("no closing")),
        ("---\nname: [a\n---\n", Err("front matter:")),
        ("---\ndescription: d\n---\n", Err("no `name`")),
        (
            "---\nname: a\ndescription: '  '\n---\n",
            Err("no `description`"),
        ),
    ];
    for (text, want) in cases {
        let got = parse(text, dir);
        match (got, want) {
            (Ok(s), Ok((n, d, i))) => assert_eq!(
                (
                    s.name.as_str(),
                    s.description.as_str(),
                    s.instructions.as_str()
                ),
                (*n, *d, *i),
                "{text:?}"
            ),
            (Err(e), Err(w)) => assert!(e.contains(w), "{text:?}: {e}"),
            (got, want) => panic!("{text:?}: {got:?}, want {want:?}"),
        }
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nDo {name}.\n")
}

#[tokio::test]
async fn skills_load_in_order_and_the_tool_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (config, project) = (tmp.path().join("config"), tmp.path().join("project"));
    write(&config, "skills/one/SKILL.md", &skill("one", "user one"));
    write(&config, "skills/two/SKILL.md", &skill("two", "user two"));
    write(&config, "skills/two/ref.md", "reference");
    write(&config, "skills/broken/SKILL.md", "no front matter");
    write(&config, "skills/notaskill/README.md", "x");
    write(
        &project,
        ".claude/skills/one/SKILL.md",
        &skill("one", "claude one"),
    );
    write(
        &project,
        ".qore/skills/three/SKILL.md",
        &skill("three", "qore three"),
    );
    write(&config, "secret.txt", "s3cret");

    let skills = Skills::load(Some(&config), Some(&project));
    let names: Vec<(&str, &str)> = skills
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("one", "claude one"),
            ("three", "qore three"),
            ("two", "user two")
        ]
    );
    assert_eq!(skills.warnings.len(), 1, "{:?}", skills.warnings);
    assert!(
        skills.warnings[0].contains("broken/SKILL.md"),
        "{:?}",
        skills.warnings
    );
    let layer = skills.prompt_layer().unwrap();
    assert!(
        layer.contains("- one: claude one\n- three: qore three\n- two: user two"),
        "{layer}"
    );
    assert_eq!(Skills::default().prompt_layer(), None);

    let tool = SkillTool::new(&skills);
    assert!(!tool.destructive());
    let cases = [
        (json!({"name": "two"}), false, "Do two."),
        (json!({"name": "two", "file": "ref.md"}), false, "reference"),
        (
            json!({"name": "two", "file": "../../secret.txt"}),
            true,
            "skill two: ../../secret.txt",
        ),
        (
            json!({"name": "two", "file": "missing.md"}),
            true,
            "missing.md",
        ),
        (
            json!({"name": "nope"}),
            true,
            "no skill \"nope\" (skills: one, three, two)",
        ),
        (json!({}), true, "give the skill's `name`"),
    ];
    for (input, is_error, text) in cases {
        let out = tool.call(input.clone(), CancellationToken::new()).await;
        assert_eq!(out.is_error, is_error, "{input}: {out:?}");
        assert!(out.text_content().contains(text), "{input}: {out:?}");
        assert!(!out.text_content().contains("s3cret"));
    }
}
