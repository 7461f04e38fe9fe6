//! The session layer's error type.
//!
//! Promises: every failure of a session operation (the store, reaching a model, a bad
//! request of the caller) is a [`SessionError`] whose message says what failed; a turn's
//! own failure is not an error but an outcome ([`crate::TurnOutcome::Failed`]).

use qore_core::ErrorInfo;
use qore_store::StoreError;

use crate::compress::CompressError;

/// What went wrong with a session operation.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Reading or writing the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Reaching the model or building the session's tools or prompt failed.
    #[error("{}", .0.message)]
    Engine(#[from] ErrorInfo),
    /// Compressing a session failed (the original is untouched).
    #[error("compression failed: {0}")]
    Compress(#[from] CompressError),
    /// A session was asked for by id or name where nothing is stored (an ephemeral run).
    #[error("sessions are not saved here (ephemeral): there is no session '{0}' to open")]
    Ephemeral(String),
}

impl SessionError {
    /// The error as the engine's [`ErrorInfo`] (store failures are configuration errors: the
    /// data dir or its database).
    pub fn into_info(self) -> ErrorInfo {
        match self {
            SessionError::Engine(info) => info,
            SessionError::Compress(CompressError::Summary(info)) => {
                crate::target::doing("compression failed: the summary request", info)
            }
            other => ErrorInfo::config(other.to_string()),
        }
    }
}
