//! The checks a bench answer must pass before it is timed: qore's folded message and the
//! floor's counts against what the workload holds.

use qore_core::{ContentBlock, StopReason, StreamOutcome};

use crate::floor;
use crate::workload::{Kind, Workload, TOOL_NAME};

pub fn check_qore(w: &Workload, outcome: &StreamOutcome) -> Result<(), String> {
    let StreamOutcome::Finished {
        message,
        stop_reason,
        usage,
    } = outcome
    else {
        return Err(format!("not finished: {outcome:?}"));
    };
    if usage.output_tokens != Some(w.n as u64) {
        return Err(format!("usage {usage:?}"));
    }
    match (w.kind, message.blocks.as_slice()) {
        (Kind::Text, [ContentBlock::Text { text, .. }]) => {
            if *text != w.expected {
                return Err(format!(
                    "text of {} bytes, wanted {}",
                    text.len(),
                    w.expected.len()
                ));
            }
            if *stop_reason != Some(StopReason::EndTurn) {
                return Err(format!("stop {stop_reason:?}"));
            }
        }
        (
            Kind::Tool,
            [ContentBlock::ToolUse {
                id,
                name,
                input,
                raw_input: None,
                ..
            }],
        ) => {
            let want: serde_json::Value = serde_json::from_str(&w.expected).unwrap();
            if input != &want || id != w.wire.tool_id() || name != TOOL_NAME {
                return Err(format!("tool call {id} {name}: wrong arguments"));
            }
            if *stop_reason != Some(StopReason::ToolUse) {
                return Err(format!("stop {stop_reason:?}"));
            }
        }
        (_, blocks) => return Err(format!("{} unexpected blocks", blocks.len())),
    }
    Ok(())
}

pub fn check_floor(w: &Workload, out: &floor::Outcome) -> Result<(), String> {
    let folded = match w.kind {
        Kind::Text => &out.text,
        Kind::Tool => &out.args,
    };
    if out.deltas != w.n || *folded != w.expected || !out.done || out.finish_reason.is_none() {
        return Err(format!(
            "{} deltas, {} bytes, done {}",
            out.deltas,
            folded.len(),
            out.done
        ));
    }
    if w.kind == Kind::Tool && out.input.is_none() {
        return Err("arguments not parsed".into());
    }
    Ok(())
}
