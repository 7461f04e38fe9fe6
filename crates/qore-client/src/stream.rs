//! [`ResponseStream`]: one response, from request to outcome, decoded in the polling task.
//!
//! Promises:
//! - yields [`ResponseEvent`]s in wire order and folds each into the assistant message as it
//!   passes ([`MessageAssembler`]); after the last event, [`ResponseStream::outcome`] is
//!   exactly one of finished, failed or cancelled;
//! - bytes are framed and decoded right where the socket is polled: no channel, no spawned
//!   task, no per-chunk wake-up of another thread;
//! - the idle timeout bounds the silence between received pieces (and the wait for the
//!   response head); it is kept by [`IdleWatch`], so a chunk costs one plain store and no
//!   timer is armed in the runtime;
//! - cancelling the token, or dropping the stream, closes the connection; a cancelled
//!   stream ends with [`StreamOutcome::Cancelled`] and its partial message is dropped;
//! - a request the server answers with "try later" (see [`crate::transport::retry`]), or
//!   that fails in transport, is sent again after a backoff, but only while no event has
//!   reached the consumer: once output is delivered, a failure is final;
//! - a 2xx answer with nothing in it (an empty or blank body, or a stream that ends without
//!   a single event) fails with a [`ErrorCategory::Provider`] error saying so, never an empty
//!   successful turn (llama-cpp-python's server answers a streamed request with tools and
//!   `tool_choice: "auto"` that way).
//! - a body cut short — a stream ending mid-line (see
//!   [`crate::transport::sse::StreamEnd`]) or before its wire's end event, whole JSON that
//!   stops short — is a `Network` error ("ended early"), retried like a broken connection
//!   while nothing was delivered; a 2xx HTML page or plain text is an error naming it, not
//!   an empty or undecodable answer (`stream_answer.rs`);
//! - every error it yields has a one-line message of at most 280 characters and a provider
//!   body capped at 64 KiB ([`crate::transport::bad_answer::tidy`]); an HTML or text error
//!   page is summed up as status, host, title or first line, content type and size.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use qore_core::{ErrorCategory, ErrorInfo, MessageAssembler, ResponseEvent, StreamOutcome};
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

use crate::cancel::CancelSignal;
use crate::codec::{Protocol, StreamDecoder};
use crate::idle::IdleWatch;
use crate::transport::bad_answer::{self, empty_response, BODY_CAP};
use crate::transport::framing::Framer;
use crate::transport::http::{network_error, redact_event, request_failed};
use crate::transport::retry::RetryPolicy;

#[path = "stream_answer.rs"]
mod answer;
use crate::transport::bad_answer::Head;
use answer::Whole;

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;
type Pending = Pin<Box<dyn Future<Output = reqwest::Result<reqwest::Response>> + Send>>;

/// Makes the decoder for one attempt (chat or fill-in-the-middle).
pub(crate) type NewDecoder = fn(&dyn Protocol) -> Box<dyn StreamDecoder>;

/// Everything needed to send the request (again).
pub(crate) struct Attempts {
    pub http: reqwest::Client,
    pub request: reqwest::Request,
    /// The caller asked for a streamed answer.
    pub stream: bool,
    pub policy: RetryPolicy,
    pub new_decoder: NewDecoder,
    /// Attempts sent so far.
    pub sent: u32,
    /// The API key, redacted from every error event.
    pub secret: Option<String>,
    /// The connect timeout, named when it is what ended an attempt.
    pub connect_timeout: Duration,
}

impl Attempts {
    fn send(&mut self) -> Option<Pending> {
        let request = self.request.try_clone()?;
        self.sent += 1;
        Some(Box::pin(self.http.execute(request)))
    }
}

enum Body {
    Connecting(Pending),
    Framed {
        bytes: ByteStream,
        framer: Framer,
        /// The (2xx) status, for the error when the stream carries nothing.
        status: u16,
    },
    Whole {
        bytes: ByteStream,
        buf: Vec<u8>,
        /// Bytes received, kept or not (an error body keeps at most [`BODY_CAP`]).
        size: usize,
        kind: Whole,
        head: Head,
    },
    /// Waiting before the next attempt.
    Backoff(Pin<Box<Sleep>>),
    Done,
}

/// A response being received. A [`Stream`] of [`ResponseEvent`]s.
pub struct ResponseStream {
    protocol: Arc<dyn Protocol>,
    decoder: Box<dyn StreamDecoder>,
    attempts: Option<Attempts>,
    body: Body,
    queue: VecDeque<ResponseEvent>,
    /// An event has been handed to the consumer: no more retries.
    delivered: bool,
    assembler: Option<MessageAssembler>,
    outcome: Option<StreamOutcome>,
    cancel: CancelSignal,
    idle: IdleWatch,
}

