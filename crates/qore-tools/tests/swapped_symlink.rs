//! A symlink swapped in after the sandbox checked a path (another process racing the tool)
//! cannot lead a file operation out of the root: the access goes through the root's
//! directory handle, which refuses the way out, and nothing outside is read or changed.
#![cfg(unix)]

mod common;

use std::io;
use std::path::Path;

use common::{symlink, Project};
use qore_tools::Sandbox;

type Operation = fn(&Sandbox, &Path) -> io::Result<()>;

/// Named operations.
type Operations = &'static [(&'static str, Operation)];

/// Every file operation of the sandbox, by name.
const OPERATIONS: Operations = &[
    ("open_file", |sb, p| sb.open_file(p).map(drop)),
    ("metadata", |sb, p| sb.metadata(p).map(drop)),
    ("read", |sb, p| sb.read(p).map(drop)),
    ("replace", |sb, p| sb.replace(p, b"pwned\n")),
    ("create_new", |sb, p| sb.create_new(p, b"pwned\n")),
];

/// Checks `checked` (which exists), then replaces `swapped` with a symlink to the outside
/// directory (or to the secret in it) and runs `operation` on the checked path.
fn race(operation: Operation, checked: &str, swapped: &str, to_dir: bool) -> io::Result<()> {
    let p = Project::new();
    p.write(checked, "inside\n");
    let sb = p.sandbox();
    let path = sb.resolve(checked).expect("the path is fine when checked");
    let swapped = p.root.join(swapped);
    if swapped.is_dir() {
        std::fs::remove_dir_all(&swapped).unwrap();
    } else {
        std::fs::remove_file(&swapped).unwrap();
    }
    let target = if to_dir {
        p.outside.clone()
    } else {
        p.outside.join("secret.txt")
    };
    symlink(&target, &swapped);
    let result = operation(&sb, &path);
    assert_eq!(
        std::fs::read_to_string(p.outside.join("secret.txt")).unwrap(),
        "TOP SECRET\n",
        "the file outside is unchanged"
    );
    let outside: Vec<_> = std::fs::read_dir(&p.outside).unwrap().collect();
    assert_eq!(outside.len(), 1, "nothing was created outside");
    result
}

#[test]
fn a_path_swapped_for_a_symlink_leading_out_is_refused() {
    // (the checked path, the part of it swapped for a link, whether the link leads to the
    // outside directory (else to the secret file), the operations tried)
    let cases: &[(&str, &str, bool, Operations)] = &[
        ("d/secret.txt", "d", true, OPERATIONS),
        // Writes over a swapped file replace the link itself (see the next test).
        ("secret.txt", "secret.txt", false, &OPERATIONS[..3]),
    ];
    for (checked, swapped, to_dir, operations) in cases {
        for (name, operation) in *operations {
            let err = race(*operation, checked, swapped, *to_dir).expect_err(&format!(
                "{name} on {checked} went through the swapped {swapped}"
            ));
            let text = err.to_string();
            assert!(
                text.contains("symlink that points outside"),
                "{name} on {checked}: {text}"
            );
        }
    }
}

/// A file swapped for a symlink (to the secret outside, or to another file inside) before
/// or after the tools opened it for a change.
#[test]
fn writing_over_a_file_swapped_for_a_symlink_is_refused() {
    // (the moment of the swap, where the link points: outside (else to a file inside))
    let cases = [
        ("before the open", true),
        ("before the open", false),
        ("between the open and the write", true),
        ("between the open and the write", false),
        ("before replace", true),
        ("before replace", false),
    ];
    for (when, out) in cases {
        let p = Project::new();
        p.write("a.txt", "inside\n");
        p.write("other.txt", "other\n");
        let sb = p.sandbox();
        let path = sb.resolve_writable("a.txt").unwrap();
        let target = if out {
            p.outside.join("secret.txt")
        } else {
            p.root.join("other.txt")
        };
        let swap = || {
            std::fs::remove_file(&path).unwrap();
            symlink(&target, &path);
        };
        let result = match when {
            "before the open" => {
                swap();
                sb.open_change(&path).map(drop)
            }
            "between the open and the write" => {
                let change = sb.open_change(&path).unwrap();
                assert_eq!(change.old(), Some(&b"inside\n"[..]));
                swap();
                sb.write_change(&path, change, b"new\n")
            }
            _ => {
                swap();
                sb.replace(&path, b"new\n")
            }
        };
        let err = result.expect_err(&format!("{when}, out={out}: the write went through"));
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{when}: {err}");
        assert!(
            err.to_string().contains("nothing was written"),
            "{when}: {err}"
        );
        assert!(
            path.symlink_metadata().unwrap().is_symlink(),
            "{when}: the link stays"
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            if out { "TOP SECRET\n" } else { "other\n" }
        );
    }
}

#[test]
fn writing_over_a_file_swapped_for_another_is_refused() {
    let p = Project::new();
    p.write("a.txt", "inside\n");
    let sb = p.sandbox();
    let path = sb.resolve_writable("a.txt").unwrap();
    let change = sb.open_change(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    p.write("a.txt", "someone else's\n");
    let err = sb.write_change(&path, change, b"new\n").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
    assert_eq!(p.read("a.txt"), "someone else's\n");
}

#[test]
fn creating_never_replaces_what_appeared() {
    let p = Project::new();
    let sb = p.sandbox();
    let path = sb.resolve_writable("new.txt").unwrap();
    let change = sb.open_change(&path).unwrap();
    assert_eq!(change.old(), None);
    symlink(&p.outside.join("secret.txt"), &path);
    let err = sb.write_change(&path, change, b"x").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    let err = sb.create_new(&path, b"x").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(
        std::fs::read_to_string(p.outside.join("secret.txt")).unwrap(),
        "TOP SECRET\n"
    );
}
