//! `qore sessions …` as a user meets it: the real binary, a temporary QORE_DATA_DIR whose
//! store is filled through qore-store's API (two projects, a named session, a compressed
//! one), then a table of steps run in order (list, show, export, import, rename, rm and
//! their errors), each checked by exit code and what stdout and stderr say.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use common::config::ConfigDir;
use common::{command, run_cmd, Run};
use qore_core::{Message, Usage};
use qore_store::{NewSession, Store, TurnRecord, TurnStatus};
use serde_json::Value;

fn turn(question: &str, input_tokens: u64) -> TurnRecord {
    TurnRecord {
        user: Message::user(question),
        replies: vec![Message::assistant(format!("answer to {question}"))],
        usage: Usage {
            input_tokens: Some(input_tokens),
            output_tokens: Some(7),
            ..Usage::default()
        },
        model: Some("m-1".into()),
        agent: Some("coder".into()),
        started_at: UNIX_EPOCH + Duration::from_secs(1_760_000_000),
        finished_at: UNIX_EPOCH + Duration::from_secs(1_760_000_002),
        status: TurnStatus::Finished,
        file_changes: Vec::new(),
    }
}

/// The data dir, project A (the working directory of most steps), project B; the ids of
/// A's original session, A's session compressed from it, and B's session.
struct World {
    _root: tempfile::TempDir,
    data: PathBuf,
    a: PathBuf,
    ids: [String; 3],
}

fn world() -> World {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let (data, a, b) = (base.join("data"), base.join("proj-a"), base.join("proj-b"));
    for dir in [&a, &b] {
        std::fs::create_dir(dir).unwrap();
    }
    let mut store = Store::open(data.join("qore.db")).unwrap();
    let in_project = |dir: &Path, parent: Option<String>| NewSession {
        project_dir: Some(dir.to_owned()),
        parent_id: parent,
        ..NewSession::default()
    };
    let original = store.create_session(&in_project(&a, None)).unwrap();
    store
        .append_turn(&original, &turn("fix the parser", 1200))
        .unwrap();
    store
        .append_turn(&original, &turn("and the lexer", 2400))
        .unwrap();
    let compressed = store
        .create_session(&in_project(&a, Some(original.clone())))
        .unwrap();
    store
        .append_turn(&compressed, &turn("summary of the parser work", 300))
        .unwrap();
    store.rename(&compressed, "parser").unwrap();
    let other = store.create_session(&in_project(&b, None)).unwrap();
    store
        .append_turn(&other, &turn("write the docs", 50))
        .unwrap();
    World {
        _root: root,
        data,
        a,
        ids: [original, compressed, other],
    }
}

async fn qore_at(world: &World, args: &[&str]) -> Run {
    let mut cmd = command(args);
    cmd.env("QORE_DATA_DIR", &world.data).current_dir(&world.a);
    run_cmd(cmd).await
}

