use super::*;

#[test]
fn the_listed_prefix_is_unique_and_at_least_8_long() {
    let ids = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let cases: [(&[&str], usize); 5] = [
        (&[], 8),
        (&["01m89kv8qhjt"], 8),
        (&["01m89kv8qhjt", "01m89kv8rjbn"], 9),
        (&["01m89kv8qhjt", "01m89kv8qhzz", "01m89kv8rjbn"], 11),
        (&["01a", "01b"], 8),
    ];
    for (list, width) in cases {
        assert_eq!(prefix_len(&ids(list)), width, "{list:?}");
    }
}

#[test]
fn a_long_title_is_cut_with_an_ellipsis() {
    let cases = [
        ("short", 5, "short"),
        ("longer", 5, "long…"),
        ("ééééé é", 6, "ééééé…"),
    ];
    for (text, most, expected) in cases {
        assert_eq!(shortened(text, most), expected, "{text}");
    }
}
