use std::borrow::Cow;

use super::{Arguments, LooseText};

/// What a field read as: its text, and whether that text borrows from the frame.
fn read(text: Option<Cow<'_, str>>) -> Option<(String, bool)> {
    text.map(|t| (t.to_string(), matches!(t, Cow::Borrowed(_))))
}

#[test]
fn loose_text_reads_strings_and_tolerates_every_other_value() {
    let some = |text: &str, borrowed| Some((text.to_owned(), borrowed));
    // (JSON, read where an object's `text` counts, read where it does not)
    let cases = [
        (r#""plain""#, some("plain", true), some("plain", true)),
        (r#""a\nb""#, some("a\nb", false), some("a\nb", false)),
        ("null", None, None),
        ("true", None, None),
        ("-3", None, None),
        ("7", None, None),
        ("1.5", None, None),
        (r#"["x", {"text": "y"}]"#, None, None),
        (
            r#"{"type": "t", "text": "inner"}"#,
            some("inner", true),
            None,
        ),
        (r#"{"text": {"text": "deep"}}"#, some("deep", true), None),
        (r#"{"other": "x"}"#, None, None),
    ];
    for (json, of_object, plain) in cases {
        let loose: LooseText<'_, true> = serde_json::from_str(json).unwrap();
        assert_eq!(read(loose.take()), of_object, "{json} (object text)");
        let strict: LooseText<'_> = serde_json::from_str(json).unwrap();
        assert_eq!(read(strict.take()), plain, "{json}");
    }
}

#[test]
fn non_empty_is_the_text_unless_empty_or_absent() {
    for (json, expected) in [(r#""a""#, Some("a")), (r#""""#, None), ("null", None)] {
        let text: LooseText<'_> = serde_json::from_str(json).unwrap();
        assert_eq!(text.non_empty(), expected, "{json}");
    }
}

#[test]
fn arguments_are_the_string_or_the_json_text_of_a_value() {
    let cases = [
        (r#""{\"a\":1}""#, r#"{"a":1}"#, false),
        (r#""{}""#, "{}", true),
        (r#"{"a": [1, 2]}"#, r#"{"a":[1,2]}"#, false),
        ("[1, 2]", "[1,2]", false),
    ];
    for (json, text, borrowed) in cases {
        let Arguments(args) = serde_json::from_str(json).unwrap();
        assert_eq!(
            read(Some(args)),
            Some((text.to_owned(), borrowed)),
            "{json}"
        );
    }
    assert!(serde_json::from_str::<Arguments<'_>>("3").is_err());
}

#[test]
fn a_stream_that_ended_is_fine_and_one_cut_short_names_what_is_missing() {
    assert!(super::stream_end(true, "x").is_ok());
    let cut = super::stream_end(false, "`done: true` line").unwrap_err();
    assert_eq!(cut.category, qore_core::ErrorCategory::Network);
    assert_eq!(
        cut.message,
        "the stream ended before the response was complete (no `done: true` line)"
    );
}

#[test]
fn tool_result_text_marks_errors_and_puts_each_image_s_stand_in_in_order() {
    use qore_core::{ImageData, ImageSource, ToolResultPart};
    let image = ToolResultPart::Image(ImageSource {
        media_type: None,
        data: ImageData::Url("https://example.test/a.png".into()),
    });
    let text = |t: &str| ToolResultPart::Text { text: t.into() };
    let content = [text("a"), image, text("b")];
    let cases = [(false, "a[img]b"), (true, "Error: a[img]b")];
    for (is_error, expected) in cases {
        let mut seen = Vec::new();
        let out = super::tool_result_text(&content, is_error, |image| {
            seen.push(image.media_type.clone());
            Ok::<_, ()>("[img]")
        });
        assert_eq!(out.as_deref(), Ok(expected));
        assert_eq!(seen.len(), 1);
    }
    let failed = super::tool_result_text(&content, false, |_| Err("no images"));
    assert_eq!(failed, Err("no images"));
}
