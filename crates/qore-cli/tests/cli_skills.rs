//! Skills: `qore skills list|show` and a loopback model loading a skill through `qore run`;
//! skills come from `<config dir>/skills/`, the project's `.qore/skills/` and
//! `.claude/skills/`, and a broken SKILL.md is a warning naming the file.

mod common;

use common::config::{qore_in, run_tools_in, ConfigDir};
use common::turns::{answer, offered, tool_results, turn};
use serde_json::json;

fn dirs() -> ConfigDir {
    ConfigDir::new(&[
        (
            "skills/pdf/SKILL.md",
            "---\nname: pdf\ndescription: Fill PDF forms.\n---\nUse pdftk.\n",
        ),
        ("skills/broken/SKILL.md", "no front matter\n"),
        (
            "project/.qore/skills/review/SKILL.md",
            "---\nname: review\ndescription: Review a diff.\n---\nRead it twice.\n",
        ),
        (
            "project/.claude/skills/lint/SKILL.md",
            "---\nname: lint\ndescription: Lint the code.\n---\nRun the linter.\n",
        ),
    ])
}

#[tokio::test]
async fn skills_are_listed_shown_and_broken_ones_warned_about() {
    let config = dirs();
    let project = config.0.join("project");
    let project = project.to_str().unwrap();
    // Arguments, exit code, what stdout holds, what stderr holds.
    type Case<'a> = (&'a [&'a str], Option<i32>, &'a [&'a str], &'a str);
    let cases: &[Case] = &[
        (
            &["skills", "list", "--project", project],
            Some(0),
            &[
                "pdf ",
                "Fill PDF forms.",
                "review ",
                "Review a diff.",
                "lint ",
                "Lint the code.",
            ],
            "broken/SKILL.md",
        ),
        (
            &["skills", "show", "review", "--project", project],
            Some(0),
            &["review: Review a diff.", "Read it twice."],
            "broken/SKILL.md",
        ),
        (
            &["skills", "show", "nope"],
            Some(1),
            &[],
            "no skill 'nope' (skills: pdf)",
        ),
    ];
    for (args, code, stdout, stderr) in cases {
        let run = qore_in(&config, args).await;
        assert_eq!(run.code, *code, "{args:?}: {run:?}");
        for want in *stdout {
            assert!(run.stdout.contains(want), "{args:?}: {}", run.stdout);
        }
        assert!(run.stderr.contains(stderr), "{args:?}: {}", run.stderr);
    }
}

#[tokio::test]
async fn a_model_sees_the_skills_and_loads_one() {
    let config = dirs();
    let replies = vec![
        turn("", &[("call_s", "skill", json!({"name": "pdf"}))]),
        answer("Done."),
    ];
    let (run, bodies) = run_tools_in(&config, &config.0.join("project"), "auto", replies).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("broken/SKILL.md"), "{}", run.stderr);
    let system = bodies[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        system.contains("- pdf: Fill PDF forms.\n- review: Review a diff."),
        "{system}"
    );
    let tools = offered(&bodies[0]);
    assert!(tools.contains(&"skill".to_string()), "{tools:?}");
    let results = tool_results(&bodies[1]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_s");
    assert!(results[0].1.contains("Use pdftk."), "{results:?}");
}
