//! search, cancellation of the read-only tools, and todo: happy paths, caps and error paths,
//! on a real temp directory. Expected outputs are written out literally.

mod common;

use common::Project;
use qore_core::{CancellationToken, Tool};
use qore_tools::{builtin_tools, Todo, ToolOptions};
use serde_json::json;

fn small(f: impl FnOnce(&mut ToolOptions)) -> Project {
    let mut options = ToolOptions::default();
    f(&mut options);
    Project::with_options(options)
}

#[tokio::test]
async fn search_finds_literal_text_and_regexes_with_line_numbers() {
    let p = Project::new();
    p.write("src/a.rs", "fn alpha() {}\nlet x = a.b;\nfn beta() {}\n");
    p.write("src/b.txt", "axb\nA.B\n");
    assert_eq!(
        p.ok("search", json!({"pattern": "a.b"})).await,
        "src/a.rs:2: let x = a.b;"
    );
    assert_eq!(
        p.ok("search", json!({"pattern": "a.b", "ignore_case": true}))
            .await,
        "src/a.rs:2: let x = a.b;\nsrc/b.txt:2: A.B"
    );
    assert_eq!(
        p.ok("search", json!({"pattern": "a.b", "regex": true}))
            .await,
        "src/a.rs:2: let x = a.b;\nsrc/b.txt:1: axb"
    );
    assert_eq!(
        p.ok("search", json!({"pattern": r"^fn \w+", "regex": true}))
            .await,
        "src/a.rs:1: fn alpha() {}\nsrc/a.rs:3: fn beta() {}"
    );
    assert_eq!(
        p.ok("search", json!({"pattern": "b", "glob": "*.txt"}))
            .await,
        "src/b.txt:1: axb"
    );
    assert_eq!(
        p.ok("search", json!({"pattern": "fn", "path": "src/a.rs"}))
            .await,
        "src/a.rs:1: fn alpha() {}\nsrc/a.rs:3: fn beta() {}"
    );
    let none = p.ok("search", json!({"pattern": "zzz"})).await;
    assert_eq!(none, "No matches for `zzz` in `.`.");
}

#[tokio::test]
async fn search_caps_hits_and_reports_skipped_files() {
    let p = small(|o| o.search_max_file_bytes = 100);
    p.write("hits.txt", "x1\nx2\nx3\nx4\nx5\n");
    p.write("blob.bin", b"x\0x");
    p.write("huge.txt", "x".repeat(101));
    assert_eq!(
        p.ok("search", json!({"pattern": "x", "limit": 2})).await,
        "hits.txt:1: x1\nhits.txt:2: x2\n[3 more matches not shown; narrow the path, the glob or \
         the pattern]\n[skipped files: 1 binary, 1 over 100 bytes]"
    );
    let msg = p
        .err("search", json!({"pattern": "x", "path": "blob.bin"}))
        .await;
    assert!(msg.contains("binary"), "{msg}");
    let msg = p
        .err("search", json!({"pattern": "x", "path": "huge.txt"}))
        .await;
    assert!(msg.contains("larger than 100 bytes"), "{msg}");
}

#[tokio::test]
async fn search_errors() {
    let p = Project::new();
    let msg = p
        .err("search", json!({"pattern": "(", "regex": true}))
        .await;
    assert!(
        msg.contains("invalid regex") && msg.contains("regex=false"),
        "{msg}"
    );
    assert!(p
        .err("search", json!({"pattern": ""}))
        .await
        .contains("pattern is empty"));
    assert!(p
        .err("search", json!({"pattern": "x", "glob": "[x"}))
        .await
        .contains("invalid glob"));
    assert!(p
        .err("search", json!({"pattern": "x", "path": "nope"}))
        .await
        .contains("does not exist"));
    // A literal "(" is fine without regex.
    p.ok("search", json!({"pattern": "("})).await;
}

#[tokio::test]
async fn a_cancelled_call_returns_promptly_as_cancelled() {
    let p = Project::new();
    p.write("f.txt", "x\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    for (name, input) in [
        ("search", json!({"pattern": "x"})),
        ("list_files", json!({})),
        ("find_file", json!({"pattern": "*"})),
        ("read_file", json!({"path": "f.txt"})),
    ] {
        let out = p.tool(name).call(input, cancel.clone()).await;
        assert!(
            out.is_error && out.text_content().starts_with("cancelled"),
            "{name}"
        );
    }
}

#[tokio::test]
async fn todo_adds_completes_and_lists() {
    let p = Project::new();
    p.ok("todo", json!({"action": "add", "text": "write tests"}))
        .await;
    let out = p
        .ok("todo", json!({"action": "add", "text": "fix bug"}))
        .await;
    assert_eq!(
        out,
        "Added task 2.\nTasks (0/2 done):\n1. [ ] write tests\n2. [ ] fix bug"
    );
    let out = p.ok("todo", json!({"action": "complete", "id": 1})).await;
    assert_eq!(
        out,
        "Completed task 1.\nTasks (1/2 done):\n1. [x] write tests\n2. [ ] fix bug"
    );
    let full = p.call("todo", json!({"action": "list"})).await;
    assert_eq!(
        full.text_content(),
        "Tasks (1/2 done):\n1. [x] write tests\n2. [ ] fix bug"
    );
    assert_eq!(
        full.structured,
        Some(json!({"items": [
            {"id": 1, "text": "write tests", "done": true},
            {"id": 2, "text": "fix bug", "done": false}
        ]}))
    );
    let again = p.ok("todo", json!({"action": "complete", "id": 1})).await;
    assert!(again.starts_with("Task 1 was already done."), "{again}");
}

#[tokio::test]
async fn todo_errors_and_lists_are_per_session() {
    let p = Project::new();
    assert_eq!(
        p.ok("todo", json!({"action": "list"})).await,
        "The task list is empty."
    );
    assert!(p
        .err("todo", json!({"action": "add"}))
        .await
        .contains("needs `text`"));
    assert!(p
        .err("todo", json!({"action": "add", "text": "  "}))
        .await
        .contains("needs `text`"));
    assert!(p
        .err("todo", json!({"action": "complete"}))
        .await
        .contains("needs `id`"));
    assert!(p
        .err("todo", json!({"action": "complete", "id": 7}))
        .await
        .contains("the list is empty"));
    p.ok("todo", json!({"action": "add", "text": "one"})).await;
    assert!(p
        .err("todo", json!({"action": "complete", "id": 7}))
        .await
        .contains("the ids are 1"));
    assert!(p
        .err("todo", json!({"action": "remove"}))
        .await
        .contains("unknown variant"));

    // Another session's tools have their own list; clones of one Todo share theirs.
    let other = builtin_tools(p.sandbox(), &ToolOptions::default());
    let other_todo = other.iter().find(|t| t.spec().name == "todo").unwrap();
    let out = other_todo
        .call(json!({"action": "list"}), CancellationToken::new())
        .await;
    assert_eq!(out.text_content(), "The task list is empty.");
    let todo = Todo::new();
    let clone = todo.clone();
    clone
        .call(
            json!({"action": "add", "text": "shared"}),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(todo.items().len(), 1);
    assert_eq!(todo.items()[0].text, "shared");
}
