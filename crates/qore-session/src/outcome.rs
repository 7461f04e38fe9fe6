//! The one outcome of a turn, as sessions report it: [`TurnOutcome`] (defined beside the tool
//! loop in `qore_client::tool_loop`, which returns it too) and how it is stored.
//!
//! Promises: a finished turn is stored `finished`, a failed one (a tool-loop limit included)
//! `failed`, a cancelled one `cancelled`.

pub use qore_client::tool_loop::{LoopStop, TurnOutcome};
use qore_store::TurnStatus;

/// The stored status of a turn that ended in `outcome`.
pub fn status_of(outcome: &TurnOutcome) -> TurnStatus {
    match outcome {
        TurnOutcome::Finished { .. } => TurnStatus::Finished,
        TurnOutcome::Failed { .. } => TurnStatus::Failed,
        TurnOutcome::Cancelled { .. } => TurnStatus::Cancelled,
    }
}
