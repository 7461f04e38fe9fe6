//! The fault suite: every wire's streamed answer broken in every way a network, a proxy or a
//! provider breaks it, served by a real loopback HTTP server, and run through the real
//! client inside the tool loop (which owns the history).
//!
//! For each (wire, fault): the turn fails with the expected category (and HTTP status) and a
//! message of one line under 300 characters saying what happened, any kept body is capped,
//! nothing panics, and the history is exactly what it was (a failed turn appends no partial
//! message); or, for the faults a client must survive (slow drip, UTF-8 split everywhere, a
//! 20 MB delta), the turn finishes with the whole text, once. A second run serves the fault
//! and then the intact answer: a fault is retried exactly when it is a "try later" status or
//! a transport failure before any event was delivered.

mod support;
#[path = "faults/wires.rs"]
mod wires;

use std::time::Duration;

use qore_client::tool_loop::{ToolRegistry, TurnOutcome};
use qore_client::{protocols, Client, ClientConfig, RetryPolicy, Timeouts};
use qore_core::{ContentBlock, ErrorCategory, ErrorInfo, History, Message, Role};
use qore_testkit::{ReplayServer, Reply, Slicing};
use wires::{Wire, TEXT};

/// What a fault must lead to.
enum Expect {
    Fails {
        category: ErrorCategory,
        status: Option<u16>,
        /// A piece of the message.
        says: String,
        /// Sent again (the intact answer then finishes the turn).
        retried: bool,
    },
    Finishes {
        text: String,
    },
}

fn fails(category: ErrorCategory, status: Option<u16>, says: &str, retried: bool) -> Expect {
    Expect::Fails {
        category,
        status,
        says: says.to_owned(),
        retried,
    }
}

/// One way to break an answer: its name, the idle timeout it runs under, and the reply it
/// serves with what must follow.
struct Fault {
    name: &'static str,
    idle: Duration,
    make: fn(&Wire) -> (Reply, Expect),
}

const IDLE: Duration = Duration::from_secs(30);
const MB20: usize = 20 * 1024 * 1024;

fn answer(wire: &Wire) -> Reply {
    Reply::new(200, wire.body.clone())
        .with_header("content-type", wire.content_type)
        .with_slicing(Slicing::Irregular { seed: 7, max: 23 })
}

/// The first `cut` bytes of the answer, sent complete and closed cleanly.
fn clean_cut(wire: &Wire, cut: usize) -> Reply {
    Reply::new(200, wire.body.as_bytes()[..cut].to_vec())
        .with_header("content-type", wire.content_type)
        .with_slicing(Slicing::Fixed(11))
}

fn error_reply(wire: &Wire, status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(status, (wire.error)(status, kind, message))
}

fn page(status: u16, title: &str, size: usize) -> Reply {
    let head = format!("<!DOCTYPE html><html><head><title>{title}</title></head><body>");
    let filler = "<p>the server is unavailable</p>\n".repeat(size / 34 + 1);
    Reply::new(status, format!("{head}{filler}</body></html>"))
        .with_header("content-type", "text/html; charset=utf-8")
}

use ErrorCategory::{Auth, Network, Provider};

