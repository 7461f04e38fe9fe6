//! The tool-use loop: tools registered once ([`ToolRegistry`]), approval decided in one
//! place ([`ApprovalPolicy`]), a turn's calls run together ([`run_calls`]), and the loop
//! itself ([`ToolLoopRunner`]), identical on every protocol because it only speaks
//! [`crate::Client`], [`qore_core::History`] and [`qore_core::ResponseEvent`].

mod approval;
mod execute;
mod outcome;
mod registry;
mod runner;
pub mod text_protocol;
mod text_render;
mod text_turn;

pub use approval::{
    ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRequest, ApprovalRule, Approver,
    ArgumentMatch, SessionApprovals, Verdict,
};
pub use execute::{run_calls, CallReport, RoundResults, ToolCall};
pub use outcome::{from_stream, LoopStop, TurnOutcome};
pub use registry::{Registered, ToolRegistry};
pub use runner::{AtRoundLimit, LoopConfig, LoopEvent, ToolLoopRunner, ToolProtocol};
pub use text_turn::{is_text_call_id, request_history as text_request_history};
