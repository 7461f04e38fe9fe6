//! Previews of each destructive tool over a real directory: what they show, what they
//! refuse, and that nothing is written.

use serde_json::json;

use super::*;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n").expect("write");
    std::fs::write(dir.path().join(".gitignore"), "secret.env\n").expect("write");
    std::fs::write(dir.path().join("blob.bin"), [0u8, 159, 146, 150]).expect("write");
    dir
}

fn file(path: &str, old: Option<&str>, new: &str) -> Preview {
    Preview::File {
        path: path.into(),
        old: old.map(str::to_owned),
        new: new.into(),
    }
}

#[test]
fn each_call_is_shown_as_it_would_go() {
    let dir = project();
    let sandbox = Sandbox::new(dir.path()).expect("sandbox");
    let root = sandbox.root().to_path_buf();
    type Check = Box<dyn Fn(&Preview) -> bool>;
    let is = |want: Preview| -> Check { Box::new(move |p: &Preview| *p == want) };
    let refused = |why: &'static str| -> Check {
        Box::new(move |p: &Preview| matches!(p, Preview::Refused(r) if r.contains(why)))
    };
    let cases: Vec<(&str, serde_json::Value, Check)> = vec![
        (
            "edit_file",
            json!({"path": "notes.txt", "old_string": "two", "new_string": "2"}),
            is(file(
                "notes.txt",
                Some("one\ntwo\nthree\n"),
                "one\n2\nthree\n",
            )),
        ),
        (
            "edit_file",
            json!({"path": "notes.txt", "old_string": "  three  ", "new_string": "3"}),
            is(file(
                "notes.txt",
                Some("one\ntwo\nthree\n"),
                "one\ntwo\n3\n",
            )),
        ),
        (
            "write_file",
            json!({"path": "notes.txt", "content": "new\n"}),
            is(file("notes.txt", Some("one\ntwo\nthree\n"), "new\n")),
        ),
        (
            "write_file",
            json!({"path": "sub/dir/new.rs", "content": "fn main() {}\n"}),
            is(file("sub/dir/new.rs", None, "fn main() {}\n")),
        ),
        (
            "create_file",
            json!({"path": "fresh.txt", "content": "hi"}),
            is(file("fresh.txt", None, "hi")),
        ),
        (
            "write_file",
            json!({"path": "blob.bin", "content": "text"}),
            is(Preview::ReplacesBinary {
                path: "blob.bin".into(),
                new: "text".into(),
            }),
        ),
        (
            "run_command",
            json!({"argv": ["cargo", "test", "-p", "x"]}),
            is(Preview::Command {
                argv: vec!["cargo".into(), "test".into(), "-p".into(), "x".into()],
                cwd: root.clone(),
            }),
        ),
        (
            "create_file",
            json!({"path": "notes.txt", "content": "x"}),
            refused("already exists"),
        ),
        (
            "edit_file",
            json!({"path": "notes.txt", "old_string": "four", "new_string": "4"}),
            refused("was not changed"),
        ),
        (
            "edit_file",
            json!({"path": "missing.txt", "old_string": "a", "new_string": "b"}),
            refused("does not exist"),
        ),
        (
            "edit_file",
            json!({"path": "notes.txt", "old_string": "", "new_string": "b"}),
            refused("old_string is empty"),
        ),
        (
            "write_file",
            json!({"path": "secret.env", "content": "KEY=1"}),
            refused("excluded by the rule `secret.env`"),
        ),
        (
            "write_file",
            json!({"path": "../outside.txt", "content": "x"}),
            refused("outside the project root"),
        ),
        (
            "write_file",
            json!({"path": "notes.txt"}),
            refused("invalid arguments for write_file"),
        ),
        (
            "run_command",
            json!({"argv": []}),
            refused("argv must be an array"),
        ),
    ];
    for (tool, input, check) in cases {
        let shown = preview(&sandbox, tool, &input).expect("a destructive tool is previewed");
        assert!(check(&shown), "{tool} {input}: {shown:?}");
    }
    for quiet in ["read_file", "search", "some_mcp_tool"] {
        assert_eq!(
            preview(&sandbox, quiet, &json!({"path": "notes.txt"})),
            None
        );
    }
    // Nothing was written or created.
    let notes = std::fs::read_to_string(dir.path().join("notes.txt")).expect("read");
    assert_eq!(notes, "one\ntwo\nthree\n");
    for never in ["sub", "fresh.txt", "secret.env"] {
        assert!(!dir.path().join(never).exists(), "{never} was created");
    }
}
