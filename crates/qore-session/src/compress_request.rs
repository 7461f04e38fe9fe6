//! The summary request: the older turns written out as one transcript, how it shrinks when
//! it does not fit, and how an answer saying "it does not fit" is recognised.
//!
//! Promises:
//! - [`summary_history`] is the compressor's instructions as the system message and one user
//!   message holding the transcript of the older turns: every text, every tool call (name
//!   and arguments) and every tool result; thinking is left out and an image is a
//!   placeholder, so any wire and any model can read it, whatever wrote the session. It
//!   says whether kept turns follow the summary ([`Newest`]), and when the newest turns are
//!   in the transcript though compression keeps them otherwise, that they are.
//! - [`shrink_steps`] is the order of retries after an overflow: first the tool results of
//!   the older half of the turns are dropped, then all tool results, then the oldest turns
//!   (half, three quarters, … until one is left). A dropped part leaves a note saying what
//!   was there, so the summary can say it is missing.
//! - [`is_context_overflow`] recognises the real wording of OpenAI (Chat and Responses),
//!   Anthropic, Gemini, llama.cpp, Ollama, Mistral and the OpenAI-compatible servers that
//!   copy OpenAI's (DeepSeek, OpenRouter, vLLM), and nothing that is an auth, network,
//!   rate-limit or output-cap error.

use std::fmt::Write as _;

use qore_core::{ContentBlock, ErrorCategory, ErrorInfo, History, Message, ToolResultPart};
use qore_store::TurnRecord;

use crate::tokens::estimate_message;

/// What a retry leaves out of the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shrink {
    /// The tool results of the first this many turns are replaced by a note.
    pub results_dropped: usize,
    /// The first this many turns are left out, with a note.
    pub turns_dropped: usize,
}

/// The attempts, in order, for `turns` older turns: the whole transcript first.
pub fn shrink_steps(turns: usize) -> Vec<Shrink> {
    let mut steps = vec![Shrink::default()];
    let mut push = |step: Shrink| {
        if steps.last() != Some(&step) {
            steps.push(step);
        }
    };
    push(Shrink {
        results_dropped: turns.div_ceil(2),
        turns_dropped: 0,
    });
    push(Shrink {
        results_dropped: turns,
        turns_dropped: 0,
    });
    let mut kept = turns;
    while kept > 1 {
        kept /= 2;
        push(Shrink {
            results_dropped: turns,
            turns_dropped: turns - kept.max(1),
        });
    }
    steps
}

/// The messages of a stored turn, as the model saw them.
pub fn turn_messages(turn: &TurnRecord) -> impl Iterator<Item = &Message> {
    std::iter::once(&turn.user).chain(&turn.replies)
}

/// The transcript of `turns` with `shrink` applied.
pub fn transcript(turns: &[TurnRecord], shrink: Shrink) -> String {
    let mut out = String::new();
    if shrink.turns_dropped > 0 {
        let _ = writeln!(
            out,
            "[The first {} turns are left out: they did not fit the context window.]\n",
            shrink.turns_dropped
        );
    }
    let names = tool_names(turns);
    for (index, turn) in turns.iter().enumerate().skip(shrink.turns_dropped) {
        let drop_results = index < shrink.results_dropped;
        for message in turn_messages(turn) {
            write_message(&mut out, message, drop_results, &names);
        }
    }
    out
}

fn tool_names(turns: &[TurnRecord]) -> std::collections::HashMap<&str, &str> {
    (turns.iter())
        .flat_map(turn_messages)
        .flat_map(|m| &m.blocks)
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect()
}