impl ResponseStream {
    /// Send the first attempt now; later ones follow [`Attempts::policy`].
    pub(crate) fn connecting(
        protocol: Arc<dyn Protocol>,
        mut attempts: Attempts,
        idle: Duration,
        cancel: CancellationToken,
    ) -> Self {
        let decoder = (attempts.new_decoder)(&*protocol);
        let Some(pending) = attempts.send() else {
            return Self::failed(
                protocol,
                ErrorInfo::validation("the request body cannot be sent (not cloneable)"),
            );
        };
        let mut stream = Self::new(protocol, decoder, Body::Connecting(pending), cancel);
        stream.attempts = Some(attempts);
        stream.idle = IdleWatch::new(idle);
        stream
    }

    /// A stream that fails at once with `error` (nothing was sent).
    pub(crate) fn failed(protocol: Arc<dyn Protocol>, error: ErrorInfo) -> Self {
        let decoder = protocol.decoder();
        let mut stream = Self::new(protocol, decoder, Body::Done, CancellationToken::new());
        stream.queue.push_back(ResponseEvent::Error { error });
        stream
    }

    fn new(
        protocol: Arc<dyn Protocol>,
        decoder: Box<dyn StreamDecoder>,
        body: Body,
        cancel: CancellationToken,
    ) -> Self {
        ResponseStream {
            protocol,
            decoder,
            attempts: None,
            body,
            queue: VecDeque::new(),
            delivered: false,
            assembler: Some(MessageAssembler::new()),
            outcome: None,
            cancel: CancelSignal::new(cancel),
            idle: IdleWatch::unwatched(Duration::ZERO),
        }
    }

    /// The message folded so far (a partial view while streaming).
    pub fn assembler(&self) -> Option<&MessageAssembler> {
        self.assembler.as_ref()
    }

    /// How the response ended; `None` until the stream has yielded its last event.
    pub fn outcome(&self) -> Option<&StreamOutcome> {
        self.outcome.as_ref()
    }

    /// Receive the rest of the response and return how it ended.
    pub async fn finish(mut self) -> StreamOutcome {
        use futures_util::StreamExt as _;
        while self.next().await.is_some() {}
        self.outcome.take().unwrap_or(StreamOutcome::Cancelled {
            usage: Default::default(),
        })
    }

    fn end(&mut self, cancelled: bool) {
        self.body = Body::Done;
        if let Some(assembler) = self.assembler.take() {
            self.outcome = Some(if cancelled {
                assembler.cancel()
            } else {
                assembler.finish()
            });
        }
    }

    fn fail(&mut self, mut error: ErrorInfo) {
        self.body = Body::Done;
        if let Some(sent) = self.attempts.as_ref().map(|a| a.sent).filter(|&n| n > 1) {
            error.message.push_str(&format!(" (after {sent} attempts)"));
        }
        self.queue.push_back(ResponseEvent::Error { error });
    }

    /// A transport failure: send again if allowed (see [`Self::retry`]), else fail with it.
    fn retry_or_fail(&mut self, error: ErrorInfo) {
        if !self.retry(None, &error.message) {
            self.fail(error);
        }
    }

    /// The body was read to its end with this result. A `Network` error means it was cut
    /// short (mid-line, before its wire's end): handled like a broken connection.
    fn settle(&mut self, result: Result<(), ErrorInfo>) {
        match result {
            Ok(()) => self.body = Body::Done,
            Err(err) if err.category == ErrorCategory::Network => self.retry_or_fail(err),
            Err(err) => self.fail(err),
        }
    }

    /// Start waiting for another attempt, if the policy allows one and nothing has been
    /// delivered; `false` when the failure is final.
    fn retry(&mut self, wait: Option<Duration>, why: &str) -> bool {
        if self.delivered || !self.queue.is_empty() {
            return false;
        }
        let Some(attempts) = &self.attempts else {
            return false;
        };
        let Some(delay) = attempts.policy.delay(attempts.sent, wait) else {
            return false;
        };
        tracing::warn!(
            attempt = attempts.sent,
            delay_ms = delay.as_millis() as u64,
            "{why}; retrying"
        );
        self.decoder = (attempts.new_decoder)(&*self.protocol);
        // The idle timeout restarts after the wait.
        self.idle.suspend();
        self.body = Body::Backoff(Box::pin(tokio::time::sleep(delay)));
        true
    }

