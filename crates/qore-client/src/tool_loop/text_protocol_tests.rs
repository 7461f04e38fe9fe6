//! Unit tests of the text tool protocol: the parser at every split point, code and fences,
//! tolerated and malformed blocks, and the rendering of the prompt section and results.

use super::super::execute::CallReport;
use super::*;
use qore_core::{ImageData, ImageSource, ToolOutput, ToolResultPart};
use serde_json::json;
use std::time::Duration;

/// Two real calls, text around them, a fenced example and an inline example.
const REPLY: &str = r##"Let me check — “quoted” ünïcödé.
<tool_call>
  {"name": "read_file", "args": {"path": "a.txt"}}  
</tool_call>
To call a tool, write:
  ```text
  <tool_call>{"name": "fake", "arguments": {}}</tool_call>
  ```
Or inline: `<tool_call>{"name": "fake2"}</tool_call>` is the syntax.
A bare <tool_call> mention is prose.
<tool_call>{"name": "search", "arguments": {"q": "日本"}} trailing junk</tool_call> done 🎉"##;

fn text(s: &str) -> TextToolEvent {
    TextToolEvent::Text(s.to_owned())
}

fn call(id: &str, name: &str, input: Value) -> TextToolEvent {
    TextToolEvent::Call(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        input,
        raw_input: None,
    })
}

fn reply_events() -> Vec<TextToolEvent> {
    vec![
        text("Let me check — “quoted” ünïcödé.\n"),
        call("r1_text_call_1", "read_file", json!({"path": "a.txt"})),
        text(concat!(
            "\nTo call a tool, write:\n",
            "  ```text\n",
            "  <tool_call>{\"name\": \"fake\", \"arguments\": {}}</tool_call>\n",
            "  ```\n",
            "Or inline: `<tool_call>{\"name\": \"fake2\"}</tool_call>` is the syntax.\n",
            "A bare <tool_call> mention is prose.\n",
        )),
        call("r1_text_call_2", "search", json!({"q": "日本"})),
        text(" done 🎉"),
    ]
}

/// Feed `pieces` one by one, finish, and merge adjacent text events.
fn run(pieces: &[&str], prefix: &str) -> Vec<TextToolEvent> {
    let mut parser = TextToolParser::new(prefix);
    let mut all = Vec::new();
    for piece in pieces {
        all.extend(parser.feed(piece));
    }
    all.extend(parser.finish());
    let mut merged = Vec::new();
    for event in all {
        match event {
            TextToolEvent::Text(t) => push_text(&mut merged, &t),
            other => merged.push(other),
        }
    }
    merged
}

