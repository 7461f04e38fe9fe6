//! Ignore rules by root, one table.

use std::path::PathBuf;

use super::Roots;

#[test]
fn files_are_ignored_by_the_rules_of_their_root() {
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("project");
    let inner = root.join("inner");
    std::fs::create_dir_all(inner.join("src")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "*.secret\nbuild/\n").unwrap();
    std::fs::write(root.join(".qoreignore"), "private.rs\n").unwrap();
    std::fs::write(inner.join(".qoreignore"), "src/hidden.rs\n").unwrap();
    std::fs::write(top.path().join("outside.secret"), "").unwrap();
    let roots = Roots::new([root.clone(), inner.clone(), top.path().join("missing")]);
    let cases: Vec<(&str, PathBuf, bool)> = vec![
        ("a plain file", root.join("main.rs"), false),
        ("gitignored by pattern", root.join("a.secret"), true),
        ("in a gitignored dir", root.join("build/out.rs"), true),
        ("qoreignored", root.join("private.rs"), true),
        ("inside .git", root.join(".git/config"), true),
        (
            "the inner root's own rule",
            inner.join("src/hidden.rs"),
            true,
        ),
        (
            "the outer rule reaches the inner root",
            inner.join("x.secret"),
            true,
        ),
        ("an unsaved new file", inner.join("src/new.rs"), false),
        (
            "outside every root",
            top.path().join("outside.secret"),
            false,
        ),
    ];
    for (name, path, expected) in cases {
        assert_eq!(roots.ignores(&path), expected, "{name}");
    }
}
