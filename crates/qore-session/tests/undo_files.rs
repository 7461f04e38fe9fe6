//! Undo against real files in a temp project and a real SQLite store: each turn's calls run
//! through the real built-in tools with a recorder, the turn is stored with its record, then
//! `undo_last_turn` puts the files back (or refuses, writing nothing).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use qore_core::Tool;
use qore_session::undo::{undo_last_turn, FileUndo, UndoError};
use qore_store::{NewSession, SqliteStore, Store};
use qore_tools::{builtin_tools, ChangeRecorder, Sandbox, ToolOptions};
use serde_json::{json, Value};

mod undo_common;
use undo_common::stored_turn;

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    store: SqliteStore,
    session: String,
    tools: Vec<Arc<dyn Tool>>,
    recorder: ChangeRecorder,
}

impl Project {
    async fn new(files: &[(&str, &[u8])], record_limit: u64) -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("project");
        for (path, bytes) in files {
            let abs = root.join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(abs, bytes).unwrap();
        }
        std::fs::create_dir_all(&root).unwrap();
        let recorder = ChangeRecorder::with_limits(record_limit, 1024);
        let options = ToolOptions {
            record_changes: Some(recorder.clone()),
            ..ToolOptions::default()
        };
        let tools = builtin_tools(Sandbox::new(&root).unwrap(), &options);
        let store = SqliteStore::open(tmp.path().join("data/qore.db")).unwrap();
        let new = NewSession {
            project_dir: Some(root.clone()),
            ..NewSession::default()
        };
        let session = store.create_session(&new).await.unwrap();
        Project {
            _tmp: tmp,
            root,
            store,
            session,
            tools,
            recorder,
        }
    }

    /// One stored turn: each call runs through the real tool, then the turn is appended with
    /// the recorder's record.
    async fn turn(&mut self, calls: &[(&str, Value)]) {
        let (store, tools) = (&self.store, &self.tools);
        stored_turn(store, &self.session, tools, &self.recorder, calls).await;
    }

    fn read(&self, path: &str) -> Option<Vec<u8>> {
        std::fs::read(self.root.join(path)).ok()
    }
}

