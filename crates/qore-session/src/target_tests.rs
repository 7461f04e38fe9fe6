//! Where a project is recorded: its canonical path.

use super::*;

#[test]
#[cfg(unix)]
fn a_project_is_recorded_by_its_canonical_path() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().canonicalize().unwrap().join("app");
    std::fs::create_dir(&real).unwrap();
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let gone = root.path().join("gone");
    // (given, recorded): `..` and links resolved; a missing directory made absolute.
    let cases = [
        (real.join("..").join("app"), real.clone()),
        (link.clone(), real.clone()),
        (gone.clone(), gone.clone()),
    ];
    for (given, recorded) in cases {
        assert_eq!(
            resolve_project(Some(&given)).unwrap(),
            recorded,
            "{given:?}"
        );
    }
    let relative = resolve_project(Some(Path::new("no-such-dir"))).unwrap();
    assert!(relative.is_absolute() && relative.ends_with("no-such-dir"));
}
