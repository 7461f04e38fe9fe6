use super::*;

#[test]
fn compress_at_reads_off_a_percentage_or_a_fraction_and_refuses_the_rest() {
    let cases: [(&str, Option<Option<f64>>); 8] = [
        ("off", Some(None)),
        (" OFF ", Some(None)),
        ("70%", Some(Some(0.7))),
        (" 0.5 ", Some(Some(0.5))),
        ("100%", Some(Some(1.0))),
        ("0", None),
        ("150%", None),
        ("eighty", None),
    ];
    for (text, expected) in cases {
        let parsed = parse_compress_at(text).ok();
        assert_eq!(parsed, expected, "{text:?}");
    }
    let refused = parse_compress_at("eighty").unwrap_err().to_string();
    assert!(
        refused.contains("'eighty' is not a compression threshold"),
        "{refused}"
    );
}
