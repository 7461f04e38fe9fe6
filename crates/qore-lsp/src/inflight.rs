//! The newest completion request of each document: starting one cancels the one before it.
//!
//! Promises: [`Inflight::begin`] cancels the token of the document's previous request and
//! gives a [`Ticket`] whose token the new request watches; dropping the ticket forgets it
//! (unless a newer one has replaced it); [`Inflight::cancel`] and [`Inflight::cancel_all`]
//! cancel what is in flight.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use qore_client::CancellationToken;

use crate::lock::lock;

/// The requests in flight, by document URI.
#[derive(Debug, Default)]
pub struct Inflight {
    next: AtomicU64,
    by_uri: Mutex<HashMap<String, (u64, CancellationToken)>>,
}

/// One request in flight; cancelled when a newer one for its document begins.
pub struct Ticket<'a> {
    inflight: &'a Inflight,
    uri: String,
    id: u64,
    pub token: CancellationToken,
}

impl Inflight {
    /// Begin a request for `uri`, cancelling the previous one.
    pub fn begin(&self, uri: &str) -> Ticket<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        let old = lock(&self.by_uri).insert(uri.to_owned(), (id, token.clone()));
        if let Some((_, old)) = old {
            old.cancel();
        }
        Ticket {
            inflight: self,
            uri: uri.to_owned(),
            id,
            token,
        }
    }

    /// Cancel the request in flight for `uri`, if any.
    pub fn cancel(&self, uri: &str) {
        if let Some((_, token)) = lock(&self.by_uri).remove(uri) {
            token.cancel();
        }
    }

    pub fn cancel_all(&self) {
        for (_, (_, token)) in lock(&self.by_uri).drain() {
            token.cancel();
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut by_uri = lock(&self.inflight.by_uri);
        if by_uri.get(&self.uri).is_some_and(|(id, _)| *id == self.id) {
            by_uri.remove(&self.uri);
        }
    }
}
