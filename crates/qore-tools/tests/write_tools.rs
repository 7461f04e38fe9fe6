//! create_file, write_file and edit_file on a real temp directory: contents on disk, the
//! diffs in the results, and files left alone whenever a call fails.

mod common;

use common::Project;
use serde_json::json;

/// The names in `dir`, sorted (to see that no temp file was left behind).
fn names_in(p: &Project, dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(p.root.join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn create_file_creates_parents_and_refuses_existing_files() {
    let p = Project::new();
    let out = p
        .ok(
            "create_file",
            json!({"path": "a/b/new.txt", "content": "hello\nworld\n"}),
        )
        .await;
    assert_eq!(out, "Created `a/b/new.txt` (2 lines, 12 bytes).");
    assert_eq!(p.read("a/b/new.txt"), "hello\nworld\n");

    let msg = p
        .err(
            "create_file",
            json!({"path": "a/b/new.txt", "content": "other"}),
        )
        .await;
    assert!(
        msg.contains("already exists") && msg.contains("write_file"),
        "{msg}"
    );
    assert_eq!(p.read("a/b/new.txt"), "hello\nworld\n");
    // A directory exists too.
    p.err("create_file", json!({"path": "a/b", "content": "x"}))
        .await;
    // A file in the way of a parent directory.
    let msg = p
        .err(
            "create_file",
            json!({"path": "a/b/new.txt/inner", "content": "x"}),
        )
        .await;
    assert!(msg.contains("a/b/new.txt"), "{msg}");
    p.err("create_file", json!({"path": "x.txt"})).await;
    p.ok("create_file", json!({"path": "empty.txt", "content": ""}))
        .await;
    assert_eq!(p.read("empty.txt"), "");
}

#[tokio::test]
async fn write_file_creates_replaces_with_a_diff_and_notices_no_change() {
    let p = Project::new();
    assert_eq!(
        p.ok(
            "write_file",
            json!({"path": "d/f.txt", "content": "one\ntwo\nthree\n"})
        )
        .await,
        "Created `d/f.txt` (3 lines, 14 bytes)."
    );
    let out = p
        .ok(
            "write_file",
            json!({"path": "d/f.txt", "content": "one\n2\nthree\n"}),
        )
        .await;
    assert_eq!(
        out,
        "Replaced `d/f.txt` (3 lines, 12 bytes).\n--- a/d/f.txt\n+++ b/d/f.txt\n@@ -1,3 +1,3 @@\n \
         one\n-two\n+2\n three\n"
    );
    assert_eq!(p.read("d/f.txt"), "one\n2\nthree\n");
    let same = p
        .ok(
            "write_file",
            json!({"path": "d/f.txt", "content": "one\n2\nthree\n"}),
        )
        .await;
    assert!(same.contains("nothing changed"), "{same}");
    assert_eq!(names_in(&p, "d"), vec!["f.txt"]);
    let msg = p
        .err("write_file", json!({"path": "d", "content": "x"}))
        .await;
    assert!(msg.contains("is a directory"), "{msg}");
    p.write("bin.dat", b"\0\x01");
    let out = p
        .ok(
            "write_file",
            json!({"path": "bin.dat", "content": "text\n"}),
        )
        .await;
    assert!(out.contains("was binary"), "{out}");
}

#[tokio::test]
async fn edit_file_replaces_a_single_exact_match_and_shows_the_diff() {
    let p = Project::new();
    p.write("src/lib.rs", "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n");
    let out = p
        .ok(
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "fn b() {\n    2", "new_string": "fn b() {\n    20"}),
        )
        .await;
    assert_eq!(
        out,
        "Edited `src/lib.rs` (exact match at line 5).\n--- a/src/lib.rs\n+++ b/src/lib.rs\n\
         @@ -3,5 +3,5 @@\n }\n \n fn b() {\n-    2\n+    20\n }\n"
    );
    assert_eq!(
        p.read("src/lib.rs"),
        "fn a() {\n    1\n}\n\nfn b() {\n    20\n}\n"
    );
    assert_eq!(
        names_in(&p, "src"),
        vec!["lib.rs"],
        "no temp file is left behind"
    );
}

#[tokio::test]
async fn edit_file_refuses_ambiguous_and_missing_matches_and_leaves_the_file() {
    let p = Project::new();
    let original = "x = 1\ny = 2\nx = 1\n";
    p.write("f.py", original);
    let msg = p
        .err(
            "edit_file",
            json!({"path": "f.py", "old_string": "x = 1", "new_string": "x = 3"}),
        )
        .await;
    assert!(msg.contains("matches 2 places (lines 1, 3)"), "{msg}");
    let msg = p
        .err(
            "edit_file",
            json!({"path": "f.py", "old_string": "z = 9", "new_string": "z = 0"}),
        )
        .await;
    assert!(msg.contains("was not found"), "{msg}");
    // Whitespace-insensitive, still two places.
    let msg = p
        .err(
            "edit_file",
            json!({"path": "f.py", "old_string": "  x = 1  ", "new_string": "x = 3"}),
        )
        .await;
    assert!(
        msg.contains("ignoring whitespace it matches 2 places (lines 1, 3)"),
        "{msg}"
    );
    assert_eq!(p.read("f.py"), original);
}

