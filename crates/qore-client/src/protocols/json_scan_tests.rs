use super::*;

/// Every value `skip` accepts is one serde accepts, and the other way round.
#[test]
fn skip_agrees_with_serde_on_valid_and_invalid_values() {
    let cases = [
        r#"{"a":[1,-2.5e+3,0,true,false,null,"x\u00e9\n"],"b":{}}"#,
        r#"[]"#,
        r#""\ud83d\ude00""#,
        r#"-0.0E-0"#,
        r#"01"#,
        r#"1."#,
        r#".5"#,
        r#"{"a":1,}"#,
        r#"[1 2]"#,
        r#""\x""#,
        r#""\ud800""#,
        "\"tab\tinside\"",
        r#"{"a" 1}"#,
        r#"tru"#,
        r#"nul"#,
        r#"{"k":"v"} x"#,
    ];
    for text in cases {
        let mut r = Scanner::new(text);
        let ours = r.skip(0).is_some() && r.at_end();
        let serde = serde_json::from_str::<serde_json::Value>(text).is_ok();
        assert_eq!(ours, serde, "{text}");
    }
}

#[test]
fn strings_borrow_without_escapes_and_decode_them_like_serde() {
    let mut r = Scanner::new(r#""plain text, long enough for the word loop""#);
    assert!(matches!(r.str(), Some(Cow::Borrowed(_))));
    let escaped = r#""a\"b\\c\/d\be\ff\ng\rh\ti\u0041\ud83d\ude00""#;
    let mut r = Scanner::new(escaped);
    let want: String = serde_json::from_str(escaped).unwrap();
    assert_eq!(r.str().as_deref(), Some(want.as_str()));
}

#[test]
fn object_once_refuses_a_repeated_key_it_reads() {
    let read = |text: &str| {
        let mut r = Scanner::new(text);
        r.object_once(|r, key| match key {
            b"a" => r.number().map(|_| 1),
            _ => r.skip(0).map(|()| 0),
        })
    };
    assert!(read(r#"{"a":1,"b":2,"b":3}"#).is_some());
    assert!(read(r#"{"a":1,"a":2}"#).is_none());
}

#[test]
fn nesting_past_the_limit_is_left_to_serde() {
    let deep = format!(
        "{}{}",
        "[".repeat(MAX_DEPTH as usize + 1),
        "]".repeat(MAX_DEPTH as usize + 1)
    );
    assert!(Scanner::new(&deep).skip(0).is_none());
    let shallow = format!("{}{}", "[".repeat(8), "]".repeat(8));
    assert!(Scanner::new(&shallow).skip(0).is_some());
}

#[test]
fn nullable_bool_and_end() {
    let mut r = Scanner::new(" null ");
    assert_eq!(r.nullable(|r| r.bool()), Some(None));
    assert!(r.at_end());
    let mut r = Scanner::new("true");
    assert_eq!(r.nullable(|r| r.bool()), Some(Some(true)));
    assert_eq!(Scanner::new("1").bool(), None);
}

#[test]
fn the_word_scan_stops_exactly_where_the_byte_scan_does() {
    let slow = |bytes: &[u8], pos: usize| {
        (pos..bytes.len())
            .find(|&i| bytes[i] == b'"' || bytes[i] == b'\\' || bytes[i] < 0x20)
            .unwrap_or(bytes.len())
    };
    let alphabet: &[u8] = b"ab\"\\\x00\x1f\x20\x7f\x80\xff\x21\x5b\x5d";
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for len in 0..40 {
        for _ in 0..200 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            for pos in 0..=len {
                assert_eq!(
                    plain_run(&bytes, pos),
                    slow(&bytes, pos),
                    "{bytes:?} from {pos}"
                );
            }
        }
    }
}
