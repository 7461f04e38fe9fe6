//! A transcript as Markdown, for reading.
//!
//! Promises: a title heading and the session's metadata, then one `## Turn N` heading per
//! turn (status, undone, time, model, agent, tokens), a `### User` / `### Assistant` /
//! `### Tool results` heading per message; reasoning as a quote, tool calls (arguments as
//! pretty JSON) and tool results in fenced blocks whose fence is longer than any backtick run
//! inside, so no content can break out of its block.

use std::fmt::Write as _;
use std::time::SystemTime;

use qore_core::{ContentBlock, ImageData, Message, Role, ToolResultPart, Usage};

use super::{Transcript, TranscriptTurn};

/// The whole transcript as Markdown, ending with a newline.
pub fn to_markdown(transcript: &Transcript) -> String {
    let session = &transcript.session;
    let mut out = String::new();
    let title = session.title.as_deref().unwrap_or("Untitled session");
    let _ = writeln!(out, "# {title}\n");
    let facts = [
        ("id", Some(session.id.clone())),
        ("name", session.name.clone()),
        ("project", session.project_dir.clone()),
        ("agent", session.agent.clone()),
        ("model", session.model.clone()),
        ("created", Some(time(session.created_at))),
        ("updated", Some(time(session.updated_at))),
        ("compressed from", session.parent_id.clone()),
    ];
    for (label, value) in facts {
        if let Some(value) = value {
            let _ = writeln!(out, "- {label}: {value}");
        }
    }
    for turn in &transcript.turns {
        write_turn(&mut out, turn);
    }
    out
}

fn write_turn(out: &mut String, turn: &TranscriptTurn) {
    let undone = if turn.undone { ", undone" } else { "" };
    let _ = writeln!(
        out,
        "\n## Turn {} ({}{undone})\n",
        turn.seq,
        turn.status.as_str()
    );
    let mut facts = vec![time(turn.started_at)];
    facts.extend(turn.model.iter().map(|m| format!("model {m}")));
    facts.extend(turn.agent.iter().map(|a| format!("agent {a}")));
    facts.extend(tokens(&turn.usage));
    let _ = writeln!(out, "*{}*", facts.join(" · "));
    for message in &turn.messages {
        write_message(out, message);
    }
}

fn write_message(out: &mut String, message: &Message) {
    let results = (message.blocks.iter()).all(|b| matches!(b, ContentBlock::ToolResult { .. }));
    let heading = match message.role {
        Role::System => "System",
        Role::User if results && !message.blocks.is_empty() => "Tool results",
        Role::User => "User",
        Role::Assistant => "Assistant",
    };
    let _ = writeln!(out, "\n### {heading}");
    for block in &message.blocks {
        out.push('\n');
        write_block(out, block);
    }
}

fn write_block(out: &mut String, block: &ContentBlock) {
    match block {
        ContentBlock::Text { text, .. } => {
            let _ = writeln!(out, "{}", text.trim_end());
        }
        ContentBlock::Image(image) => {
            let media = image.media_type.as_deref().unwrap_or("image");
            let _ = match &image.data {
                ImageData::Bytes(bytes) => writeln!(out, "*[{media}, {} bytes]*", bytes.len()),
                ImageData::Url(url) if url.starts_with("data:") => {
                    writeln!(out, "*[{media}, inline data]*")
                }
                ImageData::Url(url) => writeln!(out, "*[{media}: <{url}>]*"),
            };
        }
        ContentBlock::Thinking { text, .. } => {
            let _ = writeln!(out, "**Reasoning**\n");
            for line in text.trim_end().lines() {
                let _ = writeln!(out, "> {line}");
            }
        }
        ContentBlock::RedactedThinking { .. } => {
            let _ = writeln!(out, "*(reasoning the provider encrypted)*");
        }
        ContentBlock::ToolUse {
            id,
            name,
            input,
            raw_input,
            ..
        } => {
            let _ = writeln!(out, "**Tool call** `{name}` (id `{id}`)\n");
            let arguments = match raw_input {
                Some(raw) => fenced("", raw),
                None => fenced(
                    "json",
                    &serde_json::to_string_pretty(input).unwrap_or_default(),
                ),
            };
            out.push_str(&arguments);
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let error = if *is_error { ", an error" } else { "" };
            let _ = writeln!(out, "**Result** of `{tool_use_id}`{error}\n");
            let text: Vec<String> = (content.iter())
                .map(|part| match part {
                    ToolResultPart::Text { text } => text.clone(),
                    ToolResultPart::Image(image) => {
                        format!("[{}]", image.media_type.as_deref().unwrap_or("image"))
                    }
                })
                .collect();
            out.push_str(&fenced("", &text.join("\n")));
        }
    }
}

/// `text` in a fenced block whose fence is longer than any run of backticks in it.
fn fenced(language: &str, text: &str) -> String {
    let longest = (text.split(|c| c != '`')).map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!(
        "{fence}{language}\n{}\n{fence}\n",
        text.trim_end_matches('\n')
    )
}

fn tokens(usage: &Usage) -> Option<String> {
    match (usage.input_tokens, usage.output_tokens) {
        (None, None) => None,
        (input, output) => {
            let shown = |n: Option<u64>| n.map_or("?".to_owned(), |n| n.to_string());
            Some(format!(
                "{} in / {} out tokens",
                shown(input),
                shown(output)
            ))
        }
    }
}

/// `2026-11-25 14:58:04 UTC`.
fn time(at: SystemTime) -> String {
    let text = humantime::format_rfc3339_seconds(at).to_string();
    format!("{} UTC", text.trim_end_matches('Z').replacen('T', " ", 1))
}

#[cfg(test)]
mod tests {
    use super::fenced;

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_inside() {
        let cases = [
            ("plain", "```\nplain\n```\n"),
            ("a ``` b", "````\na ``` b\n````\n"),
            ("`````x", "``````\n`````x\n``````\n"),
            ("ends\n\n", "```\nends\n```\n"),
        ];
        for (text, expected) in cases {
            assert_eq!(fenced("", text), expected, "{text:?}");
        }
    }
}
