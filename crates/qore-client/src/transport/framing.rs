//! [`Framer`]: the framer a response body needs, chosen from the decoder's [`Framing`] and
//! the response's content type, behind one `feed`/`finish` interface.
//!
//! Promise: a body that ends in the middle of a line (see [`StreamEnd`] for the exact rule)
//! ends in a `Network` error, "the stream ended early", never in that half line handed to a
//! decoder (which would call it undecodable provider data).

use qore_core::ErrorInfo;

use super::ndjson::NdjsonFramer;
use super::sse::{SseFrame, SseFramer, StreamEnd};
use crate::codec::Framing;

/// The error for a streamed body cut in the middle of a line.
pub fn ended_mid_line() -> ErrorInfo {
    ErrorInfo::network("the stream ended early: the connection closed in the middle of a line")
}

/// Cuts a streamed body into frames.
#[derive(Debug)]
pub enum Framer {
    /// Server-sent events (`text/event-stream`).
    Sse(SseFramer),
    /// Newline-delimited JSON (Ollama).
    Ndjson(NdjsonFramer),
}

impl Framer {
    /// The framer for a 2xx body, or `None` when the body is one whole document: the server
    /// labelled it `application/json`, or it was not asked to stream and did not say it does.
    /// `content_type` is the answer's [`essence`](super::bad_answer::essence).
    pub fn for_response(
        framing: Framing,
        content_type: &str,
        stream_requested: bool,
    ) -> Option<Self> {
        let labelled = match framing {
            Framing::Sse => content_type.contains("event-stream"),
            Framing::Ndjson => content_type.contains("ndjson"),
        };
        let streamed =
            labelled || (stream_requested && !content_type.starts_with("application/json"));
        streamed.then(|| match framing {
            Framing::Sse => Framer::Sse(SseFramer::new()),
            Framing::Ndjson => Framer::Ndjson(NdjsonFramer::new()),
        })
    }

    /// Feed the next bytes; `on_frame` gets each complete frame in order.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        on_frame: impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Framer::Sse(framer) => framer.feed(chunk, on_frame),
            Framer::Ndjson(framer) => framer.feed(chunk, on_frame),
        }
    }

    /// End of body: dispatch what the server left unterminated when it is whole; a body
    /// cut mid-line is [`ended_mid_line`].
    pub fn finish(
        &mut self,
        on_frame: impl FnMut(SseFrame<'_>) -> Result<(), ErrorInfo>,
    ) -> Result<(), ErrorInfo> {
        let end = match self {
            Framer::Sse(framer) => framer.finish(on_frame),
            Framer::Ndjson(framer) => framer.finish(on_frame),
        }?;
        match end {
            StreamEnd::Clean => Ok(()),
            StreamEnd::MidLine => Err(ended_mid_line()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::bad_answer::essence;

    #[test]
    fn content_type_and_request_pick_the_framer() {
        // As the head keeps it: the essence of the content type.
        let pick =
            |framing, ct: &str, stream| match Framer::for_response(framing, &essence(ct), stream) {
                Some(Framer::Sse(_)) => "sse",
                Some(Framer::Ndjson(_)) => "ndjson",
                None => "whole",
            };
        assert_eq!(
            pick(Framing::Sse, "text/event-stream; charset=utf-8", false),
            "sse"
        );
        assert_eq!(pick(Framing::Sse, "", true), "sse");
        assert_eq!(pick(Framing::Sse, "application/json", true), "whole");
        assert_eq!(pick(Framing::Sse, "", false), "whole");
        assert_eq!(
            pick(Framing::Ndjson, "application/x-ndjson", false),
            "ndjson"
        );
        assert_eq!(
            pick(Framing::Ndjson, "Application/JSON; charset=utf-8", true),
            "whole"
        );
        assert_eq!(pick(Framing::Ndjson, "text/plain", true), "ndjson");
    }

    /// Every frame of `body` fed in two pieces split at `at`, then how it ended.
    fn frames(framing: Framing, body: &[u8], at: usize) -> (Vec<String>, Result<(), String>) {
        let mut framer = Framer::for_response(framing, "", true).unwrap();
        let mut out = Vec::new();
        let mut push = |f: SseFrame<'_>| {
            out.push(f.data.to_owned());
            Ok(())
        };
        for piece in [&body[..at], &body[at..]] {
            framer.feed(piece, &mut push).unwrap();
        }
        let end = framer.finish(&mut push).map_err(|e| e.message);
        (out, end)
    }

    #[test]
    fn a_body_cut_mid_line_ends_early_and_a_whole_last_line_is_kept() {
        let a = r#"{"a":1}"#;
        // (framing, body, frames, ended mid-line)
        let cases: &[(Framing, &[u8], &[&str], bool)] = &[
            (Framing::Sse, b"data: {\"a\":1}\n\n", &[a], false),
            (Framing::Sse, b"data: {\"a\":1}\n", &[a], false),
            (Framing::Sse, b"data: {\"a\":1}\r", &[a], false),
            (Framing::Sse, b"data: {\"a\":1}", &[a], false),
            (Framing::Sse, b"event: e\ndata: [DONE]", &["[DONE]"], false),
            (Framing::Sse, b"data: {\"a\":1}\n\n \t", &[a], false),
            (Framing::Sse, b"data: {\"a\":", &[], true),
            (Framing::Sse, b"data: {\"a\":\"\xC3", &[], true),
            (Framing::Sse, b"data: hello", &[], true),
            (Framing::Sse, b"data: {\"a\":1}\n\nda", &[a], true),
            (Framing::Sse, b"data: {\"a\":1}\n\nevent: e", &[a], true),
            (Framing::Ndjson, b"{\"a\":1}\n", &[a], false),
            (Framing::Ndjson, b"{\"a\":1}", &[a], false),
            (Framing::Ndjson, b"{\"a\":1}\n  ", &[a], false),
            (Framing::Ndjson, b"{\"a\":1}\n{\"b\":", &[a], true),
            (Framing::Ndjson, b"{\"a\":\"\xF0\x9F", &[], true),
            // A bare number parses even when cut (`12` of `123`): not taken as whole.
            (Framing::Sse, b"data: 12", &[], true),
            (Framing::Ndjson, b"{\"a\":1}\n12", &[a], true),
        ];
        for &(framing, body, expected, mid_line) in cases {
            for at in 0..=body.len() {
                let (frames, end) = frames(framing, body, at);
                let case = format!("{framing:?} {:?} split at {at}", body.escape_ascii());
                assert_eq!(frames, expected, "{case}");
                match end {
                    Ok(()) => assert!(!mid_line, "{case}: not reported"),
                    Err(message) => {
                        assert!(mid_line, "{case}: {message}");
                        assert!(message.contains("ended early"), "{case}: {message}");
                    }
                }
            }
        }
    }
}
