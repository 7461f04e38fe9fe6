//! list_files, find_file and read_file, and what every tool shares (flags, schemas, argument
//! errors): happy paths, caps and error paths, on a real temp directory. Expected outputs are
//! written out literally.

mod common;

use common::Project;
use qore_core::CancellationToken;
use qore_tools::ToolOptions;
use serde_json::json;

fn small(f: impl FnOnce(&mut ToolOptions)) -> Project {
    let mut options = ToolOptions::default();
    f(&mut options);
    Project::with_options(options)
}

#[tokio::test]
async fn read_only_tools_are_flagged_so() {
    let p = Project::new();
    for name in ["list_files", "find_file", "read_file", "search", "todo"] {
        let t = p.tool(name);
        assert!(!t.destructive() && t.parallel_safe(), "{name}");
    }
    for name in ["create_file", "write_file", "edit_file", "run_command"] {
        let t = p.tool(name);
        assert!(t.destructive() && !t.parallel_safe(), "{name}");
    }
    let names: Vec<String> = p.tools.iter().map(|t| t.spec().name.clone()).collect();
    assert_eq!(names.len(), 9);
    for t in &p.tools {
        let schema = &t.spec().input_schema;
        assert_eq!(schema["type"], "object", "{}", t.spec().name);
        assert_eq!(schema["additionalProperties"], false, "{}", t.spec().name);
    }
}

#[tokio::test]
async fn every_tool_answers_bad_arguments_with_an_error() {
    let p = Project::new();
    for t in &p.tools {
        let name = &t.spec().name;
        for bad in [json!(null), json!([1]), json!("x"), json!({"bogus": 1})] {
            let out = t.call(bad.clone(), CancellationToken::new()).await;
            assert!(out.is_error, "{name} accepted {bad}");
            assert!(out
                .text_content()
                .contains(&format!("invalid arguments for {name}")));
        }
    }
    let msg = p.err("read_file", json!({"path": 3})).await;
    assert!(msg.contains("invalid type"), "{msg}");
    let msg = p.err("read_file", json!({"file": "a"})).await;
    assert!(msg.contains("unknown field `file`"), "{msg}");
}

#[tokio::test]
async fn list_files_lists_one_level_or_recursively() {
    let p = Project::new();
    p.write("a.txt", "a");
    p.write("b/c.txt", "c");
    p.write("b/d/e.txt", "e");
    p.write(".hidden", "h");
    assert_eq!(p.ok("list_files", json!({})).await, ".hidden\na.txt\nb/");
    assert_eq!(
        p.ok("list_files", json!({"recursive": true})).await,
        ".hidden\na.txt\nb/\nb/c.txt\nb/d/\nb/d/e.txt"
    );
    assert_eq!(
        p.ok(
            "list_files",
            json!({"path": "b", "recursive": true, "max_depth": 1})
        )
        .await,
        "b/c.txt\nb/d/"
    );
    assert_eq!(
        p.ok("list_files", json!({"path": "b/d"})).await,
        "b/d/e.txt"
    );
    std::fs::create_dir(p.root.join("empty")).unwrap();
    let msg = p.ok("list_files", json!({"path": "empty"})).await;
    assert!(msg.contains("is empty"), "{msg}");
}

#[tokio::test]
async fn list_files_caps_the_entries_and_says_how_many_more() {
    let p = small(|o| o.list_limit = 10);
    for i in 0..5 {
        p.write(&format!("f{i}"), "x");
    }
    assert_eq!(
        p.ok("list_files", json!({"limit": 2})).await,
        "f0\nf1\n[3 more entries not shown; list a subdirectory or use find_file]"
    );
    // A limit above the cap is clamped to it.
    let p = small(|o| o.list_limit = 4);
    for i in 0..5 {
        p.write(&format!("f{i}"), "x");
    }
    let out = p.ok("list_files", json!({"limit": 100})).await;
    assert!(
        out.ends_with("f3\n[1 more entry not shown; list a subdirectory or use find_file]"),
        "{out}"
    );
}

#[tokio::test]
async fn list_files_errors() {
    let p = Project::new();
    p.write("f.txt", "x");
    let msg = p.err("list_files", json!({"path": "f.txt"})).await;
    assert!(msg.contains("use read_file"), "{msg}");
    let msg = p.err("list_files", json!({"path": "nope"})).await;
    assert!(msg.contains("does not exist"), "{msg}");
    p.err("list_files", json!({"recursive": true, "max_depth": 0}))
        .await;
    p.err("list_files", json!({"recursive": "yes"})).await;
}

