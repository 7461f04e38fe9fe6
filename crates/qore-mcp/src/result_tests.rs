use qore_core::{ImageData, ImageSource, ToolResultPart};
use serde_json::{json, Value};

use super::*;

fn t(s: &str) -> ToolResultPart {
    ToolResultPart::Text { text: s.into() }
}

fn run(result: Value, limit: usize) -> ToolOutput {
    let result: CallToolResult = serde_json::from_value(result).unwrap();
    to_output(result, limit)
}

#[test]
fn results_become_what_models_read() {
    let png = ToolResultPart::Image(ImageSource {
        media_type: Some("image/png".into()),
        data: ImageData::Bytes(vec![1, 2, 3]),
    });
    let cases: Vec<(Value, Vec<ToolResultPart>, bool)> = vec![
        (json!({"content": [{"type": "text", "text": "hi"}]}), vec![t("hi")], false),
        (json!({"content": [{"type": "text", "text": "boom"}], "isError": true}), vec![t("boom")], true),
        (json!({"content": [], "isError": true}), vec![t("the tool failed and said nothing")], true),
        (json!({"content": []}), vec![t("(no output)")], false),
        (json!({"content": [{"type": "image", "data": "AQID", "mimeType": "image/png"}]}), vec![png.clone()], false),
        (
            json!({"content": [{"type": "image", "data": "!!", "mimeType": "image/png"}]}),
            vec![t("[image (image/png) left out: its base64 data is invalid: Invalid symbol 33, offset 0.]")],
            false,
        ),
        (
            json!({"content": [{"type": "resource", "resource": {"uri": "file:///a", "text": "body"}}]}),
            vec![t("[resource file:///a]\nbody")],
            false,
        ),
        (
            json!({"content": [{"type": "resource", "resource": {"uri": "u", "mimeType": "image/png", "blob": "AQID"}}]}),
            vec![png],
            false,
        ),
        (
            json!({"content": [{"type": "resource", "resource": {"uri": "u", "mimeType": "application/zip", "blob": "AQID"}}]}),
            vec![t("[resource u (application/zip, 4 base64 characters) left out: binary]")],
            false,
        ),
        (
            json!({"content": [{"type": "audio", "data": "AQID", "mimeType": "audio/wav"}]}),
            vec![t("[audio (audio/wav) left out: not passed to models]")],
            false,
        ),
        (
            json!({"content": [{"type": "resource_link", "uri": "file:///b", "name": "b"}]}),
            vec![t("[resource link file:///b (b)]")],
            false,
        ),
        (json!({"content": [], "structuredContent": {"sum": 3}}), vec![t(r#"{"sum":3}"#)], false),
        (
            json!({"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}}),
            vec![t("3")],
            false,
        ),
    ];
    for (input, content, is_error) in cases {
        let out = run(input.clone(), 1000);
        assert_eq!((out.content, out.is_error), (content, is_error), "{input}");
    }
    let structured = run(
        json!({"content": [], "structuredContent": {"sum": 3}}),
        1000,
    )
    .structured;
    assert_eq!(structured, Some(json!({"sum": 3})));
}

#[test]
fn large_results_are_cut_with_a_note() {
    let input = json!({"content": [
        {"type": "text", "text": "abcdef"},
        {"type": "image", "data": "AQID", "mimeType": "image/png"},
        {"type": "text", "text": "ghij"}
    ]});
    let cases: &[(usize, &[&str])] = &[
        (10, &["abcdef", "ghij"]),
        (
            8,
            &["abcdef", "gh", "[result cut: 8 of 10 characters shown]"],
        ),
        (4, &["abcd", "[result cut: 4 of 10 characters shown]"]),
    ];
    for (limit, want) in cases {
        let out = run(input.clone(), *limit);
        assert_eq!(out.text_content(), want.join("\n"), "limit {limit}");
        assert_eq!(out.content.len(), want.len() + 1, "the image stays");
    }
}
