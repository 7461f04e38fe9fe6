use super::*;

#[test]
fn relative_display_uses_slashes_and_dot_for_root() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path()).unwrap();
    assert_eq!(sb.relative(sb.root()), ".");
    assert_eq!(sb.relative(&sb.root().join("a").join("b.rs")), "a/b.rs");
}

#[test]
fn a_file_is_not_a_root() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    assert!(matches!(
        Sandbox::new(&file),
        Err(SandboxError::Root { .. })
    ));
    assert!(matches!(
        Sandbox::new(dir.path().join("missing")),
        Err(SandboxError::Root { .. })
    ));
}

#[test]
fn new_paths_resolve_under_the_canonical_root() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path()).unwrap();
    let expected = std::fs::canonicalize(dir.path())
        .unwrap()
        .join("new/dir/f.txt");
    assert_eq!(sb.resolve("./new/./dir/f.txt").unwrap(), expected);
    assert_eq!(sb.resolve(".").unwrap(), sb.root());
}
