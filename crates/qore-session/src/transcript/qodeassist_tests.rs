use super::*;

#[test]
fn the_save_time_comes_from_the_file_name() {
    let at = |text: &str| humantime::parse_rfc3339(text).ok();
    let cases = [
        (
            "Fix the build_2025-03-04_10-20.json",
            at("2025-03-04T10:20:00Z"),
        ),
        ("_2025-12-31_23-59.json", at("2025-12-31T23:59:00Z")),
        ("a_b_2025-03-04_10-20.json", at("2025-03-04T10:20:00Z")),
        ("chat_0.4.json", None),
        ("2025-03-04_10-20.json", None),
        ("x_2025-03-04_10-20.txt", None),
        ("x_2025-13-04_10-20.json", None),
        ("x_2025-03-04_1020.json", None),
        ("é_2025-03-04_10-2é.json", None),
        ("", None),
    ];
    for (name, expected) in cases {
        assert_eq!(saved_at(name), expected, "{name}");
    }
}
