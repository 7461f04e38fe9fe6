//! Usage in one sense whatever the wire answered: `input_tokens` is the whole prompt, cache
//! reads and writes included (as OpenAI reports it; Anthropic reports them beside the
//! input, and qore-session's `tokens::prompt_tokens` knows each wire's way). Dialects that
//! report them beside (Anthropic Messages) subtract; accounting counts the whole prompt.
//!
//! [`Normalized`] wraps what the relay reads, so every `Usage` event and the outcome reach
//! the dialect, the metrics and the key's usage already in that sense.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use qore_core::{ResponseEvent, StreamOutcome, Usage};
use qore_session::tokens::prompt_tokens;

use crate::relay::EventSource;

/// `usage` as reported by the wire `protocol`, with `input_tokens` the whole prompt.
pub fn whole_prompt(usage: &Usage, protocol: &str) -> Usage {
    let mut out = *usage;
    if usage.input_tokens.is_some() {
        out.input_tokens = prompt_tokens(usage, Some(protocol));
    }
    out
}

fn outcome_in_sense(outcome: &StreamOutcome, protocol: &str) -> StreamOutcome {
    let mut outcome = outcome.clone();
    match &mut outcome {
        StreamOutcome::Finished { usage, .. }
        | StreamOutcome::Failed { usage, .. }
        | StreamOutcome::Cancelled { usage } => *usage = whole_prompt(usage, protocol),
    }
    outcome
}

/// An event source whose usage is in the one sense.
pub struct Normalized<S> {
    inner: S,
    protocol: &'static str,
    outcome: Option<StreamOutcome>,
}

impl<S: EventSource> Normalized<S> {
    pub fn new(inner: S, protocol: &'static str) -> Self {
        Normalized {
            inner,
            protocol,
            outcome: None,
        }
    }

    /// An event as the dialect sees it.
    pub fn event(&self, event: ResponseEvent) -> ResponseEvent {
        match event {
            ResponseEvent::Usage { usage } => ResponseEvent::Usage {
                usage: whole_prompt(&usage, self.protocol),
            },
            other => other,
        }
    }

    fn settle(&mut self) {
        if self.outcome.is_none() {
            if let Some(outcome) = self.inner.outcome() {
                self.outcome = Some(outcome_in_sense(outcome, self.protocol));
            }
        }
    }
}

impl<S: EventSource> Stream for Normalized<S> {
    type Item = ResponseEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ResponseEvent>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_next(cx);
        match polled {
            Poll::Ready(Some(event)) => {
                this.settle();
                Poll::Ready(Some(this.event(event)))
            }
            Poll::Ready(None) => {
                this.settle();
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: EventSource> EventSource for Normalized<S> {
    fn outcome(&self) -> Option<&StreamOutcome> {
        self.outcome.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_prompt_counts_cache_reads_once() {
        let usage = |input, cached, created| Usage {
            input_tokens: input,
            cached_input_tokens: cached,
            cache_creation_input_tokens: created,
            output_tokens: Some(5),
            ..Usage::default()
        };
        // (wire, reported, input_tokens in the one sense)
        let cases = [
            ("anthropic", usage(Some(10), Some(100), Some(20)), Some(130)),
            ("anthropic", usage(Some(10), None, None), Some(10)),
            ("openai-chat", usage(Some(110), Some(100), None), Some(110)),
            (
                "openai-responses",
                usage(Some(110), Some(100), None),
                Some(110),
            ),
            ("anthropic", usage(None, Some(100), None), None),
        ];
        for (wire, reported, want) in cases {
            let got = whole_prompt(&reported, wire);
            assert_eq!(got.input_tokens, want, "{wire} {reported:?}");
            assert_eq!(got.cached_input_tokens, reported.cached_input_tokens);
            assert_eq!(got.output_tokens, Some(5));
        }
    }
}