#[tokio::test]
async fn edit_file_falls_back_to_whitespace_tolerant_matching() {
    let p = Project::new();
    p.write(
        "m.rs",
        "impl A {\n    fn go(&self) {\n        run();\n        stop();\n    }\n}\n",
    );
    // The model lost the indentation and added a trailing space.
    let out = p
        .ok(
            "edit_file",
            json!({
                "path": "m.rs",
                "old_string": "run();\nstop(); \n",
                "new_string": "run();\npause();\nstop();\n"
            }),
        )
        .await;
    assert_eq!(
        p.read("m.rs"),
        "impl A {\n    fn go(&self) {\n        run();\n        pause();\n        stop();\n    }\n}\n"
    );
    assert_eq!(
        out,
        concat!(
            "Edited `m.rs` (whitespace-insensitive match at lines 3-4).\n",
            "--- a/m.rs\n+++ b/m.rs\n@@ -1,6 +1,7 @@\n",
            " impl A {\n",
            "     fn go(&self) {\n",
            "         run();\n",
            "+        pause();\n",
            "         stop();\n",
            "     }\n",
            " }\n",
        )
    );
}

#[tokio::test]
async fn edit_file_errors() {
    let p = Project::new();
    p.write("f.txt", "abc\n");
    p.write("bin.dat", b"ab\0c");
    p.write("latin1.txt", b"caf\xe9\n");
    std::fs::create_dir(p.root.join("dir")).unwrap();
    let cases = [
        (
            json!({"path": "f.txt", "old_string": "", "new_string": "x"}),
            "old_string is empty",
        ),
        (
            json!({"path": "f.txt", "old_string": "abc", "new_string": "abc"}),
            "are the same",
        ),
        (
            json!({"path": "nope.txt", "old_string": "a", "new_string": "b"}),
            "use create_file",
        ),
        (
            json!({"path": "bin.dat", "old_string": "ab", "new_string": "x"}),
            "binary",
        ),
        (
            json!({"path": "latin1.txt", "old_string": "caf", "new_string": "x"}),
            "not valid UTF-8",
        ),
        (
            json!({"path": "dir", "old_string": "a", "new_string": "b"}),
            "is a directory",
        ),
        (
            json!({"path": "f.txt", "old_string": "abc"}),
            "missing field `new_string`",
        ),
        (
            json!({"path": "f.txt", "old_string": " \n ", "new_string": "x"}),
            "only whitespace",
        ),
    ];
    for (input, expected) in cases {
        let msg = p.err("edit_file", input.clone()).await;
        assert!(msg.contains(expected), "{input}: {msg}");
    }
    assert_eq!(p.read("f.txt"), "abc\n");
    assert_eq!(
        std::fs::read(p.root.join("latin1.txt")).unwrap(),
        b"caf\xe9\n"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn edits_keep_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    let path = p.write("run.sh", "echo a\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.ok(
        "edit_file",
        json!({"path": "run.sh", "old_string": "a", "new_string": "b"}),
    )
    .await;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(p.read("run.sh"), "echo b\n");
}

#[tokio::test]
async fn a_write_cancelled_before_it_starts_changes_nothing() {
    use qore_core::CancellationToken;
    let p = Project::new();
    p.write("f.txt", "old\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    for (name, input) in [
        ("create_file", json!({"path": "new.txt", "content": "x"})),
        ("write_file", json!({"path": "f.txt", "content": "new\n"})),
        (
            "edit_file",
            json!({"path": "f.txt", "old_string": "old", "new_string": "new"}),
        ),
    ] {
        let out = p.tool(name).call(input, cancel.clone()).await;
        assert!(
            out.is_error && out.text_content().starts_with("cancelled"),
            "{name}"
        );
    }
    assert_eq!(p.read("f.txt"), "old\n");
    assert!(!p.root.join("new.txt").exists());
}

#[cfg(unix)]
#[tokio::test]
async fn pipes_and_other_special_files_are_refused_without_blocking() {
    let p = Project::new();
    let fifo = p.root.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    for (name, input) in [
        ("read_file", json!({"path": "pipe"})),
        ("write_file", json!({"path": "pipe", "content": "x"})),
        (
            "edit_file",
            json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
        ),
    ] {
        let msg = p.err(name, input).await;
        assert!(msg.contains("not a regular file"), "{name}: {msg}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
