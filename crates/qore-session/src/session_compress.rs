//! The [`Session`] methods of compression and the token estimate: what `/tokens` shows,
//! `/compress` and the compression before a send (the rules are [`crate::auto_compress`]'s
//! module doc; the compressor and the estimates live there, the session's parts in
//! [`crate::state`]).
//!
//! Promises: those of [`crate::auto_compress`] for an open session; a session continues in
//! the session it was compressed into (its id becomes the new one's) and its callback is
//! told.

use std::sync::Arc;

use qore_client::CancellationToken;
use qore_core::{ErrorInfo, Message};

use crate::auto_compress::{
    estimate, kept_turns, newest_fitting, raw_frame, turn_sizes, window, Compressor, LISTING_FLOOR,
};
use crate::compress::{self, Compressed, Keep};
use crate::session::Session;
use crate::state::State;
use crate::tokens::{estimate_message, estimate_messages, TokenUse};
use crate::SessionError;

impl Session {
    /// How much of the context window the conversation takes now (system prompt, history,
    /// tool definitions): what `/tokens` shows. Asks the model listing for the window once
    /// when the profile does not set it.
    pub async fn token_use(&self) -> TokenUse {
        let mut state = self.state.lock().await;
        let used = estimate(&state, None);
        let window = window(&mut state, true).await;
        TokenUse::new(used, window)
    }

    /// [`Session::token_use`] without asking anything: the window only when the profile
    /// sets it or an earlier listing gave it (for a status line after every answer).
    pub async fn token_use_known(&self) -> TokenUse {
        let mut state = self.state.lock().await;
        let used = estimate(&state, None);
        let window = window(&mut state, false).await;
        TokenUse::new(used, window)
    }

    /// Call `callback` whenever this session continues in a session it was compressed into
    /// (automatically before a send, or by [`crate::SessionManager::compress`]).
    pub fn on_compressed(&self, callback: impl Fn(&Compressed) + Send + Sync + 'static) {
        *self.on_compressed.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(callback));
    }

    /// Compress this session into a new one and continue in it (see the module doc).
    pub(crate) async fn compress_now(
        &self,
        compressor: &Compressor,
        keep: Option<Keep>,
        cancel: &CancellationToken,
    ) -> Result<Compressed, SessionError> {
        let mut state = self.state.lock().await;
        self.compress_locked(compressor, &mut state, keep, 0, cancel)
            .await
    }

    async fn compress_locked(
        &self,
        compressor: &Compressor,
        state: &mut State,
        keep: Option<Keep>,
        squeezed: usize,
        cancel: &CancellationToken,
    ) -> Result<Compressed, SessionError> {
        let Some(id) = self.id() else {
            return Err(SessionError::Engine(ErrorInfo::config(
                "an ephemeral session cannot be compressed: nothing is saved to link a summary to",
            )));
        };
        let own = Some(&state.target);
        let compressed = (compressor.compress(id, keep, squeezed, own, cancel)).await?;
        if let Some(store) = &compressor.store {
            state.history = store.history(&compressed.session_id).await?;
        }
        self.ids.push(compressed.session_id.clone());
        let callback = (self.on_compressed.lock().unwrap_or_else(|e| e.into_inner())).clone();
        if let Some(callback) = callback {
            callback(&compressed);
        }
        Ok(compressed)
    }

    /// Before sending `user`: compress first when the request would pass the threshold. A
    /// failure is a warning; the send goes on either way.
    pub(crate) async fn compress_if_due(
        &self,
        state: &mut State,
        user: &Message,
        cancel: &CancellationToken,
    ) {
        let Some(compressor) = &self.compressor else {
            return;
        };
        let (Some(threshold), Some(_)) = (compressor.threshold, self.id()) else {
            return;
        };
        let turns = turn_sizes(state);
        if turns.is_empty() {
            return;
        }
        let estimate = estimate(state, Some(user));
        let said = estimate_messages(state.history.messages()) + estimate_message(user);
        let window = window(state, said >= LISTING_FLOOR).await;
        if !compress::should_compress(estimate, window, threshold) {
            return;
        }
        let frame = raw_frame(state, None);
        let fits = |raw: u64| {
            let alone = state.estimator.estimate_raw(frame + raw);
            !compress::should_compress(alone, window, threshold)
        };
        let kept = newest_fitting(&turns, kept_turns(), fits);
        if kept == turns.len() {
            return;
        }
        let squeezed = kept_turns().min(turns.len()) - kept;
        let keep = Some(Keep::Turns(kept));
        let compressed = (self.compress_locked(compressor, state, keep, squeezed, cancel)).await;
        if let (Err(error), false) = (compressed, cancel.is_cancelled()) {
            (compressor.notes)(&format!(
                "qore: warning: the session was not compressed ({error}); sending it whole"
            ));
        }
    }
}
