//! How `qore run` fails on a broken wire: an HTML 502 page from a proxy, an Anthropic stream
//! a proxy spliced, and a stream that ends in the middle of a line. Each exits 1 with exactly
//! one short line on stderr, and in `--json` mode ends with an `error` object (no `result`)
//! that carries the body, capped.

mod common;

use std::path::Path;

use common::qore;
use qore_testkit::{parse_exchanges, reply_from_exchange, ReplayServer, Reply, Slicing};

/// A 20 KB HTML error page, as a CDN sends it.
fn bad_gateway() -> Reply {
    let filler = "<p>The upstream server did not answer in time.</p>\n".repeat(400);
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>{filler}</body></html>"
    );
    Reply::new(502, page)
        .with_header("content-type", "text/html")
        .with_header("retry-after", "0")
}

/// The spliced Anthropic stream recorded beside qore-client's tests.
fn spliced() -> Reply {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../qore-client/tests/data/wire_faults/anthropic_spliced_message_start.yaml");
    let text = std::fs::read_to_string(path).expect("recording");
    let exchanges = parse_exchanges(&text).expect("cassette");
    reply_from_exchange(&exchanges[0], Slicing::Irregular { seed: 5, max: 9 })
}

/// A Chat Completions stream cut cleanly in the middle of its second frame's line.
fn cut_mid_line() -> Reply {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n\
                data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel";
    Reply::new(200, body).with_header("content-type", "text/event-stream")
}

struct Case {
    name: &'static str,
    protocol: &'static str,
    reply: fn() -> Reply,
    /// Pieces of the stderr line (and of the JSON error's message).
    says: &'static [&'static str],
    category: &'static str,
    status: Option<u16>,
    /// A piece of the `body` in the JSON error, when one is kept.
    body: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "HTML 502",
        protocol: "openai-chat",
        reply: bad_gateway,
        says: &[
            "HTTP 502 Bad Gateway from 127.0.0.1:",
            "\"502 Bad Gateway\" (text/html, 20 KB)",
        ],
        category: "provider",
        status: Some(502),
        body: Some("<title>502 Bad Gateway</title>"),
    },
    Case {
        name: "spliced Anthropic stream",
        protocol: "anthropic",
        reply: spliced,
        says: &["second message"],
        category: "provider",
        status: None,
        body: Some("message_start"),
    },
    Case {
        name: "stream ended mid-line",
        protocol: "openai-chat",
        reply: cut_mid_line,
        says: &["ended early"],
        category: "network",
        status: None,
        body: None,
    },
];

#[tokio::test]
async fn a_broken_wire_exits_1_with_one_short_line() {
    for case in CASES {
        for json in [false, true] {
            let what = format!("{} (json: {json})", case.name);
            let server = ReplayServer::start_repeating((case.reply)())
                .await
                .expect("server");
            let url = server.url();
            let mode: &[&str] = if json { &["--json", "hi"] } else { &["hi"] };
            let target = ["--protocol", case.protocol, "--url", &url, "--model", "m"];
            let run = qore(&[&["run"][..], &target, mode].concat()).await;
            assert_eq!(run.code, Some(1), "{what}: {run:?}");
            let line = run.one_stderr_line();
            assert!(line.chars().count() < 300, "{what}: {line}");
            for piece in case.says {
                assert!(line.contains(piece), "{what}: {line:?} lacks {piece:?}");
            }
            if !json {
                continue;
            }
            let lines = run.json_lines();
            assert!(
                lines.iter().all(|l| l["type"] != "result"),
                "{what}: a result"
            );
            let last = lines.last().expect("an error line");
            assert_eq!(last["type"], "error", "{what}: {last}");
            assert_eq!(last["category"], case.category, "{what}: {last}");
            assert_eq!(
                last["status"].as_u64(),
                case.status.map(u64::from),
                "{what}"
            );
            let body = last["body"].as_str();
            match case.body {
                Some(piece) => {
                    let body = body.unwrap_or_else(|| panic!("{what}: no body: {last}"));
                    assert!(body.contains(piece), "{what}: {body:.200}");
                    assert!(body.len() <= 64 * 1024, "{what}: body of {}", body.len());
                }
                None => assert!(body.is_none(), "{what}: {last}"),
            }
            let calls = lines
                .iter()
                .filter(|l| l["type"] == "tool_call_end")
                .count();
            assert_eq!(calls, 0, "{what}: a tool call made up from the leftovers");
        }
    }
}