type Tamper = fn(&Path);
type Files = &'static [(&'static str, Option<&'static [u8]>)];
type Call = (&'static str, Value);

struct Case {
    name: &'static str,
    before: &'static [(&'static str, &'static [u8])],
    /// Each turn's calls.
    turns: Vec<Vec<Call>>,
    /// What the user does to the files after the turns.
    tamper: Tamper,
    /// Per undo: what it did (or a piece of its error message).
    undos: Vec<Result<Vec<(&'static str, FileUndo)>, &'static str>>,
    /// The files at the end (`None`: absent).
    after: Files,
}

impl Default for Case {
    fn default() -> Self {
        Case {
            name: "",
            before: &[],
            turns: Vec::new(),
            tamper: |_| {},
            undos: Vec::new(),
            after: &[],
        }
    }
}

fn write(path: &str, content: &str) -> Call {
    ("write_file", json!({"path": path, "content": content}))
}

fn create(path: &str, content: &str) -> Call {
    ("create_file", json!({"path": path, "content": content}))
}

fn edit(path: &str, old: &str, new: &str) -> Call {
    let input = json!({"path": path, "old_string": old, "new_string": new});
    ("edit_file", input)
}

const TOML: &[u8] = b"[app]\nname = 1\n";
const BINARY: &[u8] = b"\0\x01\xff";

fn cases() -> Vec<Case> {
    use FileUndo::{Removed, Restored};
    vec![
        Case {
            name: "write a new file",
            turns: vec![vec![write("new.txt", "n")]],
            undos: vec![Ok(vec![("new.txt", Removed)])],
            after: &[("new.txt", None)],
            ..Case::default()
        },
        Case {
            name: "a created file is removed, its directory stays",
            turns: vec![vec![create("d/e/c.rs", "c")]],
            undos: vec![Ok(vec![("d/e/c.rs", Removed)])],
            after: &[("d/e/c.rs", None)],
            ..Case::default()
        },
        Case {
            name: "edit an existing file twice",
            before: &[("src/a.rs", b"fn a() {}\nfn b() {}\n")],
            turns: vec![vec![
                edit("src/a.rs", "a()", "x()"),
                edit("src/a.rs", "b()", "y()"),
            ]],
            undos: vec![Ok(vec![("src/a.rs", Restored)])],
            after: &[("src/a.rs", Some(b"fn a() {}\nfn b() {}\n"))],
            ..Case::default()
        },
        Case {
            name: "delete-by-write: emptied and binary files come back byte for byte",
            before: &[("cfg/app.toml", TOML), ("bin.dat", BINARY)],
            turns: vec![vec![write("cfg/app.toml", ""), write("bin.dat", "text")]],
            undos: vec![Ok(vec![("bin.dat", Restored), ("cfg/app.toml", Restored)])],
            after: &[("cfg/app.toml", Some(TOML)), ("bin.dat", Some(BINARY))],
            ..Case::default()
        },
        Case {
            name: "an emptied file deleted since (with its directory): refused",
            before: &[("cfg/app.toml", TOML), ("bin.dat", BINARY)],
            turns: vec![vec![write("bin.dat", "text"), write("cfg/app.toml", "")]],
            tamper: |root| std::fs::remove_dir_all(root.join("cfg")).unwrap(),
            undos: vec![Err("`cfg/app.toml` was changed after turn 1")],
            after: &[("cfg/app.toml", None), ("bin.dat", Some(b"text"))],
        },
        Case {
            name: "changed since: refused, nothing written",
            before: &[("a.txt", b"a0"), ("b.txt", b"b0")],
            turns: vec![vec![write("a.txt", "a1"), write("b.txt", "b1")]],
            tamper: |root| std::fs::write(root.join("b.txt"), "mine").unwrap(),
            undos: vec![Err("`b.txt` was changed after turn 1")],
            after: &[("a.txt", Some(b"a1")), ("b.txt", Some(b"mine"))],
        },
        Case {
            name: "a created file removed since: refused",
            turns: vec![vec![create("c.txt", "c")]],
            tamper: |root| std::fs::remove_file(root.join("c.txt")).unwrap(),
            undos: vec![Err("`c.txt` was changed after turn 1")],
            after: &[("c.txt", None)],
            ..Case::default()
        },
        Case {
            name: "too large to record: refused, nothing written",
            before: &[("big.log", &[b'x'; 200]), ("small", b"s")],
            turns: vec![vec![write("small", "t"), write("big.log", "cut")]],
            undos: vec![Err("`big.log` had before turn 1 was not recorded")],
            after: &[("small", Some(b"t")), ("big.log", Some(b"cut"))],
            ..Case::default()
        },
        Case {
            name: "two undos walk back two turns, a third has nothing to undo",
            before: &[("a.txt", b"0")],
            turns: vec![
                vec![write("a.txt", "1")],
                vec![write("a.txt", "2"), create("b.txt", "b")],
            ],
            undos: vec![
                Ok(vec![("a.txt", Restored), ("b.txt", Removed)]),
                Ok(vec![("a.txt", Restored)]),
                Err("nothing to undo"),
            ],
            after: &[("a.txt", Some(b"0")), ("b.txt", None)],
            ..Case::default()
        },
        Case {
            name: "nothing to undo in a session without turns",
            before: &[("a.txt", b"0")],
            undos: vec![Err("nothing to undo")],
            after: &[("a.txt", Some(b"0"))],
            ..Case::default()
        },
    ]
}

#[tokio::test]
async fn undo_restores_or_refuses_as_the_table_says() {
    for case in cases() {
        let name = case.name;
        let mut p = Project::new(case.before, 100).await;
        for calls in &case.turns {
            p.turn(calls).await;
        }
        (case.tamper)(&p.root);
        let turns_before = p.store.history(&p.session).await.unwrap().len();
        for expected in &case.undos {
            let got = undo_last_turn(&p.store, &p.session, &p.root).await;
            match (got, expected) {
                (Ok(report), Ok(files)) => {
                    let files: Vec<_> = files.iter().map(|(p, d)| (p.to_string(), *d)).collect();
                    assert_eq!(report.files, files, "{name}");
                }
                (Err(error), Err(words)) => {
                    assert!(error.to_string().contains(words), "{name}: {error}");
                    if !matches!(error, UndoError::NothingToUndo) {
                        let history = p.store.history(&p.session).await.unwrap();
                        assert_eq!(history.len(), turns_before, "{name}: the turn stays");
                    }
                }
                (got, _) => panic!("{name}: expected {expected:?}, got {got:?}"),
            }
        }
        for (path, content) in case.after {
            assert_eq!(p.read(path).as_deref(), *content, "{name}: {path}");
        }
    }
}

#[tokio::test]
async fn an_undone_turn_leaves_the_history_and_commands_are_named() {
    let mut p = Project::new(&[("a.txt", b"0")], 1024).await;
    p.turn(&[write("a.txt", "1")]).await;
    p.turn(&[
        ("run_command", json!({"argv": ["echo", "hi"]})),
        write("a.txt", "2"),
        ("run_command", json!({"argv": ["echo", "hi"]})),
        ("read_file", json!({"path": "a.txt"})),
    ])
    .await;
    let report = undo_last_turn(&p.store, &p.session, &p.root).await.unwrap();
    assert_eq!(report.seq, 2);
    assert_eq!(report.unrecorded_calls, ["run_command `echo hi`"]);
    let shown = report.to_string();
    assert!(shown.contains("restored a.txt"), "{shown}");
    assert!(shown.contains("not undone"), "{shown}");
    let history = p.store.history(&p.session).await.unwrap();
    assert_eq!(history.len(), 4, "only turn 1 is left");
    assert_eq!(p.read("a.txt").as_deref(), Some(&b"1"[..]));
}

#[tokio::test]
async fn a_store_that_cannot_mark_the_turn_undone_gets_the_files_put_back() {
    let mut p = Project::new(&[("a.txt", b"0")], 1024).await;
    p.turn(&[write("a.txt", "1"), create("b.txt", "b")]).await;
    // Another connection makes the store refuse the mark, the way a failing disk would.
    let db = p.store.path().to_owned();
    let other = rusqlite::Connection::open(&db).unwrap();
    other
        .execute_batch(
            "CREATE TRIGGER refuse_undo BEFORE UPDATE OF undone ON turns
             BEGIN SELECT RAISE(ABORT, 'the disk is failing'); END;",
        )
        .unwrap();
    let error = undo_last_turn(&p.store, &p.session, &p.root)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("the disk is failing"), "{error}");
    assert_eq!(p.read("a.txt").as_deref(), Some(&b"1"[..]));
    assert_eq!(p.read("b.txt").as_deref(), Some(&b"b"[..]));
    other.execute_batch("DROP TRIGGER refuse_undo").unwrap();
    undo_last_turn(&p.store, &p.session, &p.root).await.unwrap();
    assert_eq!(p.read("a.txt").as_deref(), Some(&b"0"[..]));
    assert_eq!(p.read("b.txt"), None);
}
