//! One request to the model that answers: the inbound conversation laid into a
//! [`ChatRequest`] for the candidate's wire, sent, and its first event awaited; on a 429, a
//! 5xx or a connection failure before that first event the next candidate is tried. After
//! the first event nothing switches: a failure is the dialect's in-stream error.
//!
//! Promises: what the target's wire cannot honour (a tool choice, an answer format, stop
//! sequences) is a 400 naming the field, never dropped; the agent's system prompt comes
//! before the caller's system messages; history is sanitized for the wire as sessions do;
//! a caller that wants one body (no `stream`) gets the upstream asked for one body when the
//! target is a model (an agent's request decides for itself).

use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use qore_client::{CancellationToken, ChatRequest, RequestOptions, ResponseStream};
use qore_core::{ErrorCategory, ErrorInfo, History, Message, ResponseEvent, Role};
use qore_session::sanitize::{sanitize, Wire};
use qore_session::Target;

use crate::events::EventSource;
use crate::route::Candidate;
use crate::usage::Normalized;
use crate::{ErrorKind, Inbound, ServeError};

/// A stream that has answered (its first event is in `first`).
pub struct Opened {
    pub stream: Box<dyn EventSource>,
    pub first: Option<ResponseEvent>,
    pub candidate: Candidate,
    /// Time spent waiting for the upstream's first event.
    pub waited: Duration,
}

/// Send `inbound` to the first candidate that answers.
pub async fn open(
    plan: &[Candidate],
    inbound: &Inbound,
    cancel: &CancellationToken,
) -> Result<Opened, ServeError> {
    let mut last: Option<ErrorInfo> = None;
    for (index, candidate) in plan.iter().enumerate() {
        let started = Instant::now();
        let mut stream = start(&candidate.target, inbound, cancel)?;
        let first = stream.next().await;
        let waited = started.elapsed();
        if let Some(ResponseEvent::Error { error }) = &first {
            let more = index + 1 < plan.len();
            if more && falls_back(error) {
                tracing::warn!(
                    "{} could not answer ({}); trying {}",
                    candidate.name,
                    error.message,
                    plan[index + 1].name
                );
                last = Some(error.clone());
                continue;
            }
        }
        let wire = candidate.target.client.protocol().clone();
        let stream = Normalized::new(stream, wire);
        let first = first.map(|event| stream.event(event));
        return Ok(Opened {
            stream: Box::new(stream),
            first,
            candidate: candidate.clone(),
            waited,
        });
    }
    Err(match last {
        Some(error) => ServeError::from_upstream(&error),
        None => ServeError::new(ErrorKind::Internal, "no target to send the request to"),
    })
}

/// A failure another target might not have: rate limits, server errors, the network.
fn falls_back(error: &ErrorInfo) -> bool {
    match error.status() {
        Some(status) => status == 429 || status >= 500,
        None => error.category == ErrorCategory::Network,
    }
}

/// Start the request to `target` (nothing is awaited).
fn start(
    target: &Target,
    inbound: &Inbound,
    cancel: &CancellationToken,
) -> Result<ResponseStream, ServeError> {
    let options = options_for(target, inbound)?;
    let protocol = target.client.protocol();
    let same_wire = inbound.wire == protocol.name();
    let view = conversation(target, inbound)?;
    let request = ChatRequest {
        model: &target.model,
        history: &view,
        tools: &inbound.tools,
        options: &options,
    };
    // The caller's own headers for its vendor (`anthropic-version`, `anthropic-beta`) go on
    // only to that vendor's wire.
    let passed: Vec<(String, String)> = match same_wire {
        true => inbound.passthrough_headers.clone(),
        false => Vec::new(),
    };
    if passed.is_empty() {
        return Ok(target.client.stream(&request, cancel.clone()));
    }
    let client = (target.client.with_headers(&passed))
        .map_err(|err| ServeError::invalid("headers", err.message))?;
    Ok(client.stream(&request, cancel.clone()))
}

/// The conversation sent to `target`: its system prompt first, another vendor's thinking
/// left out, sanitized for its wire. Nothing left to send (every message empty, or a tool
/// result that answers no call) is a 400 naming `messages`, not an empty request upstream.
pub fn conversation(target: &Target, inbound: &Inbound) -> Result<History, ServeError> {
    let protocol = target.client.protocol();
    let history = history_for(target, &inbound.history);
    let history = match inbound.wire == protocol.name() {
        true => history,
        false => without_thinking(history),
    };
    let sanitized = match sanitize(&history, Wire::of(&**protocol)) {
        std::borrow::Cow::Owned(view) => Some(view),
        std::borrow::Cow::Borrowed(_) => None,
    };
    let view = sanitized.unwrap_or(history);
    if view.is_empty() {
        return Err(ServeError::invalid(
            "messages",
            "nothing to send: every message is empty, or answers no tool call",
        ));
    }
    Ok(view)
}

/// What names the hints [`open`] drops for `target` beyond the dialect's: thinking (signed by
/// another vendor: only its own wire can take it back) and the vendor headers.
pub fn dropped_for(target: &Target, inbound: &Inbound) -> Vec<&'static str> {
    let same_wire = inbound.wire == target.client.protocol().name();
    let mut dropped = Vec::new();
    if !same_wire {
        let thinking = (inbound.history.iter()).flat_map(|m| &m.blocks).any(|b| {
            matches!(
                b,
                qore_core::ContentBlock::Thinking { .. }
                    | qore_core::ContentBlock::RedactedThinking { .. }
            )
        });
        if thinking {
            dropped.push("thinking");
        }
    }
    dropped
}

