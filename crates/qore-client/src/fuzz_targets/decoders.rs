//! The decoder target: one wire's chat and fill-in-the-middle decoders, fed the way
//! [`crate::ResponseStream`] feeds them (the framer their `Framing` asks for, frames in
//! order until one fails, then the framer's and the decoder's `finish`), and whole bodies.

use std::collections::VecDeque;
use std::sync::OnceLock;

use qore_core::{ErrorInfo, MessageAssembler, ResponseEvent};

use super::chunked;
use crate::codec::{Framing, StreamDecoder};
use crate::protocols::{
    anthropic, by_name, gemini, llamacpp, ollama, openai_chat, openai_responses,
};
use crate::transport::framing::Framer;
use crate::transport::ndjson::NdjsonFramer;
use crate::transport::sse::SseFramer;

/// What a decoder made of a body: its events and how it ended.
type Decoded = (Vec<ResponseEvent>, Result<(), ErrorInfo>);

/// The decoder target for the wire called `wire` (a name in [`crate::protocols::NAMES`];
/// any other name is a mistake in the caller and panics).
pub fn decode(wire: &str, data: &[u8]) {
    let protocol = by_name(wire).unwrap_or_else(|| panic!("no protocol called {wire}"));
    let (body, chunks) = chunked(data);
    for fim in [false, true] {
        let fast = || match fim {
            false => protocol.decoder(),
            true => protocol.fim_decoder(),
        };
        let whole = streamed(fast(), &[body]);
        fold(&whole.0);
        let whole = renumbered(whole);
        let chunked = renumbered(streamed(fast(), &chunks));
        assert_eq!(chunked, whole, "{wire} fim={fim}: chunked");
        let serde = renumbered(streamed(serde_only(wire, fim), &[body]));
        assert_eq!(
            serde, whole,
            "{wire} fim={fim}: the fast path changed the events"
        );
        let body_fast = whole_body(fast(), body);
        fold(&body_fast.0);
        let body_serde = whole_body(serde_only(wire, fim), body);
        assert_eq!(
            renumbered(body_fast),
            renumbered(body_serde),
            "{wire} fim={fim}: whole body"
        );
    }
}

/// The decoder with its fast path off, for the same wire and endpoint as `by_name(wire)`.
fn serde_only(wire: &str, fim: bool) -> Box<dyn StreamDecoder> {
    match (wire, fim) {
        (anthropic::NAME, _) => Box::new(anthropic::MessagesStreamDecoder::serde_only()),
        (gemini::NAME, _) => Box::new(gemini::GeminiStreamDecoder::serde_only()),
        (ollama::NAME, false) => Box::new(ollama::OllamaStreamDecoder::serde_only()),
        (ollama::NAME, true) => Box::new(ollama::OllamaStreamDecoder::generate()),
        (openai_chat::NAME, true) => {
            Box::new(openai_chat::completions::TextCompletionDecoder::new())
        }
        (openai_responses::NAME, _) => Box::new(openai_responses::ResponsesDecoder::serde_only()),
        (llamacpp::NAME, true) => Box::new(llamacpp::CompletionDecoder::serde_only()),
        _ => Box::new(openai_chat::ChatStreamDecoder::serde_only()),
    }
}

/// `decoded` with the call ids the engine made up (Gemini and Ollama calls that came
/// without one; a process-wide counter numbers them) renamed `synthesized_N` in order of
/// appearance, so two decodings of one body compare equal.
fn renumbered((mut events, end): Decoded) -> Decoded {
    static OLLAMA_PREFIX: OnceLock<String> = OnceLock::new();
    let ollama = OLLAMA_PREFIX.get_or_init(|| {
        let probe = ollama::synthesize_call_id();
        probe[..probe.rfind('_').map_or(0, |at| at + 1)].to_owned()
    });
    let mut names: Vec<String> = Vec::new();
    let mut rename = |id: &str| -> Option<String> {
        if !gemini::is_synthesized_call_id(id) && !id.starts_with(ollama.as_str()) {
            return None;
        }
        let n = match names.iter().position(|known| known == id) {
            Some(n) => n,
            None => {
                names.push(id.to_owned());
                names.len() - 1
            }
        };
        Some(format!("synthesized_{n}"))
    };
    for event in &mut events {
        match event {
            ResponseEvent::ToolCallStart { id, .. } | ResponseEvent::ToolCallEnd { id, .. } => {
                if let Some(new) = rename(id) {
                    *id = new;
                }
            }
            ResponseEvent::ToolCallArgsDelta { id, .. } => {
                if let Some(new) = rename(id) {
                    *id = new.into();
                }
            }
            _ => {}
        }
    }
    (events, end)
}

/// Stream `chunks` through the framer the decoder asks for, as the client does.
fn streamed(mut decoder: Box<dyn StreamDecoder>, chunks: &[&[u8]]) -> Decoded {
    let mut framer = match decoder.framing() {
        Framing::Sse => Framer::Sse(SseFramer::new()),
        Framing::Ndjson => Framer::Ndjson(NdjsonFramer::new()),
    };
    let mut out = VecDeque::new();
    for chunk in chunks {
        if let Err(err) = framer.feed(chunk, |frame| decoder.frame(frame, &mut out)) {
            return (out.into(), Err(err));
        }
    }
    let end = framer
        .finish(|frame| decoder.frame(frame, &mut out))
        .and_then(|()| decoder.finish(&mut out));
    (out.into(), end)
}

/// The events of `body` read as one whole (non-streamed) answer.
fn whole_body(mut decoder: Box<dyn StreamDecoder>, body: &[u8]) -> Decoded {
    let mut out = VecDeque::new();
    let end = decoder.body(body, &mut out);
    (out.into(), end)
}

/// Fold the events into a turn, as every consumer of a stream does.
fn fold(events: &[ResponseEvent]) {
    let mut assembler = MessageAssembler::new();
    events.iter().for_each(|event| assembler.apply(event));
    assembler.finish();
}