fn faults() -> Vec<Fault> {
    let fault = |name, make| Fault {
        name,
        idle: IDLE,
        make,
    };
    vec![
        fault("closed before the head", |_| {
            (
                Reply::hang_up(),
                fails(Network, None, "request failed", true),
            )
        }),
        fault("cut mid-line in the first frame", |w| {
            let cut = w.first_data_line_end() - 5;
            (clean_cut(w, cut), fails(Network, None, "ended early", true))
        }),
        fault("cut after a whole line, mid-frame", |w| {
            let cut = w.end_of_line_with("Hello");
            let retried = cut < w.first_data_line_end();
            let says = "ended before the response was complete";
            (clean_cut(w, cut), fails(Network, None, says, retried))
        }),
        fault("cut mid-UTF-8", |w| {
            let cut = w.body.find('😀').expect("emoji") + 2;
            let retried = cut < w.first_data_line_end();
            (
                clean_cut(w, cut),
                fails(Network, None, "ended early", retried),
            )
        }),
        fault("reset in the first frame", |w| {
            let reply = answer(w).reset_after(w.first_data_line_end() - 5);
            (reply, fails(Network, None, "broke", true))
        }),
        fault("connection lost mid-stream", |w| {
            // A broken connection dispatches no pending frame: only whole frames count.
            let cut = w.end_of_line_with("Hello");
            let retried = cut < w.first_frame_end();
            (
                answer(w).cut_after(cut),
                fails(Network, None, "broke", retried),
            )
        }),
        fault("malformed JSON", |w| {
            let body = w.frame(r#"{"oops": [}"#) + &w.body;
            let reply = Reply::new(200, body).with_header("content-type", w.content_type);
            (reply, fails(Provider, None, "undecodable", false))
        }),
        fault("an error reported mid-stream", |w| {
            // After the text: what was streamed must not become a turn.
            let mut at = w.end_of_line_with("Hello");
            if !w.ndjson {
                at += w.body[at..].find('\n').expect("blank line") + 1;
            }
            let body = format!("{}{}{}", &w.body[..at], w.stream_error(), &w.body[at..]);
            let reply = Reply::new(200, body).with_header("content-type", w.content_type);
            // Gemini's error object names its HTTP status.
            let status = (w.protocol == "gemini").then_some(500);
            (reply, fails(Provider, status, "upstream died", false))
        }),
        fault("a 20 MB line of garbage", |w| {
            let body = w.frame(&"x".repeat(MB20)) + &w.body;
            let reply = Reply::new(200, body).with_header("content-type", w.content_type);
            (reply, fails(Provider, None, "undecodable", false))
        }),
        fault("429 with Retry-After", |w| {
            let reply = error_reply(w, 429, "rate_limit_error", "slow down");
            let reply = reply.with_header("retry-after", "0");
            (reply, fails(Provider, Some(429), "slow down", true))
        }),
        fault("500", |w| {
            let reply = error_reply(w, 500, "api_error", "busy");
            (reply, fails(Provider, Some(500), "busy", true))
        }),
        fault("502", |w| {
            let reply = error_reply(w, 502, "api_error", "busy");
            (reply, fails(Provider, Some(502), "busy", true))
        }),
        fault("503", |w| {
            let reply = error_reply(w, 503, "api_error", "busy");
            (reply, fails(Provider, Some(503), "busy", true))
        }),
        fault("529", |w| {
            let reply = error_reply(w, 529, "overloaded_error", "Overloaded");
            (reply, fails(Provider, Some(529), "Overloaded", true))
        }),
        Fault {
            name: "idle stall",
            idle: Duration::from_millis(400),
            make: |w| {
                let reply = answer(w).stall_after(w.first_frame_end());
                (reply, fails(Network, None, "idle timeout", false))
            },
        },
        fault("HTML 502 page from a proxy", |_| {
            let says = "HTTP 502 Bad Gateway from 127.0.0.1:";
            (
                page(502, "502 Bad Gateway", 20 * 1024),
                fails(Provider, Some(502), says, true),
            )
        }),
        fault("200 with an HTML page", |_| {
            let says = "is not an event stream or JSON but \"Sign in\" (text/html,";
            (
                page(200, "Sign in", 3000),
                fails(Provider, Some(200), says, false),
            )
        }),
        fault("200 with plain text", |_| {
            let reply =
                Reply::new(200, "upstream says hello\n").with_header("content-type", "text/plain");
            let says = "but \"upstream says hello\" (text/plain, 20 B)";
            (reply, fails(Provider, Some(200), says, false))
        }),
        fault("401 with the provider's JSON", |w| {
            let reply = error_reply(w, 401, "authentication_error", "invalid x-api-key");
            (reply, fails(Auth, Some(401), "invalid x-api-key", false))
        }),
        fault("403 with the provider's JSON", |w| {
            let reply = error_reply(w, 403, "permission_error", "not allowed");
            (reply, fails(Auth, Some(403), "not allowed", false))
        }),
        fault("404 with the provider's JSON", |w| {
            let reply = error_reply(w, 404, "not_found_error", "model: nope");
            (reply, fails(Provider, Some(404), "model: nope", false))
        }),
        fault("slow drip", |w| {
            let reply = answer(w)
                .with_slicing(Slicing::Fixed(9))
                .with_pace(Duration::from_millis(1));
            (reply, Expect::Finishes { text: TEXT.into() })
        }),
        fault("UTF-8 split everywhere", |w| {
            let reply = answer(w).with_slicing(Slicing::Irregular { seed: 3, max: 3 });
            (reply, Expect::Finishes { text: TEXT.into() })
        }),
        fault("a 20 MB delta", |w| {
            let big = format!("wörld{}", "y".repeat(MB20));
            let body = w.body.replace("wörld", &big);
            let reply = Reply::new(200, body)
                .with_header("content-type", w.content_type)
                .with_slicing(Slicing::Fixed(1 << 20));
            let text = TEXT.replace("wörld", &big);
            (reply, Expect::Finishes { text })
        }),
    ]
}

/// A conversation with a finished exchange before the new user turn.
fn conversation() -> History {
    History::from(vec![
        Message::user("first question"),
        Message::assistant("first answer"),
        Message::user("hi"),
    ])
}

/// One turn through the tool loop against `replies`: its outcome, the history after it and
/// the requests the server saw.
async fn turn(wire: &Wire, replies: Vec<Reply>, attempts: u32, idle: Duration) -> Run {
    let server = ReplayServer::start(replies).await.expect("server");
    let config = ClientConfig {
        timeouts: Timeouts {
            idle,
            ..Timeouts::default()
        },
        retry: RetryPolicy {
            max_attempts: attempts,
            initial_delay: Duration::from_millis(1),
            max_delay: Duration::from_secs(1),
        },
        ..ClientConfig::new(server.url())
    };
    let client =
        Client::new(protocols::by_name(wire.protocol).expect("wire"), config).expect("client");
    let mut history = conversation();
    let outcome = support::run_loop(&client, &mut ToolRegistry::new(), &mut history).await;
    Run {
        outcome,
        history,
        requests: server.requests().len(),
    }
}

struct Run {
    outcome: TurnOutcome,
    history: History,
    requests: usize,
}

fn check_error(
    case: &str,
    error: &ErrorInfo,
    category: ErrorCategory,
    status: Option<u16>,
    says: &str,
) {
    assert_eq!(error.category, category, "{case}: {error:?}");
    assert_eq!(error.status(), status, "{case}: {}", error.message);
    let message = &error.message;
    assert!(message.chars().count() < 300, "{case}: too long: {message}");
    assert!(
        !message.contains(['\n', '\r']),
        "{case}: not one line: {message:?}"
    );
    assert!(
        message.contains(says),
        "{case}: {message:?} does not say {says:?}"
    );
    if let Some(body) = error.provider.as_ref().and_then(|d| d.body.as_ref()) {
        assert!(
            body.len() <= 64 * 1024,
            "{case}: body of {} bytes kept",
            body.len()
        );
    }
}

fn check_finished(case: &str, run: &Run, text: &str) {
    assert!(
        matches!(run.outcome, TurnOutcome::Finished { .. }),
        "{case}: {:?}",
        run.outcome
    );
    let before = conversation();
    let after = run.history.messages();
    assert_eq!(after.len(), before.messages().len() + 1, "{case}");
    assert_eq!(
        &after[..before.messages().len()],
        before.messages(),
        "{case}"
    );
    let last = &after[after.len() - 1];
    assert_eq!(last.role, Role::Assistant, "{case}");
    let got: String = last
        .blocks
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect();
    assert!(
        got == text,
        "{case}: text of {} bytes, expected {}",
        got.len(),
        text.len()
    );
}

#[tokio::test]
async fn every_fault_on_every_wire_fails_cleanly_or_is_survived() {
    for wire in wires::all() {
        for fault in faults() {
            let case = format!("{} / {}", wire.protocol, fault.name);
            let (reply, expect) = (fault.make)(&wire);
            let run = turn(&wire, vec![reply.clone()], 1, fault.idle).await;
            match expect {
                Expect::Finishes { text } => check_finished(&case, &run, &text),
                Expect::Fails {
                    category,
                    status,
                    says,
                    retried,
                } => {
                    let TurnOutcome::Failed { error, .. } = &run.outcome else {
                        panic!("{case}: not a failure: {:?}", run.outcome);
                    };
                    check_error(&case, error, category, status, &says);
                    assert_eq!(run.history, conversation(), "{case}: history changed");
                    assert_eq!(run.requests, 1, "{case}");

                    // Then the intact answer: taken only if the fault is retried.
                    let replies = vec![reply, answer(&wire)];
                    let again = turn(&wire, replies, 2, fault.idle).await;
                    if retried {
                        check_finished(&format!("{case}, retried"), &again, TEXT);
                        assert_eq!(again.requests, 2, "{case}");
                    } else {
                        assert!(
                            matches!(again.outcome, TurnOutcome::Failed { .. }),
                            "{case}: {:?}",
                            again.outcome
                        );
                        assert_eq!(again.history, conversation(), "{case}: history changed");
                        assert_eq!(again.requests, 1, "{case}: retried");
                    }
                }
            }
        }
    }
}