    /// Advance the body once. `Ready(())` when something changed (events queued, state moved).
    fn poll_body(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        match &mut this.body {
            Body::Done => Poll::Ready(()),
            Body::Connecting(response) => match response.as_mut().poll(cx) {
                Poll::Ready(Ok(response)) => {
                    this.idle.progress();
                    this.on_response(response);
                    Poll::Ready(())
                }
                Poll::Ready(Err(err)) => {
                    let connect = this.attempts.as_ref().map(|a| a.connect_timeout);
                    let error = request_failed(&err, connect);
                    if err.is_builder() || !this.retry(None, &error.message) {
                        this.fail(error);
                    }
                    Poll::Ready(())
                }
                Poll::Pending => Poll::Pending,
            },
            Body::Backoff(sleep) => match sleep.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.idle.resume();
                    match this.attempts.as_mut().and_then(Attempts::send) {
                        Some(pending) => this.body = Body::Connecting(pending),
                        None => this.fail(ErrorInfo::validation("the request cannot be resent")),
                    }
                    Poll::Ready(())
                }
                Poll::Pending => Poll::Pending,
            },
            Body::Framed {
                bytes,
                framer,
                status,
            } => match bytes.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.idle.progress();
                    let (queue, decoder) = (&mut this.queue, &mut this.decoder);
                    if let Err(err) = framer.feed(&chunk, |frame| decoder.frame(frame, queue)) {
                        this.fail(err);
                    }
                    Poll::Ready(())
                }
                Poll::Ready(Some(Err(err))) => {
                    this.retry_or_fail(network_error("the response stream broke", &err));
                    Poll::Ready(())
                }
                Poll::Ready(None) => {
                    let (queue, decoder) = (&mut this.queue, &mut this.decoder);
                    let flushed = framer.finish(|frame| decoder.frame(frame, queue));
                    // Not one event decoded (none delivered, none waiting): nothing came.
                    let empty = flushed.is_ok() && !this.delivered && queue.is_empty();
                    let finished = if empty {
                        Err(empty_response(*status, "a stream of no events"))
                    } else {
                        flushed.and_then(|()| decoder.finish(queue))
                    };
                    this.settle(finished);
                    Poll::Ready(())
                }
                Poll::Pending => Poll::Pending,
            },
            Body::Whole {
                bytes,
                buf,
                size,
                kind,
                ..
            } => match bytes.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.idle.progress();
                    *size += chunk.len();
                    let keep = match kind {
                        Whole::Answer => chunk.len(),
                        _ => chunk.len().min(BODY_CAP.saturating_sub(buf.len())),
                    };
                    buf.extend_from_slice(&chunk[..keep]);
                    Poll::Ready(())
                }
                Poll::Ready(Some(Err(err))) => {
                    this.retry_or_fail(network_error("the response body broke", &err));
                    Poll::Ready(())
                }
                Poll::Ready(None) => {
                    if let Body::Whole {
                        buf,
                        size,
                        kind,
                        head,
                        ..
                    } = std::mem::replace(&mut this.body, Body::Done)
                    {
                        this.whole_ended(&buf, size, kind, &head);
                    }
                    Poll::Ready(())
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl Stream for ResponseStream {
    type Item = ResponseEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ResponseEvent>> {
        let this = &mut *self;
        loop {
            if this.outcome.is_some() {
                return Poll::Ready(None);
            }
            if let Some(mut event) = this.queue.pop_front() {
                // The key goes before the message is shortened, so no part of it is left.
                redact_event(
                    &mut event,
                    this.attempts.as_ref().and_then(|a| a.secret.as_deref()),
                );
                if let ResponseEvent::Error { error } = &mut event {
                    bad_answer::tidy(error);
                }
                this.delivered = true;
                if let Some(assembler) = &mut this.assembler {
                    assembler.apply(&event);
                }
                return Poll::Ready(Some(event));
            }
            if matches!(this.body, Body::Done) {
                this.end(false);
                return Poll::Ready(None);
            }
            if this.cancel.fired() {
                this.end(true);
                return Poll::Ready(None);
            }
            if this.poll_body(cx).is_pending() {
                if this.cancel.register(cx) {
                    this.end(true);
                    return Poll::Ready(None);
                }
                if this.idle.register(cx) {
                    let secs = this.idle.idle().as_secs_f64();
                    this.fail(ErrorInfo::network(format!(
                        "no data received for {secs} s (idle timeout)"
                    )));
                    continue;
                }
                return Poll::Pending;
            }
        }
    }
}
