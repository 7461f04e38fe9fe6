//! The text-protocol target: `<tool_call>` parsing of a model reply, streamed and whole.

use super::{cut_points, split_input};
use crate::tool_loop::text_protocol::{parse_reply, TextToolEvent, TextToolParser};

/// A fence no input line closes unless it has this many tildes in a row.
const FENCE: &str = "~~~~~~~~~~~~~~~~";

/// The text-protocol target (see the module doc of [`super`]).
pub fn text_protocol(data: &[u8]) {
    let (widths, body) = split_input(data);
    let reply = String::from_utf8_lossy(body);
    let whole = parse_reply(&reply, "f_");

    let mut parser = TextToolParser::new("f_");
    let mut events = Vec::new();
    let mut from = 0;
    for cut in cut_points(reply.len(), &widths) {
        // Cuts land on character boundaries (a delta is a `&str`).
        let cut = (cut..=reply.len())
            .find(|&at| reply.is_char_boundary(at))
            .unwrap_or(reply.len());
        if cut >= from {
            events.extend(parser.feed(&reply[from..cut]));
            from = cut;
        }
    }
    events.extend(parser.feed(&reply[from..]));
    events.extend(parser.finish());
    assert_eq!(merge_text(events), whole, "streamed in cuts of {widths:?}");

    if whole.iter().all(|e| matches!(e, TextToolEvent::Text(_))) {
        assert_eq!(text_of(&whole), reply, "a reply without blocks is its text");
    }

    if !reply.contains(FENCE) {
        let fenced = format!("{FENCE}\n{reply}");
        let events = parse_reply(&fenced, "f_");
        assert_eq!(
            text_of(&events),
            fenced,
            "a block inside a fence: {events:?}"
        );
    }
}

/// Adjacent text events joined (the streaming parser may cut text anywhere).
fn merge_text(events: Vec<TextToolEvent>) -> Vec<TextToolEvent> {
    let mut out: Vec<TextToolEvent> = Vec::with_capacity(events.len());
    for event in events {
        match (out.last_mut(), event) {
            (_, TextToolEvent::Text(text)) if text.is_empty() => {}
            (Some(TextToolEvent::Text(last)), TextToolEvent::Text(text)) => last.push_str(&text),
            (_, event) => out.push(event),
        }
    }
    out
}

/// The text of `events`, which must all be text.
fn text_of(events: &[TextToolEvent]) -> String {
    events
        .iter()
        .map(|event| match event {
            TextToolEvent::Text(text) => text.as_str(),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}
