//! Reasoning items of a Responses answer: summary parts and reasoning text as one thinking
//! block per item, parts separated by a blank line, the encrypted content as its signature
//! (see the promises in `items.rs`).

use std::borrow::Cow;
use std::collections::VecDeque;

use qore_core::ResponseEvent;

use super::{WireItem, WirePart};

/// Where reasoning text comes from: the summary, or the raw reasoning text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Summary,
    Text,
}

#[derive(Debug, Default)]
pub(super) struct ReasoningState {
    pub(super) text_emitted: bool,
    /// The part the last text went to.
    pub(super) part: Option<(Channel, u32)>,
    /// `encrypted_content` as announced (the finished item's wins).
    pub(super) encrypted: Option<String>,
}

pub(super) fn push_reasoning(
    state: &mut ReasoningState,
    part: (Channel, u32),
    text: Cow<'_, str>,
    out: &mut VecDeque<ResponseEvent>,
) {
    if text.is_empty() {
        return;
    }
    if state.text_emitted && state.part != Some(part) {
        out.push_back(ResponseEvent::ThinkingDelta {
            text: "\n\n".into(),
        });
    }
    state.part = Some(part);
    state.text_emitted = true;
    out.push_back(ResponseEvent::ThinkingDelta { text: text.into() });
}

pub(super) fn reasoning_done(
    mut state: ReasoningState,
    item: WireItem<'_>,
    out: &mut VecDeque<ResponseEvent>,
) {
    if !state.text_emitted {
        let summary = part_texts(item.summary, "summary_text");
        let (channel, parts) = if summary.iter().any(|t| !t.is_empty()) {
            (Channel::Summary, summary)
        } else {
            (Channel::Text, part_texts(item.content, "reasoning_text"))
        };
        for (index, text) in parts.into_iter().enumerate() {
            push_reasoning(&mut state, (channel, index as u32), text, out);
        }
    }
    let encrypted = item
        .encrypted_content
        .filter(|e| !e.is_empty())
        .map(Cow::into_owned)
        .or(state.encrypted);
    if let Some(signature) = encrypted {
        if !state.text_emitted {
            // Open this item's own block, so the signature does not land on an earlier one.
            out.push_back(ResponseEvent::ThinkingDelta { text: "".into() });
        }
        out.push_back(ResponseEvent::ThinkingSignature { signature });
    }
}

/// The texts of the parts of one kind (parts that name no kind count too).
fn part_texts<'a>(parts: Option<Vec<WirePart<'a>>>, kind: &str) -> Vec<Cow<'a, str>> {
    parts
        .into_iter()
        .flatten()
        .filter(|p| p.kind.as_deref().is_none_or(|k| k == kind))
        .filter_map(|p| p.text.and_then(|t| t.take()))
        .collect()
}
