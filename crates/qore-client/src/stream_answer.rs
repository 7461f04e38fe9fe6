//! The answer's head and whole bodies of a [`ResponseStream`]: how a response is received
//! (framed stream or whole body) and what a whole body becomes (events, or the error it is;
//! see [`crate::transport::bad_answer`]). A 2xx page or plain text is never handed to a
//! decoder; JSON that stops short is a cut body (`Network`, retried while nothing was
//! delivered), not undecodable provider data.

use std::time::Duration;

use qore_core::ErrorInfo;

use super::{Body, ByteStream, ResponseStream};
use crate::transport::bad_answer::{self, empty_response, Answer, Head};
use crate::transport::framing::Framer;
use crate::transport::retry::{is_retryable_status, server_wait};

/// What a whole body is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Whole {
    /// A 2xx answer, for the decoder.
    Answer,
    /// A non-2xx answer, with the wait its headers asked for.
    Failure(Option<Duration>),
    /// A 2xx page or plain text where a stream or JSON was expected.
    Page,
}

impl ResponseStream {
    /// The response head came: receive the body framed, or whole.
    pub(super) fn on_response(&mut self, response: reqwest::Response) {
        let head = Head::of(&response);
        let status = head.status;
        let stream = self.attempts.as_ref().is_some_and(|a| a.stream);
        let framer = Framer::for_response(self.decoder.framing(), &head.content_type, stream);
        let kind = if !(200..300).contains(&status) {
            Whole::Failure(server_wait(response.headers()))
        } else if bad_answer::is_page_or_text(&head.content_type) {
            Whole::Page
        } else {
            Whole::Answer
        };
        let bytes: ByteStream = Box::pin(response.bytes_stream());
        self.body = match (kind, framer) {
            (Whole::Answer, Some(framer)) => Body::Framed {
                bytes,
                framer,
                status,
            },
            _ => Body::Whole {
                bytes,
                buf: Vec::new(),
                size: 0,
                kind,
                head,
            },
        };
    }

    /// A whole body was received: decode it, or make it the error it is.
    pub(super) fn whole_ended(&mut self, buf: &[u8], size: usize, kind: Whole, head: &Head) {
        let answer = Answer {
            size,
            ..head.with_body(buf)
        };
        let result = match kind {
            Whole::Failure(wait) => {
                let text = String::from_utf8_lossy(buf);
                let error = self.protocol.error(head.status, &text);
                let wait = wait.or_else(|| self.protocol.retry_delay(&text));
                if is_retryable_status(head.status) && self.retry(wait, &error.message) {
                    return;
                }
                let mut error = bad_answer::http_answer(error, &answer);
                // The wait the provider asked for travels on (a gateway passes it on).
                error.retry_after_ms =
                    wait.map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX));
                Err(error)
            }
            Whole::Page => Err(bad_answer::not_a_stream(&answer)),
            Whole::Answer if buf.trim_ascii().is_empty() => {
                Err(empty_response(head.status, "an empty body"))
            }
            Whole::Answer => self.decoder.body(buf, &mut self.queue).map_err(|err| {
                // JSON that stops short was cut, not written wrong.
                match serde_json::from_slice::<serde::de::IgnoredAny>(buf) {
                    Err(json) if json.is_eof() => {
                        ErrorInfo::network("the response body ended early (its JSON is cut short)")
                    }
                    _ => err,
                }
            }),
        };
        self.settle(result);
    }
}
