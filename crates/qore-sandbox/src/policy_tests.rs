use super::*;

fn policy(mode: Mode) -> (tempfile::TempDir, Policy) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
    std::fs::create_dir_all(dir.path().join("home/.ssh")).unwrap();
    let mut p = Policy::new(mode, &root).unwrap();
    p.session_tmp = Some(dir.path().join("tmp"));
    p.unreadable = default_unreadable(Some(&dir.path().join("home")), &[]);
    (dir, p)
}

#[test]
fn writes_follow_the_mode_and_the_protected_entries() {
    // (mode, path relative to the temp dir, allowed)
    let cases = [
        (Mode::WorkspaceWrite, "proj/src/a.rs", true),
        (Mode::WorkspaceWrite, "proj/new.txt", true),
        (Mode::WorkspaceWrite, "proj/.git/hooks/pre-commit", false),
        (Mode::WorkspaceWrite, "proj/.qore/settings.toml", false),
        (Mode::WorkspaceWrite, "tmp/x", true),
        (Mode::WorkspaceWrite, "home/.bashrc", false),
        (Mode::WorkspaceWrite, "home/.ssh/id_rsa", false),
        (Mode::ReadOnly, "proj/src/a.rs", false),
        (Mode::ReadOnly, "tmp/x", true),
        (Mode::FullAccess, "proj/.git/hooks/pre-commit", true),
        (Mode::FullAccess, "home/.bashrc", true),
    ];
    for (mode, rel, allowed) in cases {
        let (dir, p) = policy(mode);
        let got = p.check_write(&dir.path().join(rel));
        assert_eq!(got.is_ok(), allowed, "{mode} {rel}: {got:?}");
    }
}

#[test]
fn a_symlink_out_of_the_root_is_judged_by_its_target() {
    let (dir, p) = policy(Mode::WorkspaceWrite);
    std::os::unix::fs::symlink(dir.path().join("home"), p.root.join("out")).unwrap();
    assert!(p.check_write(&p.root.join("out/.bashrc")).is_err());
    assert!(p.check_read(&p.root.join("out/.ssh/id_rsa")).is_err());
}

#[test]
fn secret_variables_are_scrubbed_unless_kept() {
    let (_dir, mut p) = policy(Mode::WorkspaceWrite);
    p.keep_env = vec!["CARGO_REGISTRY_TOKEN".into()];
    let vars = [
        ("PATH", true),
        ("OPENAI_API_KEY", false),
        ("GITHUB_TOKEN", false),
        ("my_secret", false),
        ("AWS_ACCESS_KEY_ID", false),
        ("DB_PASSWORD", false),
        ("CARGO_REGISTRY_TOKEN", true),
        ("KEYBOARD", true),
    ];
    let input = vars
        .iter()
        .map(|(n, _)| (OsString::from(n), OsString::from("v")));
    let kept: Vec<_> = p.scrub_env(input).into_iter().map(|(n, _)| n).collect();
    for (name, keep) in vars {
        assert_eq!(kept.contains(&OsString::from(name)), keep, "{name}");
    }
}

#[test]
fn modes_parse_by_their_names_only() {
    for mode in [Mode::ReadOnly, Mode::WorkspaceWrite, Mode::FullAccess] {
        assert_eq!(mode.name().parse::<Mode>().unwrap(), mode);
    }
    assert!("workspace_write".parse::<Mode>().is_err());
}