fn write_message(
    out: &mut String,
    message: &Message,
    drop_results: bool,
    names: &std::collections::HashMap<&str, &str>,
) {
    let role = match message.role {
        qore_core::Role::System => "system",
        qore_core::Role::User => "user",
        qore_core::Role::Assistant => "assistant",
    };
    for block in &message.blocks {
        match block {
            ContentBlock::Text { text, .. } => {
                let _ = writeln!(out, "[{role}]\n{}\n", text.trim_end());
            }
            ContentBlock::Image(_) => {
                let _ = writeln!(out, "[{role}]\n[an image]\n");
            }
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {}
            ContentBlock::ToolUse {
                name,
                input,
                raw_input,
                ..
            } => {
                let args = raw_input.clone().unwrap_or_else(|| input.to_string());
                let _ = writeln!(out, "[{role} called the tool {name}]\n{args}\n");
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let name = names.get(tool_use_id.as_str()).copied().unwrap_or("a tool");
                let kind = if *is_error { "error" } else { "result" };
                let _ = writeln!(out, "[{kind} of the tool {name}]");
                if drop_results {
                    let tokens = estimate_message(&Message::new(message.role, vec![block.clone()]));
                    let _ = writeln!(
                        out,
                        "[left out to fit the context window: about {tokens} tokens]\n"
                    );
                    continue;
                }
                for part in content {
                    match part {
                        ToolResultPart::Text { text } => {
                            let _ = writeln!(out, "{}", text.trim_end());
                        }
                        ToolResultPart::Image(_) => out.push_str("[an image]\n"),
                    }
                }
                out.push('\n');
            }
        }
    }
}

/// What follows the summarised turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Newest {
    /// Turns kept as they are after the summary (not in the transcript).
    pub kept: usize,
    /// The newest turns of the transcript, summarised though compression keeps them
    /// otherwise: they alone pass the threshold.
    pub squeezed: usize,
}

/// The request that asks for the summary: `instructions` as the system message, then the
/// transcript of `turns` (with `shrink` applied) in one user message, saying what follows
/// them (`newest`).
pub fn summary_history(
    instructions: &str,
    turns: &[TurnRecord],
    shrink: Shrink,
    newest: Newest,
) -> History {
    let after = match newest.kept {
        0 => "It goes on after your summary with no earlier turn: your summary is all that is \
              left of them."
            .to_owned(),
        _ => "It goes on after your summary with its most recent turns, which are not shown \
              here."
            .to_owned(),
    };
    let squeezed = match newest.squeezed {
        0 => String::new(),
        n => format!(
            " Its newest {n} turns are in it too, though they would be kept as they are: they \
             alone are too large for the context window. Summarise them in the most detail; \
             the conversation goes on from them."
        ),
    };
    let text = format!(
        "Summarise this conversation ({} turns). {after}{squeezed}\n\n<conversation>\n{}\
         </conversation>",
        turns.len(),
        transcript(turns, shrink)
    );
    History::from(vec![Message::system(instructions), Message::user(text)])
}

/// Phrases providers use when a request does not fit the model's context window, lowercase.
const OVERFLOW_PHRASES: &[&str] = &[
    // OpenAI Chat (code) and Responses; DeepSeek, OpenRouter, vLLM, Mistral copy the wording.
    "context_length_exceeded",
    "maximum context length",
    "exceeds the context window",
    // Anthropic: "prompt is too long: 209353 tokens > 199999 maximum", and "input length
    // and `max_tokens` exceed context limit: 199759 + 8192 > 200000".
    "prompt is too long",
    "exceed context limit",
    // Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed
    // (1048576)."
    "input token count",
    // llama.cpp: "request (2009 tokens) exceeds the available context size (512 tokens)",
    // type exceed_context_size_error.
    "exceed_context_size",
    "exceeds the available context size",
    // Ollama: {"error":"the input length exceeds the context length"}.
    "exceeds the context length",
    // Mistral: "Prompt contains 40000 tokens … too large for model with 32768 maximum
    // context length".
    "too large for model with",
];

/// Whether `error` says the request did not fit the model's context window.
pub fn is_context_overflow(error: &ErrorInfo) -> bool {
    if !matches!(
        error.category,
        ErrorCategory::Provider | ErrorCategory::Validation
    ) || error.status().is_some_and(|s| s == 429 || s >= 500)
    {
        return false;
    }
    let detail = error.provider.as_ref();
    let texts = [
        Some(error.message.as_str()),
        detail.and_then(|d| d.error_type.as_deref()),
        detail.and_then(|d| d.body.as_deref()),
    ];
    texts.into_iter().flatten().any(|text| {
        let text = text.to_lowercase();
        OVERFLOW_PHRASES.iter().any(|p| text.contains(p))
    })
}