/// `history` without thinking blocks: their signatures (Anthropic's, OpenAI's encrypted
/// reasoning) mean something only to the vendor that made them.
fn without_thinking(history: History) -> History {
    let thinking = |b: &qore_core::ContentBlock| {
        matches!(
            b,
            qore_core::ContentBlock::Thinking { .. }
                | qore_core::ContentBlock::RedactedThinking { .. }
        )
    };
    if !(history.iter()).any(|m| m.blocks.iter().any(thinking)) {
        return history;
    }
    let messages: Vec<Message> = (history.iter())
        .filter_map(|message| {
            let mut message = message.clone();
            message.blocks.retain(|b| !thinking(b));
            (!message.blocks.is_empty()).then_some(message)
        })
        .collect();
    History::from(messages)
}

/// The request options for `target`: its own, the caller's sampling where no agent body
/// bakes them in, and what the caller asks beyond the conversation in the wire's fields.
pub fn options_for(target: &Target, inbound: &Inbound) -> Result<RequestOptions, ServeError> {
    let protocol = target.client.protocol();
    let mut options = target.options.clone();
    if target.agent.is_none() {
        options.max_tokens = inbound.max_tokens.or(options.max_tokens);
        options.temperature = inbound.temperature.or(options.temperature);
        // A caller that wants one body gets the upstream asked for one body too: nothing to
        // frame and fold (every client wire decodes a whole answer, and one that streams
        // anyway is still framed). An agent's own request decides for itself.
        options.stream = options.stream && inbound.stream;
    }
    let cannot = |field: &str, what: &str| {
        ServeError::invalid(
            field,
            format!(
                "{field}: {what} cannot be honoured by the target's wire ({})",
                protocol.name()
            ),
        )
    };
    if let Some(choice) = inbound
        .tool_choice
        .as_ref()
        .filter(|_| !inbound.tools.is_empty())
    {
        let fields = protocol
            .tool_choice_fields(choice)
            .ok_or_else(|| cannot("tool_choice", &format!("{choice:?}")))?;
        options.merge_extra(fields);
    }
    if let Some(format) = &inbound.response_format {
        let fields = protocol
            .response_format_fields(format)
            .ok_or_else(|| cannot("response_format", "this answer format"))?;
        options.merge_extra(fields);
    }
    if !inbound.stop.is_empty() {
        let fields = protocol
            .stop_fields(&inbound.stop)
            .ok_or_else(|| cannot("stop", "stop sequences"))?;
        options.merge_extra(fields);
    }
    Ok(options)
}

/// The conversation sent: the agent's (or target's) system prompt first, then the caller's.
fn history_for(target: &Target, history: &History) -> History {
    let own = (target.agent.as_ref())
        .and_then(|a| a.system.clone())
        .or_else(|| target.system.clone());
    let Some(own) = own.filter(|s| !s.trim().is_empty()) else {
        return history.clone();
    };
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(Message::new(
        Role::System,
        vec![qore_core::ContentBlock::text(own)],
    ));
    messages.extend(history.iter().cloned());
    History::from(messages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qore_core::ContentBlock;

    #[test]
    fn another_vendors_thinking_is_left_out_and_named() {
        let thinking = ContentBlock::Thinking {
            text: "hmm".into(),
            signature: Some("enc".into()),
        };
        let history = History::from(vec![
            Message::system("be brief"),
            Message::user("add"),
            Message::new(Role::Assistant, vec![thinking.clone()]),
            Message::new(Role::Assistant, vec![thinking, ContentBlock::text("4")]),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::RedactedThinking { data: "x".into() },
                    ContentBlock::text("5"),
                ],
            ),
        ]);
        let kept = without_thinking(history);
        let texts: Vec<String> = kept.iter().map(Message::text).collect();
        assert_eq!(texts, ["be brief", "add", "4", "5"]);
        let untouched = History::from(vec![Message::user("hi")]);
        assert_eq!(without_thinking(untouched.clone()), untouched);
    }

    #[test]
    fn nothing_left_to_send_is_a_400() {
        let protocol = qore_client::protocols::by_name("openai-chat").unwrap();
        let config = qore_client::ClientConfig::new("http://127.0.0.1:9/v1");
        let target = Target::new(qore_client::Client::new(protocol, config).unwrap(), "m");
        let orphan = Message::new(
            Role::User,
            vec![ContentBlock::tool_result("nobody", "5", false)],
        );
        // (the history, what is sent: its texts, or None for the 400)
        let cases = [
            (vec![Message::new(Role::User, vec![])], None),
            (vec![orphan.clone()], None),
            (vec![orphan, Message::user("hi")], Some(vec!["hi"])),
        ];
        for (messages, want) in cases {
            let inbound = Inbound {
                history: History::from(messages),
                ..Inbound::default()
            };
            let got = conversation(&target, &inbound);
            let texts: Option<Vec<String>> = got
                .as_ref()
                .ok()
                .map(|h| h.iter().map(Message::text).collect());
            assert_eq!(
                texts,
                want.map(|w| w.iter().map(|t| t.to_string()).collect())
            );
            if let Err(error) = got {
                assert_eq!(
                    (error.status, error.param.as_deref()),
                    (400, Some("messages"))
                );
            }
        }
    }

    #[test]
    fn only_try_later_failures_fall_back() {
        let status = |s: u16| {
            ErrorInfo::provider("x").with_detail(qore_core::ProviderDetail {
                status: Some(s),
                ..Default::default()
            })
        };
        let cases = [
            (status(429), true),
            (status(500), true),
            (status(529), true),
            (status(400), false),
            (status(401), false),
            (ErrorInfo::network("connection refused"), true),
            (ErrorInfo::validation("bad"), false),
        ];
        for (error, want) in cases {
            assert_eq!(falls_back(&error), want, "{error:?}");
        }
    }
}
