use super::*;

#[test]
fn a_failure_line_names_the_location_and_never_a_password() {
    // (location, the error as a backend wrote it, expected line)
    let cases = [
        (
            "postgres://qore:s3cret@127.0.0.1:1/qore",
            "the store cannot be reached: connection refused",
            "cannot open the store postgres://qore@127.0.0.1:1/qore: the store cannot be \
             reached: connection refused",
        ),
        (
            "postgres://qore:p%40ss@db/qore?password=x%2Fy",
            "bad URL postgres://qore:p%40ss@db/qore (p@ss, x/y)",
            "cannot open the store postgres://qore@db/qore: bad URL \
             postgres://qore:***@db/qore (***, ***)",
        ),
        (
            "/nowhere/qore.db",
            "cannot open the session store /nowhere/qore.db: unable to open\ndatabase file",
            "cannot open the session store /nowhere/qore.db: unable to open database file",
        ),
    ];
    for (location, error, expected) in cases {
        let line = failure_line(&shown(location), location, error);
        assert_eq!(line, expected, "{location}");
    }
}

#[test]
fn the_same_store_twice_is_recognised() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("qore.db");
    std::fs::write(&file, b"").unwrap();
    let dotted = dir.path().join(".").join("qore.db");
    let (file, dotted) = (file.to_str().unwrap(), dotted.to_str().unwrap());
    let cases = [
        (file, file, true),
        (file, dotted, true),
        (file, "/elsewhere/qore.db", false),
        ("postgres://db/a", "postgres://db/b", false),
        ("postgres://db/a", "postgres://db/a", true),
    ];
    for (a, b, same) in cases {
        assert_eq!(same_location(a, b), same, "{a} {b}");
    }
}
