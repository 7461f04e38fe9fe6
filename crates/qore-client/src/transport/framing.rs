//! [`Framer`]: the framer a response body needs, chosen from the decoder's [`Framing`] and
//! the response's content type, behind one `feed`/`finish` interface.

use super::ndjson::NdjsonFramer;
use super::sse::{SseFrame, SseFramer};
use crate::codec::Framing;

/// Cuts a streamed body into frames.
#[derive(Debug)]
pub enum Framer {
    Sse(SseFramer),
    Ndjson(NdjsonFramer),
}

impl Framer {
    /// The framer for a 2xx body, or `None` when the body is one whole document: the server
    /// labelled it `application/json`, or it was not asked to stream and did not say it does.
    pub fn for_response(
        framing: Framing,
        content_type: &str,
        stream_requested: bool,
    ) -> Option<Self> {
        let content_type = content_type.to_ascii_lowercase();
        let labelled = match framing {
            Framing::Sse => content_type.contains("event-stream"),
            Framing::Ndjson => content_type.contains("ndjson"),
        };
        let streamed = labelled
            || (stream_requested && !content_type.trim_start().starts_with("application/json"));
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

    /// End of body: dispatch what the server left unterminated.
    pub fn finish<E>(
        &mut self,
        on_frame: impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Framer::Sse(framer) => framer.finish(on_frame),
            Framer::Ndjson(framer) => framer.finish(on_frame),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_type_and_request_pick_the_framer() {
        let pick = |framing, ct, stream| match Framer::for_response(framing, ct, stream) {
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
}
