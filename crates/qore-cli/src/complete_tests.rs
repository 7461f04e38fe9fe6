//! `FILE:LINE:COL` to a path and a 0-based cursor, or `None` for what is not one.

use super::parse_position;

/// The path, line and column parsed, or `None`.
type Parsed = Option<(&'static str, u32, u32)>;

#[test]
fn positions_are_one_based_on_the_command_line() {
    let cases: &[(&str, Parsed)] = &[
        ("src/a.rs:1:1", Some(("src/a.rs", 0, 0))),
        ("src/a.rs:12:5", Some(("src/a.rs", 11, 4))),
        ("C:/x/a.rs:3:9", Some(("C:/x/a.rs", 2, 8))),
        ("a.rs:0:0", Some(("a.rs", 0, 0))),
        ("a.rs:12", None),
        ("a.rs:x:1", None),
        ("a.rs:1:-1", None),
        (":1:1", None),
        ("", None),
    ];
    for (input, want) in cases {
        let got = parse_position(input);
        let got = (got.as_ref()).map(|(p, c)| (p.to_str().unwrap_or("?"), c.line, c.character));
        assert_eq!(got, *want, "{input:?}");
    }
}
