//! What `cli_sessions` (SQLite) and `cli_store_postgres` (PostgreSQL) share: a store filled
//! through qore-store's interface (two projects, a named session, a compressed one), the
//! real binary run on it (the default file, `--store LOCATION` or `QORE_STORE_URL`), and one
//! table of `qore sessions` steps (list, show, export, import, rename, rm and their errors),
//! each checked by exit code and what stdout and stderr say.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use qore_core::{Message, Usage};
use qore_store::{NewSession, SqliteStore, Store, TurnRecord, TurnStatus};

use crate::common::{command, run_cmd, Run};

pub fn turn(question: &str, input_tokens: u64) -> TurnRecord {
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

/// Where the binary finds the store.
#[derive(Debug, Clone)]
pub enum Place {
    /// `qore.db` in `QORE_DATA_DIR`, the default.
    DataDir,
    /// `--store LOCATION`.
    Flag(String),
    /// `QORE_STORE_URL=LOCATION`.
    Env(String),
}

/// The data dir, project A (the working directory of most steps), project B; the ids of
/// A's original session, A's session compressed from it, and B's session.
pub struct World {
    _root: tempfile::TempDir,
    pub data: PathBuf,
    pub a: PathBuf,
    pub ids: [String; 3],
    pub place: Place,
}

/// The world on the default SQLite file of its data dir.
pub async fn world() -> World {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().canonicalize().unwrap().join("data");
    let store = SqliteStore::open(data.join("qore.db")).unwrap();
    world_on(root, &store, Place::DataDir).await
}

/// The world in `store`, which the binary finds as `place` says.
pub async fn world_on(root: tempfile::TempDir, store: &dyn Store, place: Place) -> World {
    let base = root.path().canonicalize().unwrap();
    let (data, a, b) = (base.join("data"), base.join("proj-a"), base.join("proj-b"));
    for dir in [&data, &a, &b] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let in_project = |dir: &Path, parent: Option<String>| NewSession {
        project_dir: Some(dir.to_owned()),
        parent_id: parent,
        ..NewSession::default()
    };
    let original = store.create_session(&in_project(&a, None)).await.unwrap();
    for (question, tokens) in [("fix the parser", 1200), ("and the lexer", 2400)] {
        let turn = turn(question, tokens);
        store.append_turn(&original, &turn).await.unwrap();
    }
    let parent = in_project(&a, Some(original.clone()));
    let compressed = store.create_session(&parent).await.unwrap();
    let summary = turn("summary of the parser work", 300);
    store.append_turn(&compressed, &summary).await.unwrap();
    store.rename(&compressed, "parser").await.unwrap();
    let other = store.create_session(&in_project(&b, None)).await.unwrap();
    let docs = turn("write the docs", 50);
    store.append_turn(&other, &docs).await.unwrap();
    World {
        _root: root,
        data,
        a,
        ids: [original, compressed, other],
        place,
    }
}

impl World {
    /// `qore ARGS` in project A, finding the store as the world's place says.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        self.command_at(&self.place, args)
    }

    /// `qore ARGS` in project A, finding the store as `place` says.
    pub fn command_at(&self, place: &Place, args: &[&str]) -> tokio::process::Command {
        let mut args: Vec<&str> = args.to_vec();
        if let Place::Flag(location) = place {
            // A global option: after the subcommand's own arguments, as a user may write it.
            args.extend(["--store", location.as_str()]);
        }
        let mut cmd = command(&args);
        cmd.env("QORE_DATA_DIR", &self.data).current_dir(&self.a);
        if let Place::Env(location) = place {
            cmd.env("QORE_STORE_URL", location);
        }
        cmd
    }

    pub async fn qore(&self, args: &[&str]) -> Run {
        run_cmd(self.command(args)).await
    }

    pub async fn qore_at(&self, place: &Place, args: &[&str]) -> Run {
        run_cmd(self.command_at(place, args)).await
    }
}

/// Run the table of `qore sessions` steps on `w`, in order.
pub async fn sessions_steps(w: &World) {
    let [original, _compressed, other] = w.ids.clone();
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
        let run = w.qore(&args).await;
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
}

pub fn v(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}
