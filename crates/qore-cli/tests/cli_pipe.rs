//! `qore` at the ends of pipes and slow servers: a reader that goes away early
//! (`qore run … | head -c 10`, `qore models | true`) ends the request and the process
//! quietly; a server that stalls ends the run at the idle timeout the command line gives.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::config::ConfigDir;
use common::raw::read_request;
use common::{command, run_cmd};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// What `qore` exits with when its stdout was closed early.
const CLOSED_STDOUT: i32 = 141;

/// A server for one request that streams a text chunk every 20 ms for as long as the client
/// listens. The task ends when the client hangs up, yielding the chunks written.
async fn endless_server() -> (String, JoinHandle<usize>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        read_request(&mut socket).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                    transfer-encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.expect("head");
        let mut written = 0;
        loop {
            let chunk = json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
                "choices": [{"index": 0, "delta": {"content": "more words "}, "finish_reason": null}]});
            let frame = format!("data: {chunk}\n\n");
            let piece = format!("{:x}\r\n{frame}\r\n", frame.len());
            if socket.write_all(piece.as_bytes()).await.is_err() {
                return written;
            }
            written += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    (url, task)
}

#[tokio::test]
async fn a_closed_stdout_ends_the_request_and_exits_quietly() {
    let (url, server) = endless_server().await;
    let mut cmd = command(&["run", "--url", &url, "--model", "m", "Talk forever"]);
    let mut child = cmd.spawn().expect("qore starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 10];
    stdout
        .read_exact(&mut first)
        .await
        .expect("the answer starts");
    // `head -c 10`: the reader goes away.
    drop(stdout);
    let mut stderr = String::new();
    let mut err_pipe = child.stderr.take().expect("stderr");
    let status = tokio::time::timeout(Duration::from_secs(30), async {
        err_pipe.read_to_string(&mut stderr).await.expect("stderr");
        child.wait().await.expect("qore ends")
    })
    .await
    .expect("qore ends once its stdout is closed");
    assert_eq!(status.code(), Some(CLOSED_STDOUT), "stderr: {stderr}");
    assert!(stderr.is_empty(), "nothing is printed: {stderr:?}");
    let chunks = tokio::time::timeout(Duration::from_secs(30), server)
        .await
        .expect("the server sees the connection closed")
        .expect("server task");
    assert!(chunks > 0);
}

#[tokio::test]
async fn models_into_a_closed_pipe_exits_quietly() {
    // More than a pipe buffer of listing, so writing into the closed pipe must fail.
    let data: Vec<_> = (0..4000)
        .map(|n| json!({"id": format!("model-with-a-long-name-{n:05}"), "object": "model"}))
        .collect();
    let body = json!({"object": "list", "data": data}).to_string();
    let server = qore_testkit::ReplayServer::start(vec![qore_testkit::Reply::json(200, body)])
        .await
        .expect("server");
    let url = format!("{}/v1", server.url());
    let mut cmd = command(&["models", "--url", &url]);
    cmd.stdout(Stdio::piped());
    let mut child = cmd.spawn().expect("qore starts");
    // `| true`: the reader is gone before qore writes.
    drop(child.stdout.take());
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("qore ends")
        .expect("qore runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(CLOSED_STDOUT),
        "stderr: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// A server that takes requests and never answers, until the client hangs up; yields how
/// many requests it read.
async fn silent_server() -> (String, JoinHandle<usize>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        read_request(&mut socket).await;
        let mut sink = [0u8; 1024];
        while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
        1
    });
    (url, task)
}

#[tokio::test]
async fn a_stalled_server_ends_the_run_at_the_command_lines_idle_timeout() {
    // Each way of giving the timeout; the provider file's 600 s would outlast the test.
    for way in ["flag", "env", "agent"] {
        let (url, server) = silent_server().await;
        let provider = format!(
            "name = \"slow\"\nprotocol = \"openai-chat\"\nurl = \"{url}\"\nidle_timeout_secs = 600\n"
        );
        let config = ConfigDir::new(&[
            ("providers/slow.toml", &provider),
            (
                "agents/slow.toml",
                "name = \"slow-chat\"\nextends = \"openai-chat\"\nprovider = \"slow\"\nmodel = \"m\"\n",
            ),
        ]);
        let mut args = vec!["run", "--tools", "off"];
        match way {
            "agent" => args.extend(["--agent", "slow-chat", "--idle-timeout", "1"]),
            "flag" => args.extend(["--url", &url, "--model", "m", "--idle-timeout", "0.5"]),
            _ => args.extend(["--url", &url, "--model", "m"]),
        }
        args.push("Hello?");
        let mut cmd = command(&args);
        cmd.env("QORE_CONFIG_DIR", &config.0);
        if way == "env" {
            cmd.env("QORE_IDLE_TIMEOUT", "1");
        }
        let run = run_cmd(cmd).await;
        assert_eq!(run.code, Some(1), "{way}: {run:?}");
        let line = run.one_stderr_line();
        assert!(line.contains("(Network)"), "{way}: {line}");
        assert!(line.contains("idle timeout"), "{way}: {line}");
        assert!(
            line.contains(&format!("{url}/chat/completions")),
            "{way}: {line}"
        );
        assert_eq!(server.await.expect("server task"), 1, "{way}");
    }
}

/// A listener whose accept queue is full: Linux drops further SYNs, so a connect hangs until
/// the client gives up (backlog 0 holds one connection, which the test keeps).
#[tokio::test]
async fn a_server_that_never_accepts_ends_the_run_at_the_connect_timeout() {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .expect("bind");
    let listener = socket.listen(0).expect("listen");
    let addr = listener.local_addr().expect("address");
    let _held = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the one connection the queue holds");
    let url = format!("http://{addr}/v1");
    let args = ["run", "--tools", "off", "--url", &url, "--model", "m"];
    let timeouts = [
        "--connect-timeout",
        "0.3",
        "--idle-timeout",
        "600",
        "Hello?",
    ];
    let run = common::qore(&[&args[..], &timeouts[..]].concat()).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    let line = run.one_stderr_line();
    assert!(line.contains("(Network)"), "{line}");
    // The flag's value, not the default's, is what ended each attempt.
    assert!(
        line.contains("no connection within the connect timeout (0.3 s)"),
        "{line}"
    );
    drop(listener);
}

#[tokio::test]
async fn timeouts_that_are_not_seconds_are_usage_errors() {
    for bad in [["--idle-timeout", "soon"], ["--connect-timeout", "0"]] {
        let mut args = vec!["run", "--url", "http://127.0.0.1:9/v1", "--model", "m"];
        args.extend(bad);
        args.push("hi");
        let run = common::qore(&args).await;
        assert_eq!(run.code, Some(2), "{bad:?}: {run:?}");
        assert!(run.stderr.contains("positive number of seconds"), "{run:?}");
    }
}