#[tokio::test]
async fn find_file_by_glob_substring_and_path() {
    let p = Project::new();
    p.write("README.md", "");
    p.write("src/lib.rs", "");
    p.write("src/a/mod.rs", "");
    p.write("src/a/readme_notes.txt", "");
    p.write("tests/it.rs", "");
    assert_eq!(
        p.ok("find_file", json!({"pattern": "*.rs"})).await,
        "src/a/mod.rs\nsrc/lib.rs\ntests/it.rs"
    );
    assert_eq!(
        p.ok("find_file", json!({"pattern": "readme"})).await,
        "README.md\nsrc/a/readme_notes.txt"
    );
    assert_eq!(
        p.ok("find_file", json!({"pattern": "src/**/mod.rs"})).await,
        "src/a/mod.rs"
    );
    assert_eq!(
        p.ok("find_file", json!({"pattern": "*.rs", "path": "tests"}))
            .await,
        "tests/it.rs"
    );
    // Directories are not files.
    let none = p.ok("find_file", json!({"pattern": "src"})).await;
    assert!(none.starts_with("No files match"), "{none}");
    assert_eq!(
        p.ok("find_file", json!({"pattern": "*.rs", "limit": 1}))
            .await,
        "src/a/mod.rs\n[2 more not shown; use a more specific pattern or path]"
    );
}

#[tokio::test]
async fn find_file_errors() {
    let p = Project::new();
    p.write("f.txt", "");
    assert!(p
        .err("find_file", json!({"pattern": "[x"}))
        .await
        .contains("invalid glob"));
    assert!(p
        .err("find_file", json!({"pattern": " "}))
        .await
        .contains("pattern is empty"));
    p.err("find_file", json!({})).await;
    assert!(p
        .err("find_file", json!({"pattern": "x", "path": "f.txt"}))
        .await
        .contains("not a directory"));
}

#[tokio::test]
async fn read_file_numbers_lines_and_reads_ranges() {
    let p = Project::new();
    p.write("abc.txt", "alpha\nbeta\ngamma\n");
    assert_eq!(
        p.ok("read_file", json!({"path": "abc.txt"})).await,
        "1\talpha\n2\tbeta\n3\tgamma\n"
    );
    assert_eq!(
        p.ok(
            "read_file",
            json!({"path": "abc.txt", "start_line": 2, "end_line": 3})
        )
        .await,
        "2\tbeta\n3\tgamma\n"
    );
    // An end past the last line stops at the last line.
    assert_eq!(
        p.ok(
            "read_file",
            json!({"path": "abc.txt", "start_line": 3, "end_line": 99})
        )
        .await,
        "3\tgamma\n"
    );
    let twelve: String = (1..=12).map(|i| format!("line{i}\n")).collect();
    p.write("twelve.txt", twelve);
    assert_eq!(
        p.ok(
            "read_file",
            json!({"path": "twelve.txt", "start_line": 8, "end_line": 11})
        )
        .await,
        " 8\tline8\n 9\tline9\n10\tline10\n11\tline11\n"
    );
    // CRLF endings are not shown; a last line without a newline counts.
    p.write("crlf.txt", "a\r\nb\r\nc");
    assert_eq!(
        p.ok("read_file", json!({"path": "crlf.txt"})).await,
        "1\ta\n2\tb\n3\tc\n"
    );
    p.write("empty.txt", "");
    assert_eq!(
        p.ok("read_file", json!({"path": "empty.txt"})).await,
        "`empty.txt` is empty."
    );
    // Invalid UTF-8 is shown with a replacement character.
    p.write("latin1.txt", b"caf\xe9\n");
    assert_eq!(
        p.ok("read_file", json!({"path": "latin1.txt"})).await,
        "1\tcaf\u{FFFD}\n"
    );
}

