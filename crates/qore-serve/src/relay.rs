//! Relaying an upstream stream to the caller as the dialect's SSE: the encoder's opening
//! frames and the first event in the first chunk, then each event as it comes (events that
//! are already decoded are written together, one chunk), then the closing frames or the
//! in-stream error. Dropping the relay (the caller went away) drops the upstream stream, so
//! the provider sees its connection close; the exchange settles as cancelled.
//!
//! Why a hand-rolled `unfold` and not a channel: the relay runs in the task hyper polls
//! for the response body, so an event costs no task switch and no copy beyond its encoding.

use std::convert::Infallible;

use bytes::Bytes;
use futures_util::{FutureExt as _, Stream, StreamExt as _};
use qore_client::{CancellationToken, ResponseStream};
use qore_core::{ResponseEvent, StreamOutcome, Usage};

use crate::dialect::StreamEncoder;
use crate::exchange::Exchange;
use crate::ServeError;

/// What a relay reads: a provider's stream, or a turn run by the server's tool loop.
pub trait EventSource: Stream<Item = ResponseEvent> + Unpin + Send {
    /// How it ended; `None` until its last event was yielded.
    fn outcome(&self) -> Option<&StreamOutcome>;
}

impl EventSource for ResponseStream {
    fn outcome(&self) -> Option<&StreamOutcome> {
        ResponseStream::outcome(self)
    }
}

/// How many already-decoded events go into one chunk at most.
const BATCH: usize = 64;

pub struct Relay {
    pub stream: Box<dyn EventSource>,
    pub first: Option<ResponseEvent>,
    pub encoder: Box<dyn StreamEncoder>,
    pub exchange: Exchange,
    /// Cancelled when the server's drain time is over.
    pub shutdown: CancellationToken,
    /// Cancels the upstream request.
    pub cancel: CancellationToken,
    started: bool,
    done: bool,
}

impl Relay {
    pub fn new(
        stream: Box<dyn EventSource>,
        first: Option<ResponseEvent>,
        encoder: Box<dyn StreamEncoder>,
        exchange: Exchange,
        shutdown: CancellationToken,
        cancel: CancellationToken,
    ) -> Relay {
        Relay {
            stream,
            first,
            encoder,
            exchange,
            shutdown,
            cancel,
            started: false,
            done: false,
        }
    }

    /// The SSE body.
    pub fn into_body(self) -> impl Stream<Item = Result<Bytes, Infallible>> + Send {
        futures_util::stream::unfold(self, |mut relay| async move {
            let chunk = relay.next_chunk().await?;
            Some((Ok(Bytes::from(chunk)), relay))
        })
    }

    async fn next_chunk(&mut self) -> Option<Vec<u8>> {
        if self.done {
            return None;
        }
        let mut out = Vec::with_capacity(512);
        if !self.started {
            self.started = true;
            self.encoder.start(&mut out);
            if let Some(first) = self.first.take() {
                self.write(&first, &mut out);
            }
            self.exchange.mark_first_byte();
            if self.stream.outcome().is_some() {
                self.close(&mut out).await;
            }
            return Some(out);
        }
        let started = std::time::Instant::now();
        let next = tokio::select! {
            biased;
            next = self.stream.next() => next,
            _ = self.shutdown.cancelled() => {
                self.cancel.cancel();
                self.done = true;
                let outcome = StreamOutcome::Cancelled { usage: Usage::default() };
                self.encoder.finish(&outcome, None, &mut out);
                self.exchange.settle(&outcome).await;
                return Some(out);
            }
        };
        self.exchange.waited += started.elapsed();
        match next {
            Some(event) => {
                self.write(&event, &mut out);
                for _ in 1..BATCH {
                    match self.stream.next().now_or_never() {
                        Some(Some(event)) => self.write(&event, &mut out),
                        Some(None) => break,
                        None => break,
                    }
                }
                if self.stream.outcome().is_some() {
                    self.close(&mut out).await;
                }
            }
            None => self.close(&mut out).await,
        }
        Some(out)
    }

    fn write(&mut self, event: &ResponseEvent, out: &mut Vec<u8>) {
        // A failure is written once, by `finish`, from the outcome.
        if !matches!(event, ResponseEvent::Error { .. }) {
            self.encoder.event(event, out);
        }
    }

    /// Write the closing frames once the turn is settled (its `after` hook done).
    async fn close(&mut self, out: &mut Vec<u8>) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let outcome = match self.stream.outcome() {
            Some(outcome) => outcome.clone(),
            None => StreamOutcome::Cancelled {
                usage: Usage::default(),
            },
        };
        let error = match &outcome {
            StreamOutcome::Failed { error, .. } => Some(ServeError::from_upstream(error)),
            _ => None,
        };
        self.exchange.settle(&outcome).await;
        self.encoder.finish(&outcome, error.as_ref(), out);
    }
}
