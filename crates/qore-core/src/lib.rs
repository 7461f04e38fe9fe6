//! qore-core: the model every other qore crate speaks, and nothing else.
//!
//! This crate promises:
//! - plain data types for conversations ([`ContentBlock`], [`Message`], [`History`]),
//!   for what a provider stream says ([`ResponseEvent`], [`Usage`], [`StopReason`]) and for
//!   what went wrong ([`ErrorInfo`]), and what a request asks beyond its conversation
//!   ([`ToolChoice`], [`ResponseFormat`]);
//! - a lossless JSON round trip for every one of them (serde), so history can be persisted
//!   and replayed byte-for-byte in meaning;
//! - [`MessageAssembler`], the one place where a stream of events is folded into the
//!   assistant [`Message`] and a [`StreamOutcome`] (finished, failed or cancelled);
//! - the [`Tool`] trait every tool source implements;
//! - no I/O, no async runtime, no provider knowledge.
//!
//! A stream's events folded into the assistant message, appended to history, and the
//! history through JSON and back:
//!
//! ```
//! use qore_core::{History, Message, MessageAssembler, ResponseEvent, StopReason, StreamOutcome};
//!
//! let mut history = History::from(vec![Message::user("Say hello.")]);
//! let mut assembler = MessageAssembler::new();
//! for event in [
//!     ResponseEvent::TextDelta { text: "Hel".into() },
//!     ResponseEvent::TextDelta { text: "lo!".into() },
//!     ResponseEvent::Stop { reason: StopReason::EndTurn },
//! ] {
//!     assembler.apply(&event);
//! }
//! let StreamOutcome::Finished { message, stop_reason, .. } = assembler.finish() else {
//!     panic!("a stream that stopped finishes");
//! };
//! assert_eq!(message.text(), "Hello!");
//! assert_eq!(stop_reason, Some(StopReason::EndTurn));
//! history.push(message);
//!
//! let json = serde_json::to_string(&history).unwrap();
//! assert_eq!(serde_json::from_str::<History>(&json).unwrap(), history);
//! ```
#![warn(missing_docs)]

mod call_id;
mod content;
mod error;
mod event;
mod fold;
mod message;
mod request;
mod tool;

pub use call_id::CallId;
pub use content::{ContentBlock, ImageData, ImageSource, ToolResultPart};
pub use error::{ErrorCategory, ErrorInfo, ProviderDetail};
pub use event::{DeltaText, ResponseEvent, StopReason, ToolArgsError, ToolCallInput, Usage};
pub use fold::{MessageAssembler, StreamOutcome};
pub use message::{History, Message, Role};
pub use request::{ResponseFormat, ToolChoice};
pub use tool::{
    CancellationToken, RightsRequest, Tool, ToolFuture, ToolOutput, ToolSource, ToolSpec,
};
