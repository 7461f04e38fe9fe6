//! The stdio guard over in-memory pipes, with the real server behind it: replies to bad frames
//! and tower's responses never interleave, and serving ends on `exit` or the end of input.

use std::time::Duration;

use qore_agents::config::Config;
use qore_session::SessionManager;
use qore_testkit::lsp::{frame, LspClient};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::{check, with_params};
use crate::{serve, Setup};

fn setup(dir: &std::path::Path) -> Setup {
    let notes: qore_session::Notes = std::sync::Arc::new(|_: &str| {});
    Setup {
        manager: SessionManager::new(None, Config::load(Some(dir)), notes),
        config_dir: None,
    }
}

#[tokio::test]
async fn bad_frames_and_responses_come_out_whole_and_in_step() {
    let dir = tempfile::tempdir().unwrap();
    let (client_end, server_end) = tokio::io::duplex(1 << 10);
    let (server_in, server_out) = tokio::io::split(server_end);
    let server = tokio::spawn(serve(server_in, server_out, setup(dir.path())));
    let (read, write) = tokio::io::split(client_end);
    let mut client = LspClient::over(read, write);
    client.initialize(dir.path(), Value::Null).await;
    // Many requests and bad frames in one write: the small pipe makes both writers contend.
    let mut bytes = Vec::new();
    let rounds = 40;
    for i in 0..rounds {
        bytes.extend(frame(b"garbage"));
        let request = json!({"jsonrpc": "2.0", "id": 100 + i, "method": "textDocument/codeAction",
            "params": {"textDocument": {"uri": "file:///x"}, "range": {"start":
            {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context":
            {"diagnostics": []}}});
        bytes.extend(frame(request.to_string().as_bytes()));
    }
    client.send_raw(&bytes).await;
    let (mut parse_errors, mut answers) = (0, 0);
    while parse_errors + answers < 2 * rounds {
        let message = client.next().await.expect("the server goes on");
        assert!(
            message.get("unparsable").is_none(),
            "interleaved: {message}"
        );
        match message["id"].as_i64() {
            None => {
                assert_eq!(message["error"]["code"], -32700, "{message}");
                parse_errors += 1;
            }
            Some(_) => answers += 1,
        }
    }
    assert_eq!((parse_errors, answers), (rounds, rounds));
    client.shutdown().await;
    let done = tokio::time::timeout(Duration::from_secs(20), server).await;
    assert!(
        matches!(done, Ok(Ok(Ok(())))),
        "serve ends after exit: {done:?}"
    );
}

#[tokio::test]
async fn serving_ends_with_the_input() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("nothing at all", Vec::new()),
        (
            "a request, then the end",
            frame(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#),
        ),
        (
            "a frame cut short",
            b"Content-Length: 50\r\n\r\n{\"json".to_vec(),
        ),
    ];
    for (name, bytes) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (mut client_end, server_end) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server_end);
        let server = tokio::spawn(serve(server_in, server_out, setup(dir.path())));
        client_end.write_all(&bytes).await.unwrap();
        client_end.shutdown().await.unwrap();
        let done = tokio::time::timeout(Duration::from_secs(20), server).await;
        assert!(matches!(done, Ok(Ok(Ok(())))), "{name}: {done:?}");
    }
}

#[test]
fn a_message_without_params_gets_null_params_and_others_pass_unchanged() {
    let cases = [
        // (body, what tower gets)
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"getVersion"}"#,
            json!({"jsonrpc": "2.0", "id": 1, "method": "getVersion", "params": null}),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"exit"}"#,
            json!({"jsonrpc": "2.0", "method": "exit", "params": null}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"checkStatus","params":{"options":{}}}"#,
            json!({"jsonrpc": "2.0", "id": 2, "method": "checkStatus", "params": {"options": {}}}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"result":null}"#,
            json!({"jsonrpc": "2.0", "id": 3, "result": null}),
        ),
    ];
    for (body, expected) in cases {
        let message = check(body.as_bytes()).expect("a JSON-RPC message");
        let out = with_params(body.as_bytes().to_vec(), message);
        let got: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(got, expected, "{body}");
        if expected.get("params").is_none_or(|p| !p.is_null()) {
            assert_eq!(out, body.as_bytes(), "passed as it came: {body}");
        }
    }
}
