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

#[test]
fn changed_workspace_folders_take_their_rules_along() {
    let top = tempfile::tempdir().unwrap();
    let (one, two) = (top.path().join("one"), top.path().join("two"));
    for dir in [&one, &two] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(".qoreignore"), "hidden.rs\n").unwrap();
    }
    let mut roots = Roots::new([one.clone()]);
    let hidden = |dir: &PathBuf| dir.join("hidden.rs");
    assert_eq!(
        (roots.ignores(&hidden(&one)), roots.ignores(&hidden(&two))),
        (true, false)
    );
    // `two` added twice (the second is no new root), `one` removed by a non-canonical path.
    roots.change(
        vec![two.clone(), two.join(".")],
        &[one.join("..").join("one")],
    );
    assert_eq!(
        (roots.ignores(&hidden(&one)), roots.ignores(&hidden(&two))),
        (false, true)
    );
    assert_eq!(roots.sandboxes.len(), 1);
}
