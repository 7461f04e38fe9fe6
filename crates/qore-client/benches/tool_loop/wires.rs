//! The tool-loop bench's model on every wire: the same turns as `workload.rs` (one short
//! text, then per call its id, name and arguments; the final answer's text), written in
//! each wire's streamed shape by the tool-loop tests' scripted model
//! (`tests/tool_loop/support.rs`, `Wire::turn`). Chat Completions keeps `workload.rs`'s own
//! bodies, so its numbers stay comparable with earlier runs.

use qore_testkit::Reply;

use crate::support::{raw_call, text, Part, Wire};
use crate::workload;

/// The streamed assistant turn of round `round` with `calls` tool calls on `wire`.
pub fn tool_turn(wire: Wire, round: u32, calls: usize) -> Reply {
    if wire == Wire::OpenAiChat {
        return Reply::sse(workload::tool_turn(round, calls));
    }
    let mut parts: Vec<Part> = vec![text("Let me check.")];
    for j in 0..calls {
        let (name, args) = workload::call_args(round, j);
        parts.push(raw_call(&workload::call_id(round, j), name, &args));
    }
    wire.turn(&parts, (1200, 20 * calls as u64))
}

/// The streamed final answer on `wire`.
pub fn final_answer(wire: Wire) -> Reply {
    if wire == Wire::OpenAiChat {
        return Reply::sse(workload::final_answer());
    }
    wire.turn(&[text(workload::FINAL_TEXT)], (1500, 18))
}
