//! Ctrl-C in the middle of a stream: a raw loopback server sends the response head and one
//! text chunk, then stalls with the connection open; SIGINT must end `qore` at once with
//! exit code 130.

mod common;

use std::time::{Duration, Instant};

use common::command;
use common::raw::read_request;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

const FIRST_TEXT: &str = "The first words";
const FIRST_THOUGHT: &str = "Let me think";

/// A server for one request: SSE head (chunked), one chunk carrying `delta`, then silence
/// until the client hangs up. Returns its base URL and the task (which yields the request
/// head).
async fn stalling_server(delta: Value) -> (String, JoinHandle<String>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let head = read_request(&mut socket).await;
        let chunk = json!({
            "id": "chatcmpl-stall",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": null}],
        });
        let frame = format!("data: {chunk}\n\n");
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
             transfer-encoding: chunked\r\n\r\n{:x}\r\n{frame}\r\n",
            frame.len()
        );
        socket
            .write_all(response.as_bytes())
            .await
            .expect("write the first chunk");
        // Stall: hold the connection, write nothing, until the client goes away.
        let mut sink = [0u8; 1024];
        while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
        head
    });
    (url, task)
}

/// Read from `reader` into `seen` until it contains `needle` (10 s at most).
async fn read_until(reader: &mut (impl AsyncRead + Unpin), seen: &mut Vec<u8>, needle: &str) {
    let wait = async {
        let mut piece = [0u8; 1024];
        while !String::from_utf8_lossy(seen).contains(needle) {
            let n = reader.read(&mut piece).await.expect("read the output");
            assert!(n > 0, "the output closed before {needle:?} appeared");
            seen.extend_from_slice(&piece[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("{needle:?} did not appear"));
}

/// The first chunk's delta: text, or reasoning.
fn text_delta() -> Value {
    json!({"role": "assistant", "content": FIRST_TEXT})
}

fn reasoning_delta() -> Value {
    json!({"role": "assistant", "reasoning_content": FIRST_THOUGHT})
}

/// Run `qore run` against a stalling server sending `delta`, interrupt it once `needle` is
/// out (on stderr when `on_stderr`, else stdout). Returns (exit code, stdout, stderr).
async fn interrupted_run(
    extra: &[&str],
    delta: Value,
    needle: &str,
    on_stderr: bool,
) -> (Option<i32>, String, String) {
    let (url, server) = stalling_server(delta).await;
    let mut args = vec!["run", "--url", url.as_str(), "--model", "m"];
    args.extend_from_slice(extra);
    args.push("hi");
    let mut child = command(&args).spawn().expect("spawn qore");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let mut seen = Vec::new();
    let mut err = Vec::new();
    if on_stderr {
        read_until(&mut stderr, &mut err, needle).await;
    } else {
        read_until(&mut stdout, &mut seen, needle).await;
    }

    let pid = child.id().expect("pid").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("run kill");
    assert!(sent.success());
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .expect("qore ends within 5 s of SIGINT")
        .expect("wait");
    assert!(started.elapsed() < Duration::from_secs(5));

    stdout.read_to_end(&mut seen).await.expect("rest of stdout");
    stderr.read_to_end(&mut err).await.expect("stderr");
    let head = tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the connection is closed")
        .expect("server task");
    assert!(
        head.starts_with("POST /v1/chat/completions "),
        "server got {head:?}"
    );
    (
        status.code(),
        String::from_utf8(seen).expect("UTF-8"),
        String::from_utf8(err).expect("UTF-8"),
    )
}

#[tokio::test]
async fn ctrl_c_mid_stream_exits_130() {
    let (code, stdout, stderr) = interrupted_run(&[], text_delta(), FIRST_TEXT, false).await;
    assert_eq!(code, Some(130), "stdout {stdout:?}, stderr {stderr:?}");
    assert_eq!(stdout, format!("{FIRST_TEXT}\n"));
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr:?}");
    assert!(lines[0].contains("cancelled"), "{stderr:?}");
}

#[tokio::test]
async fn ctrl_c_mid_stream_with_json_ends_with_cancelled() {
    let (code, stdout, stderr) =
        interrupted_run(&["--json"], text_delta(), FIRST_TEXT, false).await;
    assert_eq!(code, Some(130), "stdout {stdout:?}, stderr {stderr:?}");
    assert!(stderr.contains("cancelled"), "{stderr:?}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(
        lines.last(),
        Some(&json!({"type": "cancelled"})),
        "{stdout}"
    );
    assert!(
        lines.contains(&json!({"type": "text_delta", "text": FIRST_TEXT})),
        "{stdout}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l["type"] == "result" || l["type"] == "error"),
        "{stdout}"
    );
}

#[tokio::test]
async fn ctrl_c_while_reasoning_ends_the_reasoning_line_first() {
    let (code, stdout, stderr) = interrupted_run(&[], reasoning_delta(), FIRST_THOUGHT, true).await;
    assert_eq!(code, Some(130), "stdout {stdout:?}, stderr {stderr:?}");
    assert_eq!(stdout, "");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr:?}");
    assert_eq!(lines[0], FIRST_THOUGHT);
    assert!(lines[1].contains("cancelled"), "{stderr:?}");
}