#[tokio::test]
async fn read_file_caps_lines_bytes_and_long_lines_with_notes() {
    let p = small(|o| {
        o.read_max_lines = 3;
        o.read_max_bytes = 10;
        o.max_line_chars = 5;
    });
    p.write("ten.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
    assert_eq!(
        p.ok("read_file", json!({"path": "ten.txt"})).await,
        "1\t1\n2\t2\n3\t3\n[showing lines 1-3 of 10 (the 3-line cap); call read_file with \
         start_line=4 to read on]\n"
    );
    assert_eq!(
        p.ok("read_file", json!({"path": "ten.txt", "start_line": 9}))
            .await,
        " 9\t9\n10\t10\n"
    );
    p.write("wide.txt", "aaaa\nbbbb\ncccc\n");
    assert_eq!(
        p.ok("read_file", json!({"path": "wide.txt"})).await,
        "1\taaaa\n2\tbbbb\n[showing lines 1-2 of 3 (the 10 bytes cap); call read_file with \
         start_line=3 to read on]\n"
    );
    p.write("long.txt", "abcdefghij\n");
    assert_eq!(
        p.ok("read_file", json!({"path": "long.txt"})).await,
        "1\tabcde… [line cut: 10 bytes long]\n"
    );
}

#[tokio::test]
async fn read_file_streams_a_large_file() {
    let p = Project::new();
    let body: String = (1..=100_000).map(|i| format!("row {i}\n")).collect();
    p.write("big.txt", body);
    assert_eq!(
        p.ok(
            "read_file",
            json!({"path": "big.txt", "start_line": 50_000, "end_line": 50_001})
        )
        .await,
        "50000\trow 50000\n50001\trow 50001\n"
    );
    let out = p.ok("read_file", json!({"path": "big.txt"})).await;
    assert_eq!(out.lines().count(), 2001, "2000 lines and the note");
    assert!(out.ends_with(
        "[showing lines 1-2000 of 100000 (the 2000-line cap); call read_file with start_line=2001 to read on]\n"
    ), "{}", &out[out.len() - 200..]);
}

#[tokio::test]
async fn read_file_errors() {
    let p = Project::new();
    p.write("abc.txt", "a\nb\nc\n");
    p.write("bin.dat", b"\x7fELF\x00\x01");
    let mut late_nul = vec![b'x'; 8 * 1024];
    late_nul.extend_from_slice(b"\0\n");
    p.write("late.txt", &late_nul);
    std::fs::create_dir(p.root.join("dir")).unwrap();
    let cases = [
        (
            json!({"path": "abc.txt", "start_line": 4}),
            "past the end of `abc.txt`, which has 3 lines",
        ),
        (
            json!({"path": "abc.txt", "start_line": 3, "end_line": 2}),
            "is before start_line",
        ),
        (
            json!({"path": "abc.txt", "start_line": 0}),
            "line numbers start at 1",
        ),
        (
            json!({"path": "abc.txt", "start_line": -1}),
            "invalid value",
        ),
        (json!({"path": "bin.dat"}), "binary"),
        (json!({"path": "dir"}), "is a directory"),
        (json!({"path": "missing.rs"}), "use find_file"),
        (json!({}), "missing field `path`"),
    ];
    for (input, expected) in cases {
        let msg = p.err("read_file", input.clone()).await;
        assert!(msg.contains(expected), "{input}: {msg}");
    }
    // A NUL past the first 8 KiB does not make a file binary.
    p.ok("read_file", json!({"path": "late.txt"})).await;
}

/// `list_files`, `find_file` and `search` walk through one walk: the directory they are
/// given is judged the same way, and what they see below it too.
#[tokio::test]
async fn the_walking_tools_share_one_walk() {
    let p = Project::new();
    p.write("f.txt", "needle\n");
    p.write("d/g.txt", "needle\n");
    p.write(".gitignore", "d/hidden.txt\n");
    p.write("d/hidden.txt", "needle\n");
    let walking: [(&str, serde_json::Value); 3] = [
        ("list_files", json!({"recursive": true})),
        ("find_file", json!({"pattern": "txt"})),
        ("search", json!({"pattern": "needle"})),
    ];
    for (tool, args) in &walking {
        let with = |path: &str| {
            let mut args = args.clone();
            args["path"] = json!(path);
            args
        };
        let msg = p.err(tool, with("missing")).await;
        assert!(msg.contains("`missing` does not exist"), "{tool}: {msg}");
        let msg = p.err(tool, with("../out")).await;
        assert!(msg.contains("outside the project root"), "{tool}: {msg}");
        let seen = p.ok(tool, with("d")).await;
        assert!(seen.contains("d/g.txt"), "{tool}: {seen}");
        assert!(!seen.contains("hidden"), "{tool}: {seen}");
    }
}
