//! `--range` to a 0-based range and back; splicing the new text in; the diff's headers; the
//! atomic write keeping the file's permissions.

use super::{format_range, parse_range, spliced, unified_diff, write_atomically};
use qore_session::completion::context::{Cursor, Range};

fn range(from: (u32, u32), to: (u32, u32)) -> Range {
    let at = |(line, character)| Cursor { line, character };
    Range {
        start: at(from),
        end: at(to),
    }
}

#[test]
fn ranges_are_one_based_on_the_command_line() {
    let cases: &[(&str, Option<Range>)] = &[
        ("1:1-1:1", Some(range((0, 0), (0, 0)))),
        ("2:5-3:1", Some(range((1, 4), (2, 0)))),
        ("10:3-2:1", Some(range((9, 2), (1, 0)))),
        ("0:1-1:1", None),
        ("1:0-1:1", None),
        ("1:1", None),
        ("1:1-2", None),
        ("1-2", None),
        ("a:1-2:2", None),
        ("1:1-2:2-3:3", None),
        ("1:-1-2:2", None),
        ("", None),
    ];
    for (input, want) in cases {
        assert_eq!(parse_range(input), *want, "{input:?}");
        if let Some(parsed) = want {
            assert_eq!(parse_range(&format_range(parsed)).as_ref(), Some(parsed));
        }
    }
}

#[test]
fn the_new_text_replaces_the_range() {
    let text = "ab\ncd\n";
    let cases = [
        (range((0, 1), (1, 1)), "X", "aXd\n"),
        (range((1, 1), (0, 1)), "X", "aXd\n"),
        (range((1, 0), (1, 0)), "Y", "ab\nYcd\n"),
        (range((9, 0), (9, 9)), "Z", "ab\ncd\nZ"),
    ];
    for (at, new, want) in cases {
        assert_eq!(spliced(text, &at, new), want, "{at:?}");
    }
}

#[test]
fn the_diff_names_the_file_under_a_and_b() {
    for (name, shown) in [("src/x.py", "src/x.py"), ("/tmp/x.py", "tmp/x.py")] {
        let diff = unified_diff(name, "a\nb\n", "a\nc\n");
        let lines: Vec<&str> = diff.lines().collect();
        let (old, new) = (format!("--- a/{shown}"), format!("+++ b/{shown}"));
        assert_eq!(
            lines,
            [&old, &new, "@@ -1,2 +1,2 @@", " a", "-b", "+c"],
            "{name}"
        );
    }
}

#[test]
#[cfg(unix)]
fn a_write_replaces_the_file_and_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.sh");
    std::fs::write(&path, "old\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    write_atomically(&path, "new\n").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o750);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    let missing = dir.path().join("gone.sh");
    assert!(write_atomically(&missing, "x").is_err());
}