#[tokio::test]
async fn sessions_list_show_export_import_rename_and_remove() {
    let w = world();
    let [original, compressed, other] = w.ids.clone();
    let qodeassist = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../qore-session/tests/data/qodeassist/chat_0.4.json");
    let exported = w.data.join("export.json");
    let bad = w.data.join("bad.json");
    std::fs::write(&bad, "{\"version\": \"0.4\", \"messages\": [1]}").unwrap();
    let (qa, ex, bad) = (
        qodeassist.to_str().unwrap(),
        exported.to_str().unwrap(),
        bad.to_str().unwrap(),
    );
    let p = |id: &str| id[..12].to_owned();
    // (args, exit code, stdout must contain, stderr must contain); "!" starts a text that
    // must NOT be in stdout.
    let steps: Vec<(Vec<String>, i32, Vec<&str>, &str)> = vec![
        (
            v(&["list"]),
            0,
            vec![
                "ID",
                "TOKENS",
                "parser",
                "summary of the parser work",
                // The estimate: the last reported input plus the answer after it.
                "312",
                "fix the parser",
                "2409",
                "!write the docs",
            ],
            "",
        ),
        (
            v(&["list", "--all-projects"]),
            0,
            vec!["write the docs", "proj-b", "proj-a"],
            "",
        ),
        (
            v(&["list", "--project", "../proj-b"]),
            0,
            vec!["write the docs", "!fix the parser"],
            "",
        ),
        (
            v(&["show", &p(&original)]),
            0,
            vec![
                "# fix the parser",
                "## Turn 2 (finished)",
                "answer to and the lexer",
            ],
            "",
        ),
        (
            v(&["show", "parser", "--json"]),
            0,
            vec!["\"format\": \"qore-session\"", "summary of the parser work"],
            "",
        ),
        (
            v(&["show", "parser", "--original"]),
            0,
            vec!["# fix the parser"],
            "",
        ),
        (
            v(&["show", &original, "--original"]),
            1,
            vec![],
            "has no original",
        ),
        (
            v(&["show", "0"]),
            1,
            vec![],
            "ambiguous prefix '0': matches",
        ),
        (
            v(&["show", "nope"]),
            1,
            vec![],
            "error: no such session: 'nope'",
        ),
        (
            v(&["export", &other, "--format", "markdown"]),
            0,
            vec![
                "# write the docs",
                "*2025-10-09 08:53:20 UTC · model m-1 · agent coder · 50 in / 7 out tokens*",
            ],
            "",
        ),
        (v(&["export", "parser", "-o", ex]), 0, vec![], "exported to"),
        (
            v(&["import", ex]),
            0,
            vec!["(qore, 1 turn)"],
            "a session named 'parser' exists",
        ),
        (
            v(&["import", qa]),
            0,
            vec!["(QodeAssist 0.4, 3 turns)"],
            "dropped 1 attachment block(s)",
        ),
        (
            v(&["import", bad]),
            1,
            vec![],
            "bad.json: messages[0] must be an object, found 1",
        ),
        (
            v(&["list"]),
            0,
            vec!["Why does main.cpp not build?", " 952 "],
            "",
        ),
        (
            v(&["rename", &p(&other), "docs"]),
            0,
            vec!["renamed", "'docs'"],
            "",
        ),
        (
            v(&["rename", "docs", "parser"]),
            1,
            vec![],
            "a session named 'parser' already exists",
        ),
        (
            v(&["rm", "docs"]),
            0,
            vec!["removed", "(write the docs)"],
            "",
        ),
        (v(&["show", &other]), 1, vec![], "no such session"),
        (v(&["show", &original]), 0, vec!["fix the parser"], ""),
        (
            v(&["list", "--all-projects", "--project", "x"]),
            2,
            vec![],
            "cannot be used with",
        ),
        (
            v(&["list", "--project", "../nowhere"]),
            0,
            vec!["!ID"],
            "no sessions in",
        ),
        (
            v(&["import", qa, "--project", "../proj-b"]),
            0,
            vec!["QodeAssist 0.4"],
            "",
        ),
        (
            v(&["list", "--project", "../proj-b"]),
            0,
            vec!["Why does main.cpp"],
            "",
        ),
    ];
    for (args, code, stdout, stderr) in steps {
        let args: Vec<&str> = std::iter::once("sessions")
            .chain(args.iter().map(String::as_str))
            .collect();
        let run = qore_at(&w, &args).await;
        assert_eq!(run.code, Some(code), "{args:?}: {run:?}");
        for needle in stdout {
            match needle.strip_prefix('!') {
                Some(absent) => assert!(
                    !run.stdout.contains(absent),
                    "{args:?}: {absent} in\n{}",
                    run.stdout
                ),
                None => assert!(
                    run.stdout.contains(needle),
                    "{args:?}: no {needle} in\n{}",
                    run.stdout
                ),
            }
        }
        assert!(
            run.stderr.contains(stderr),
            "{args:?}: no {stderr} in\n{}",
            run.stderr
        );
        if code == 1 {
            run.one_stderr_line();
        }
    }
    let _ = compressed;
}

#[tokio::test]
async fn sessions_list_json_has_counts_tokens_and_times() {
    let w = world();
    let config = ConfigDir::new(&[(
        "agents/coder.toml",
        "name = \"coder\"\nextends = \"openai-chat\"\ncontext_window = 10000\n",
    )]);
    let mut cmd = command(&["sessions", "list", "--json"]);
    cmd.env("QORE_DATA_DIR", &w.data)
        .env("QORE_CONFIG_DIR", &config.0)
        .current_dir(&w.a);
    let run = run_cmd(cmd).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let rows: Value = serde_json::from_str(&run.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [w.ids[1].as_str(), w.ids[0].as_str()],
        "this project's, newest first"
    );
    let original = &rows[1];
    assert_eq!(original["turns"], 2);
    assert_eq!(original["messages"], 4);
    assert_eq!(original["input_tokens"], 2400);
    // The estimate against the agent's window (its profile's context_window).
    let tokens = &original["tokens"];
    assert_eq!(
        (&tokens["used"], &tokens["window"]),
        (&2409.into(), &10000.into())
    );
    assert_eq!(tokens["percent"], 24.1);
    assert_eq!(original["title"], "fix the parser");
    assert_eq!(original["project_dir"], w.a.to_str().unwrap());
    assert_eq!(rows[0]["parent_id"], w.ids[0].as_str());
    assert_eq!(rows[0]["name"], "parser");
    let created = original["created_at"].as_str().unwrap();
    assert!(created.ends_with('Z') && created.len() == 24, "{created}");
}

fn v(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}
