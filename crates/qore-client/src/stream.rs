//! [`ResponseStream`]: one response, from request to outcome, decoded in the polling task.
//!
//! Promises:
//! - yields [`ResponseEvent`]s in wire order and folds each into the assistant message as it
//!   passes ([`MessageAssembler`]); after the last event, [`ResponseStream::outcome`] is
//!   exactly one of finished, failed or cancelled;
//! - bytes are framed and decoded right where the socket is polled: no channel, no spawned
//!   task, no per-chunk wake-up of another thread;
//! - the idle timeout bounds the silence between received pieces (and the wait for the
//!   response head); it costs one clock read per chunk, the timer is re-armed only when it
//!   fires;
//! - cancelling the token, or dropping the stream, closes the connection; a cancelled
//!   stream ends with [`TurnOutcome::Cancelled`] and its partial message is dropped.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use qore_core::{ErrorInfo, MessageAssembler, ResponseEvent, TurnOutcome};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

use crate::cancel::CancelSignal;
use crate::codec::{Framing, Protocol, StreamDecoder};
use crate::transport::http::network_error;
use crate::transport::ndjson::NdjsonFramer;
use crate::transport::sse::{SseFrame, SseFramer};

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;
type Pending = Pin<Box<dyn Future<Output = reqwest::Result<reqwest::Response>> + Send>>;

/// How the body's bytes are cut into frames.
enum Framer {
    Sse(SseFramer),
    Ndjson(NdjsonFramer),
}

impl Framer {
    fn feed<E>(
        &mut self,
        chunk: &[u8],
        on_frame: impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Framer::Sse(framer) => framer.feed(chunk, on_frame),
            Framer::Ndjson(framer) => framer.feed(chunk, on_frame),
        }
    }

    fn finish<E>(&mut self, on_frame: impl FnMut(SseFrame<'_>) -> Result<(), E>) -> Result<(), E> {
        match self {
            Framer::Sse(framer) => framer.finish(on_frame),
            Framer::Ndjson(framer) => framer.finish(on_frame),
        }
    }
}

enum Body {
    Connecting {
        response: Pending,
        stream: bool,
    },
    Framed {
        bytes: ByteStream,
        framer: Framer,
    },
    Whole {
        bytes: ByteStream,
        buf: Vec<u8>,
        error_status: Option<u16>,
    },
    Done,
}

/// A response being received. A [`Stream`] of [`ResponseEvent`]s.
pub struct ResponseStream {
    protocol: Arc<dyn Protocol>,
    decoder: Box<dyn StreamDecoder>,
    body: Body,
    queue: VecDeque<ResponseEvent>,
    assembler: Option<MessageAssembler>,
    outcome: Option<TurnOutcome>,
    cancel: CancelSignal,
    /// The waker the idle timer was last polled with.
    timer_waker: Option<Waker>,
    idle: Duration,
    last_progress: Instant,
    timer: Pin<Box<Sleep>>,
}

impl ResponseStream {
    pub(crate) fn connecting(
        protocol: Arc<dyn Protocol>,
        decoder: Box<dyn StreamDecoder>,
        response: Pending,
        stream: bool,
        idle: Duration,
        cancel: CancellationToken,
    ) -> Self {
        Self::new(
            protocol,
            decoder,
            Body::Connecting { response, stream },
            idle,
            cancel,
        )
    }

    /// A stream that fails at once with `error` (nothing was sent).
    pub(crate) fn failed(protocol: Arc<dyn Protocol>, error: ErrorInfo) -> Self {
        let decoder = protocol.decoder();
        let mut stream = Self::new(
            protocol,
            decoder,
            Body::Done,
            Duration::from_secs(1),
            CancellationToken::new(),
        );
        stream.queue.push_back(ResponseEvent::Error { error });
        stream
    }

    fn new(
        protocol: Arc<dyn Protocol>,
        decoder: Box<dyn StreamDecoder>,
        body: Body,
        idle: Duration,
        cancel: CancellationToken,
    ) -> Self {
        let now = Instant::now();
        ResponseStream {
            protocol,
            decoder,
            body,
            queue: VecDeque::new(),
            assembler: Some(MessageAssembler::new()),
            outcome: None,
            cancel: CancelSignal::new(cancel),
            timer_waker: None,
            idle,
            last_progress: now,
            timer: Box::pin(tokio::time::sleep_until(now + idle)),
        }
    }

    /// The message folded so far (a partial view while streaming).
    pub fn assembler(&self) -> Option<&MessageAssembler> {
        self.assembler.as_ref()
    }

    /// How the response ended; `None` until the stream has yielded its last event.
    pub fn outcome(&self) -> Option<&TurnOutcome> {
        self.outcome.as_ref()
    }

