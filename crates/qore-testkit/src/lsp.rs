//! [`LspClient`]: an editor's side of LSP over a byte stream, for driving `qore lsp` (a child
//! process) or the server library (pipes) in tests and benches.
//!
//! Contract:
//! - frames are `Content-Length` framed JSON; [`LspClient::send_raw`] writes any bytes (for
//!   malformed input);
//! - [`LspClient::response`] waits for the response to one request id, keeping everything else
//!   that arrives in order ([`LspClient::seen`]); a server request is answered as it arrives:
//!   `workspace/applyEdit` with `{"applied": true}` (or what [`LspClient::apply_edit_reply`]
//!   says), anything else with a `null` result;
//! - every wait is bounded ([`LspClient::limit`], 20 s by default) and panics saying what it
//!   waited for: a hung server fails the test instead of hanging it.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The client side of one LSP connection.
pub struct LspClient {
    writer: Box<dyn AsyncWrite + Unpin + Send>,
    inbox: mpsc::UnboundedReceiver<Value>,
    next_id: i64,
    /// Messages that arrived while waiting for something else, in arrival order.
    pub seen: Vec<Value>,
    /// The result sent back for `workspace/applyEdit`.
    pub apply_edit_reply: Value,
    /// How long any wait lasts at most.
    pub limit: Duration,
    child: Option<tokio::process::Child>,
}

/// `body` framed.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Read frames from `reader` into `inbox` until the stream ends or breaks.
async fn read_frames<R: tokio::io::AsyncRead + Unpin>(
    reader: R,
    inbox: mpsc::UnboundedSender<Value>,
) {
    let mut reader = BufReader::new(reader);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let Some(length) = length else { return };
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let value = serde_json::from_slice(&body)
            .unwrap_or_else(|_| json!({"unparsable": String::from_utf8_lossy(&body)}));
        if inbox.send(value).is_err() {
            return;
        }
    }
}

impl LspClient {
    /// A client over a server's output `reader` and input `writer`.
    pub fn over<R, W>(reader: R, writer: W) -> LspClient
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, inbox) = mpsc::unbounded_channel();
        tokio::spawn(read_frames(reader, tx));
        LspClient {
            writer: Box::new(writer),
            inbox,
            next_id: 1,
            seen: Vec::new(),
            apply_edit_reply: json!({"applied": true}),
            limit: Duration::from_secs(20),
            child: None,
        }
    }

    /// Spawn `cmd` (its stdin and stdout become the connection; stderr is inherited).
    pub fn spawn(mut cmd: tokio::process::Command) -> std::io::Result<LspClient> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("the child has no stdin or stdout"));
        };
        let mut client = LspClient::over(stdout, stdin);
        client.child = Some(child);
        Ok(client)
    }

    /// Write `bytes` as they are.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer
            .write_all(bytes)
            .await
            .expect("the server reads its input");
        self.writer
            .flush()
            .await
            .expect("the server reads its input");
    }

    /// Send one JSON-RPC message.
    pub async fn send(&mut self, message: &Value) {
        self.send_raw(&frame(message.to_string().as_bytes())).await;
    }

    /// Send a request; its id.
    pub async fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&message).await;
        id
    }

    /// Send a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// The next message from the server, answering server requests (see the module doc);
    /// `None` when the server's output ended.
    pub async fn next(&mut self) -> Option<Value> {
        let message = tokio::time::timeout(self.limit, self.inbox.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "no message from the server within {:?}; seen: {:?}",
                    self.limit, self.seen
                )
            })?;
        if let (Some(id), Some(method)) = (message.get("id"), message.get("method")) {
            let result = match method.as_str() {
                Some("workspace/applyEdit") => self.apply_edit_reply.clone(),
                _ => Value::Null,
            };
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            self.send(&reply).await;
        }
        Some(message)
    }

    /// Wait for the first message `matches` accepts; the others are kept in [`Self::seen`].
    pub async fn wait_for(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.seen.iter().position(&matches) {
            return self.seen.remove(at);
        }
        loop {
            let Some(message) = self.next().await else {
                panic!(
                    "the server's output ended before {what}; seen: {:?}",
                    self.seen
                );
            };
            if matches(&message) {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// The response to request `id` (the whole message: `result` or `error`).
    pub async fn response(&mut self, id: i64) -> Value {
        let what = format!("the response to request {id}");
        self.wait_for(&what, |m| {
            m.get("id") == Some(&json!(id)) && m.get("method").is_none()
        })
        .await
    }

    /// Send a request and wait for its response.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        self.response(id).await
    }

    /// `initialize` with `root` (a directory) and `options`, then `initialized`; the result.
    pub async fn initialize(&mut self, root: &std::path::Path, options: Value) -> Value {
        let root_uri = file_uri(root);
        let params = json!({
            "processId": null,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "root"}],
            "capabilities": {"workspace": {"applyEdit": true}},
            "initializationOptions": options,
        });
        let reply = self.call("initialize", params).await;
        self.notify("initialized", json!({})).await;
        reply
    }

    /// `textDocument/didOpen` of `path` with `text`; its URI.
    pub async fn open(&mut self, path: &std::path::Path, text: &str) -> String {
        let uri = file_uri(path);
        let doc = json!({"uri": uri, "languageId": "", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": doc}))
            .await;
        uri
    }

    /// `shutdown`, then `exit`; the child's exit code when it is a process.
    pub async fn shutdown(&mut self) -> Option<i32> {
        let reply = self.call("shutdown", Value::Null).await;
        assert!(reply.get("error").is_none(), "{reply}");
        self.notify("exit", Value::Null).await;
        let child = self.child.as_mut()?;
        let status = tokio::time::timeout(self.limit, child.wait())
            .await
            .expect("the server exits after `exit`")
            .expect("the server's status");
        status.code()
    }
}

/// `file://` URI of an absolute path (spaces and other unsafe bytes escaped).
pub fn file_uri(path: &std::path::Path) -> String {
    let mut out = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}
