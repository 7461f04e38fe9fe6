//! Relaying an upstream stream to the caller as the dialect's SSE: the encoder's opening
//! frames and the first event in the first chunk, then each event as it comes (events that
//! are already decoded are written together, one chunk), then the closing frames or the
//! in-stream error. Dropping the relay (the caller went away) drops the upstream stream, so
//! the provider sees its connection close; the exchange settles as cancelled.
//!
//! Promises:
//! - durable before acknowledged: the dialect's success ending (`response.completed`, the
//!   last Chat chunk and `[DONE]`, `message_stop`) is written only once the exchange is
//!   settled, its `after` hook having committed what the caller is told about; when that
//!   commit fails the stream ends with the dialect's error event instead (`response.failed`,
//!   an error chunk without `[DONE]`, an `error` event), never the success;
//! - idle limits only, never a total: when nothing was written to the caller for
//!   `keepalive` (default 15 s) an SSE comment `: keep-alive` goes out (every dialect's
//!   clients skip lines starting with `:`), and when the upstream sent nothing for
//!   `upstream_idle` (default 300 s) the upstream request is cancelled and the stream ends
//!   with the dialect's error event. A stream that keeps sending runs as long as it sends.
//!
//! Why a hand-rolled `unfold` and not a channel: the relay runs in the task hyper polls
//! for the response body, so an event costs no task switch and no copy beyond its encoding.

use std::convert::Infallible;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt as _, Stream, StreamExt as _};
use qore_client::CancellationToken;
use qore_core::{ErrorCategory, ErrorInfo, ResponseEvent, StreamOutcome, Usage};
use tokio::time::{sleep_until, Instant, Sleep};
use tokio_util::sync::WaitForCancellationFutureOwned;

use crate::config::StreamLimits;
use crate::dialect::StreamEncoder;
use crate::events::EventSource;
use crate::exchange::Exchange;
use crate::{ErrorKind, ServeError};

/// How many already-decoded events go into one chunk at most.
const BATCH: usize = 64;

/// The SSE comment written to a silent stream.
pub const KEEPALIVE: &[u8] = b": keep-alive\n\n";

pub struct Relay {
    pub stream: Box<dyn EventSource>,
    pub first: Option<ResponseEvent>,
    pub encoder: Box<dyn StreamEncoder>,
    pub exchange: Exchange,
    /// Cancelled when the server's drain time is over.
    pub shutdown: CancellationToken,
    /// Cancels the upstream request.
    pub cancel: CancellationToken,
    limits: StreamLimits,
    /// When the caller was last written to.
    written: Instant,
    /// When the upstream last sent an event.
    heard: Instant,
    started: bool,
    done: bool,
    /// The idle limits' one timer, made at the first wait (see [`Relay::wait`]).
    timer: Option<Pin<Box<Sleep>>>,
    /// The wait for the drain's end, made at the first wait and kept (no registration with
    /// the server-wide token per wait).
    drained: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
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
            limits: StreamLimits::default(),
            written: Instant::now(),
            heard: Instant::now(),
            started: false,
            done: false,
            timer: None,
            drained: None,
        }
    }

    /// With these idle limits instead of the defaults.
    pub fn with_limits(mut self, limits: StreamLimits) -> Relay {
        self.limits = limits;
        self
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
            self.written = Instant::now();
            if self.stream.outcome().is_some() {
                self.close(&mut out).await;
            }
            return Some(out);
        }
        // An event already decoded is written without arming the idle timers (the common
        // case of a busy stream: no timer registered and removed per delta).
        let next = match self.stream.next().now_or_never() {
            Some(next) => next,
            None => match self.wait(&mut out).await {
                Waited::Event(next) => next,
                Waited::Wrote => return Some(out),
            },
        };
        self.heard = Instant::now();
        self.written = self.heard;
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

    /// Wait for the upstream's next event, or write what the idle limits and the server's
    /// shutdown call for.
    async fn wait(&mut self, out: &mut Vec<u8>) -> Waited {
        let started = Instant::now();
        let far = started + Duration::from_secs(86_400 * 365);
        loop {
            let keepalive = (self.limits.keepalive).map_or(far, |every| self.written + every);
            let idle = (self.limits.upstream_idle).map_or(far, |limit| self.heard + limit);
            let due = keepalive.min(idle);
            // One timer per stream. The deadlines only move later as the stream goes on, so
            // it is left armed and, when it fires early, moved: no timer work per delta.
            let timer = (self.timer).get_or_insert_with(|| Box::pin(sleep_until(due)));
            let shutdown = &self.shutdown;
            let drained =
                (self.drained).get_or_insert_with(|| Box::pin(shutdown.clone().cancelled_owned()));
            if timer.is_elapsed() || timer.deadline() > due {
                timer.as_mut().reset(due);
            }
            let fired = tokio::select! {
                biased;
                next = self.stream.next() => {
                    self.exchange.waited += started.elapsed();
                    return Waited::Event(next);
                }
                _ = drained.as_mut() => {
                    self.cancel.cancel();
                    self.done = true;
                    let outcome = StreamOutcome::Cancelled { usage: Usage::default() };
                    self.encoder.finish(&outcome, None, out);
                    let _ = self.exchange.settle(&outcome).await;
                    return Waited::Wrote;
                }
                _ = timer.as_mut() => Instant::now(),
            };
            if fired >= idle {
                self.exchange.waited += started.elapsed();
                self.cancel.cancel();
                self.done = true;
                let silent = self.heard.elapsed().as_secs();
                let error = ServeError::new(
                    ErrorKind::Upstream,
                    format!("the upstream sent nothing for {silent} s: the stream is ended"),
                )
                .with_status(504);
                let outcome = failed(&error, Usage::default());
                let _ = self.exchange.settle(&outcome).await;
                self.encoder.finish(&outcome, Some(&error), out);
                self.written = Instant::now();
                return Waited::Wrote;
            }
            if fired >= keepalive {
                self.exchange.waited += started.elapsed();
                self.written = Instant::now();
                out.extend_from_slice(KEEPALIVE);
                return Waited::Wrote;
            }
        }
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
        match self.exchange.settle(&outcome).await {
            Ok(()) => self.encoder.finish(&outcome, error.as_ref(), out),
            // Not committed: the caller is told the turn failed, never that it completed.
            Err(kept) => {
                let usage = match &outcome {
                    StreamOutcome::Finished { usage, .. }
                    | StreamOutcome::Failed { usage, .. }
                    | StreamOutcome::Cancelled { usage } => *usage,
                };
                self.encoder.finish(&failed(&kept, usage), Some(&kept), out);
            }
        }
    }
}

/// What [`Relay::wait`] ended with.
enum Waited {
    /// The upstream's next event (None: its stream ended).
    Event(Option<ResponseEvent>),
    /// A chunk was written (a keep-alive, or the stream's end on shutdown or idle upstream).
    Wrote,
}

/// A turn that failed as `error` says, having used `usage`.
fn failed(error: &ServeError, usage: Usage) -> StreamOutcome {
    StreamOutcome::Failed {
        error: ErrorInfo::new(ErrorCategory::Provider, error.message.clone()),
        usage,
    }
}