fn boundaries(s: &str) -> Vec<usize> {
    (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect()
}

#[test]
fn a_whole_reply_gives_two_calls_and_the_exact_visible_text() {
    assert_eq!(parse_reply(REPLY, "r1_"), reply_events());
}

#[test]
fn every_split_point_gives_the_same_events() {
    let expected = reply_events();
    for &i in &boundaries(REPLY) {
        assert_eq!(
            run(&[&REPLY[..i], &REPLY[i..]], "r1_"),
            expected,
            "split at {i}"
        );
    }
}

#[test]
fn every_pair_of_split_points_gives_the_same_events() {
    let expected = reply_events();
    let cuts = boundaries(REPLY);
    for (n, &i) in cuts.iter().enumerate() {
        for &j in &cuts[n..] {
            let pieces = [&REPLY[..i], &REPLY[i..j], &REPLY[j..]];
            assert_eq!(run(&pieces, "r1_"), expected, "split at {i} and {j}");
        }
    }
}

#[test]
fn char_by_char_gives_the_same_events() {
    let chars: Vec<String> = REPLY.chars().map(String::from).collect();
    let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(run(&pieces, "r1_"), reply_events());
}

#[test]
fn text_streams_at_once_and_only_a_possible_tag_waits() {
    let mut parser = TextToolParser::new("");
    assert_eq!(parser.feed("Hello wor"), vec![text("Hello wor")]);
    assert_eq!(parser.feed("ld <tool_"), vec![text("ld ")]);
    assert_eq!(parser.feed("call>{\"name\": \"x\"}</tool"), vec![]);
    assert_eq!(
        parser.feed("_call>after"),
        vec![call("text_call_1", "x", json!({})), text("after")]
    );
    assert_eq!(parser.finish(), vec![]);
}

#[test]
fn a_tag_prefix_at_the_end_is_text() {
    assert_eq!(run(&["a < b <tool_c"], ""), vec![text("a < b <tool_c")]);
    assert_eq!(run(&["x <tool_cal", "l "], ""), vec![text("x <tool_call ")]);
}

#[test]
fn inline_code_spans_are_ignored() {
    for reply in [
        "Use `<tool_call>{\"name\": \"x\"}</tool_call>` like that.",
        "Use `` a ` <tool_call>{\"name\": \"x\"}</tool_call> `` like that.",
        "```not a fence <tool_call>{\"name\": \"x\"}</tool_call>```\n",
    ] {
        assert_eq!(parse_reply(reply, ""), vec![text(reply)], "{reply}");
    }
    // A backtick in the info string: inline code, not a fence, so the next line is a call.
    assert_eq!(
        parse_reply("```a`\n<tool_call>{\"name\": \"x\"}</tool_call>", ""),
        vec![text("```a`\n"), call("text_call_1", "x", json!({}))]
    );
}

#[test]
fn an_unmatched_backtick_does_not_hide_a_call() {
    assert_eq!(
        parse_reply("costs 5` <tool_call>{\"name\": \"x\"}</tool_call>!", ""),
        vec![
            text("costs 5` "),
            call("text_call_1", "x", json!({})),
            text("!")
        ]
    );
    assert_eq!(
        parse_reply("a ` b\n<tool_call>{\"name\": \"x\"}</tool_call>", ""),
        vec![text("a ` b\n"), call("text_call_1", "x", json!({}))]
    );
}

#[test]
fn fences_of_any_kind_hide_calls_until_they_close() {
    let c = "<tool_call>{\"name\": \"x\"}</tool_call>";
    // `~~~`, a longer fence not closed by a shorter one, a fence in a list item, a quote.
    for fenced in [
        format!("~~~\n```\n{c}\n~~~\n"),
        format!("````md\n```\n{c}\n```\n{c}\n````\n"),
        format!("1. Like this:\n   - ```\n     {c}\n     ```\n"),
        format!("> ```\n> {c}\n> ```\n"),
    ] {
        let reply = format!("{fenced}{c}");
        assert_eq!(
            parse_reply(&reply, ""),
            vec![text(&fenced), call("text_call_1", "x", json!({}))],
            "{reply}"
        );
    }
    let unclosed = format!("```\n{c}\n");
    assert_eq!(parse_reply(&unclosed, ""), vec![text(&unclosed)]);
    let not_a_closer = format!("```\n``` x\n{c}");
    assert_eq!(parse_reply(&not_a_closer, ""), vec![text(&not_a_closer)]);
}

#[test]
fn a_tag_mentioned_in_prose_stays_text() {
    let c = "<tool_call>{\"name\": \"x\"}</tool_call>";
    let reply = format!("I use <tool_call> - ~~~ tags, like `{c}`:\n{c}\nNo more <tool_call> now.");
    assert_eq!(
        parse_reply(&reply, ""),
        vec![
            text(&format!("I use <tool_call> - ~~~ tags, like `{c}`:\n")),
            call("text_call_1", "x", json!({})),
            text("\nNo more <tool_call> now."),
        ]
    );
    // A block that starts like JSON is a block even with a tag inside it.
    let inner = "<tool_call>{\"name\": \"w\", \"args\": {\"s\": \"<tool_call>\"}}</tool_call>";
    assert_eq!(
        parse_reply(inner, ""),
        vec![call("text_call_1", "w", json!({"s": "<tool_call>"}))]
    );
}

#[test]
fn arguments_args_and_missing_arguments() {
    let reply = concat!(
        "<tool_call>{\"name\": \"a\", \"args\": {\"n\": 1}}</tool_call>",
        "<tool_call>{\"name\": \"b\", \"arguments\": {\"n\": 2}, \"args\": {\"n\": 3}}</tool_call>",
        "<tool_call>{\"name\": \"c\"}</tool_call>",
        "<tool_call>{\"name\": \"d\", \"arguments\": null}</tool_call>",
    );
    assert_eq!(
        parse_reply(reply, "p_"),
        vec![
            call("p_text_call_1", "a", json!({"n": 1})),
            call("p_text_call_2", "b", json!({"n": 2})),
            call("p_text_call_3", "c", json!({})),
            call("p_text_call_4", "d", json!({})),
        ]
    );
}

#[test]
fn whitespace_a_leading_fence_line_and_junk_after_the_json_are_tolerated() {
    let reply = concat!(
        "<tool_call>\n\t {\"name\": \"a\", \"arguments\": {\"s\": \"`x` <\\/tool_call>\"}}\n\n",
        "</tool_call>",
        "<tool_call>```json\n{\"name\": \"b\"}\n```</tool_call>",
        "<tool_call>{\"name\": \"c\"}{\"name\": \"d\"} and more</tool_call>",
    );
    assert_eq!(
        parse_reply(reply, ""),
        vec![
            call("text_call_1", "a", json!({"s": "`x` </tool_call>"})),
            call("text_call_2", "b", json!({})),
            call("text_call_3", "c", json!({})),
        ]
    );
}

fn malformed(event: &TextToolEvent) -> (&str, &str, &str) {
    match event {
        TextToolEvent::Malformed { id, raw, message } => (id, raw, message),
        other => panic!("expected a malformed block, got {other:?}"),
    }
}

#[test]
fn malformed_blocks_get_an_id_their_raw_text_and_a_reason() {
    let cases = [
        ("{\"name\": \"a\", ", "not valid JSON"),
        ("  ", "is empty"),
        (
            "[{\"name\": \"a\"}]",
            "must hold a JSON object, not [{\"name\":\"a\"}]",
        ),
        ("{\"arguments\": {}}", "non-empty string \"name\""),
        ("{\"name\": 7}", "non-empty string \"name\""),
        ("{\"name\": \" \"}", "non-empty string \"name\""),
        (
            "{\"name\": \"a\", \"args\": \"{}\"}",
            "\"arguments\" of a must be a JSON object, not \"{}\"",
        ),
    ];
    for (body, reason) in cases {
        let events = parse_reply(&format!("x<tool_call>{body}</tool_call>y"), "m_");
        assert_eq!(events.len(), 3, "{body}: {events:?}");
        assert_eq!((&events[0], &events[2]), (&text("x"), &text("y")));
        let (id, raw, message) = malformed(&events[1]);
        assert_eq!((id, raw), ("m_text_call_1", body));
        assert!(message.contains(reason), "{body}: {message}");
        assert!(message.ends_with(SYNTAX_HINT), "{message}");
    }
}

#[test]
fn a_block_never_closed_is_malformed_at_finish() {
    let reply =
        "<tool_call>{\"name\": \"a\"}</tool_call>then <tool_call>{\"name\": \"b\"}</tool_ca";
    for &i in &boundaries(reply) {
        let events = run(&[&reply[..i], &reply[i..]], "");
        assert_eq!(events.len(), 3, "split at {i}: {events:?}");
        assert_eq!(
            events[..2],
            [call("text_call_1", "a", json!({})), text("then ")]
        );
        let (id, raw, message) = malformed(&events[2]);
        assert_eq!((id, raw), ("text_call_2", "{\"name\": \"b\"}</tool_ca"));
        assert!(message.contains("never closed"), "{message}");
    }
}

fn report(id: &str, name: &str, output: ToolOutput) -> CallReport {
    CallReport {
        id: id.into(),
        name: name.into(),
        output,
        ran: true,
        elapsed: Duration::from_millis(3),
    }
}

#[test]
fn results_render_in_order_and_cannot_close_their_block_early() {
    let image = ToolResultPart::Image(ImageSource {
        media_type: Some("image/png".into()),
        data: ImageData::Url("https://x/y.png".into()),
    });
    let two_parts = ToolOutput {
        content: vec![
            ToolResultPart::Text {
                text: "see:".into(),
            },
            image,
        ],
        is_error: false,
        structured: None,
    };
    let bad = malformed_result("t_text_call_3", "The <tool_call> block is empty.");
    assert_eq!(
        (bad.ran, bad.output.is_error, bad.name.as_str()),
        (false, true, "")
    );
    let reports = [
        report(
            "t_text_call_1",
            "read_file",
            ToolOutput::text("a</tool_result>b</TOOL_RESULT >c</tool_x>\n"),
        ),
        report(
            "t_text_call_2",
            "we\"ird<&>",
            ToolOutput::error("no such file"),
        ),
        bad,
        report("t_text_call_4", "pic", two_parts),
        report("t_text_call_5", "quiet", ToolOutput::text("")),
    ];
    assert_eq!(
        render_results(&reports),
        concat!(
            "<tool_result name=\"read_file\" id=\"t_text_call_1\">\n",
            "a<\\/tool_result>b<\\/TOOL_RESULT >c</tool_x>\n",
            "</tool_result>\n",
            "<tool_result name=\"we&quot;ird&lt;&amp;&gt;\" id=\"t_text_call_2\" error=\"true\">\n",
            "no such file\n",
            "</tool_result>\n",
            "<tool_result id=\"t_text_call_3\" error=\"true\">\n",
            "The <tool_call> block is empty.\n",
            "</tool_result>\n",
            "<tool_result name=\"pic\" id=\"t_text_call_4\">\n",
            "see:\n[image]\n",
            "</tool_result>\n",
            "<tool_result name=\"quiet\" id=\"t_text_call_5\">\n",
            "</tool_result>",
        )
    );
    assert_eq!(render_results(&[]), "");
}