    /// Receive the rest of the response and return how it ended.
    pub async fn finish(mut self) -> TurnOutcome {
        use futures_util::StreamExt as _;
        while self.next().await.is_some() {}
        self.outcome.take().unwrap_or(TurnOutcome::Cancelled {
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

    fn fail(&mut self, error: ErrorInfo) {
        self.body = Body::Done;
        self.queue.push_back(ResponseEvent::Error { error });
    }

    /// Poll the idle timer; `Err` when the silence has lasted longer than allowed.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Result<(), ErrorInfo> {
        while self.timer.as_mut().poll(cx).is_ready() {
            let deadline = self.last_progress + self.idle;
            if Instant::now() >= deadline {
                return Err(ErrorInfo::network(format!(
                    "no data received for {} s (idle timeout)",
                    self.idle.as_secs_f64()
                )));
            }
            self.timer.as_mut().reset(deadline);
        }
        Ok(())
    }

    fn on_response(&mut self, response: reqwest::Response, stream: bool) {
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let bytes: ByteStream = Box::pin(response.bytes_stream());
        let framer = match self.decoder.framing() {
            Framing::Sse if content_type.contains("event-stream") => {
                Some(Framer::Sse(SseFramer::new()))
            }
            Framing::Ndjson if content_type.contains("ndjson") => {
                Some(Framer::Ndjson(NdjsonFramer::new()))
            }
            // A streamed answer with a missing or unusual content type: trust the request,
            // unless the server says it sent one JSON document.
            framing if stream && !content_type.starts_with("application/json") => {
                Some(match framing {
                    Framing::Sse => Framer::Sse(SseFramer::new()),
                    Framing::Ndjson => Framer::Ndjson(NdjsonFramer::new()),
                })
            }
            _ => None,
        };
        self.body = if !(200..300).contains(&status) {
            Body::Whole {
                bytes,
                buf: Vec::new(),
                error_status: Some(status),
            }
        } else if let Some(framer) = framer {
            Body::Framed { bytes, framer }
        } else {
            Body::Whole {
                bytes,
                buf: Vec::new(),
                error_status: None,
            }
        };
    }

    /// Advance the body once. `Ready(())` when something changed (events queued, state moved).
    fn poll_body(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        match &mut this.body {
            Body::Done => Poll::Ready(()),
            Body::Connecting { response, stream } => match response.as_mut().poll(cx) {
                Poll::Ready(Ok(response)) => {
                    let stream = *stream;
                    this.last_progress = Instant::now();
                    this.on_response(response, stream);
                    Poll::Ready(())
                }
                Poll::Ready(Err(err)) => {
                    this.fail(network_error("request failed", &err));
                    Poll::Ready(())
                }
                Poll::Pending => Poll::Pending,
            },
            Body::Framed { bytes, framer } => match bytes.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.last_progress = Instant::now();
                    let (queue, decoder) = (&mut this.queue, &mut this.decoder);
                    if let Err(err) = framer.feed(&chunk, |frame| decoder.frame(frame, queue)) {
                        this.fail(err);
                    }
                    Poll::Ready(())
                }
                Poll::Ready(Some(Err(err))) => {
                    this.fail(network_error("the response stream broke", &err));
                    Poll::Ready(())
                }
                Poll::Ready(None) => {
                    let (queue, decoder) = (&mut this.queue, &mut this.decoder);
                    let flushed = framer.finish(|frame| decoder.frame(frame, queue));
                    match flushed.and_then(|()| decoder.finish(queue)) {
                        Ok(()) => this.body = Body::Done,
                        Err(err) => this.fail(err),
                    }
                    Poll::Ready(())
                }
                Poll::Pending => Poll::Pending,
            },
            Body::Whole {
                bytes,
                buf,
                error_status,
            } => match bytes.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.last_progress = Instant::now();
                    buf.extend_from_slice(&chunk);
                    Poll::Ready(())
                }
                Poll::Ready(Some(Err(err))) => {
                    this.fail(network_error("the response body broke", &err));
                    Poll::Ready(())
                }
                Poll::Ready(None) => {
                    let buf = std::mem::take(buf);
                    let result = match error_status {
                        Some(status) => {
                            Err(this.protocol.error(*status, &String::from_utf8_lossy(&buf)))
                        }
                        None => this.decoder.body(&buf, &mut this.queue),
                    };
                    match result {
                        Ok(()) => this.body = Body::Done,
                        Err(err) => this.fail(err),
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
            if let Some(event) = this.queue.pop_front() {
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
                // The timer keeps the waker it was polled with: poll it again only for a
                // new waker or once it has fired.
                let same_waker = this
                    .timer_waker
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()));
                if !same_waker || this.timer.is_elapsed() {
                    this.timer_waker = Some(cx.waker().clone());
                    if let Err(err) = this.poll_idle(cx) {
                        this.fail(err);
                        continue;
                    }
                }
                return Poll::Pending;
            }
        }
    }
}
