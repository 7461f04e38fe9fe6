//! The stdio guard in front of tower-lsp-server: tower's own read loop ends on a frame whose
//! body is not JSON, so the client's bytes go through [`read_frame`] here first.
//!
//! Promises:
//! - a frame whose body is a JSON-RPC request, notification or response is passed to tower
//!   unchanged (re-framed with `Content-Length` only), except that a request or notification
//!   without `params` gets `"params": null`: tower reads both as "no params" for methods that
//!   take none, and handlers that take any JSON (the Copilot stubs) then answer instead of
//!   refusing a missing field;
//! - a frame whose body is not JSON is answered with a ParseError (-32700, id null), a JSON
//!   body that is no JSON-RPC message with InvalidRequest (-32600, its `id` when it has a
//!   usable one, else null), a header block without a usable `Content-Length` with a
//!   ParseError; serving goes on after each;
//! - tower handles up to [`CONCURRENCY`] messages at once, so a few completions stalled at a
//!   slow provider do not hold back the rest;
//! - everything written to the output (tower's frames and these replies) goes through one
//!   writer task, a whole frame at a time: frames never interleave;
//! - serving ends when tower ends (after `exit`, or after the input ends and tower has
//!   answered what it was given), with the output flushed. A cut-off final frame ends the
//!   input like EOF does.

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, LanguageServer, LspService, Server};

use crate::error::{FrameError, LspError};
use crate::frame::{encode, read_frame};

/// Room in the pipes between the guard and tower.
const PIPE_BYTES: usize = 1 << 16;

/// Messages tower handles at once (its default is 4): completions stalled at a slow provider
/// must not hold back the document changes and newer requests that cancel them.
const CONCURRENCY: usize = 32;

/// Serve `service` over `input`/`output` through the guard (see the module doc).
pub async fn serve_guarded<S, I, O>(
    input: I,
    output: O,
    service: LspService<S>,
    socket: ClientSocket,
) -> Result<(), LspError>
where
    S: LanguageServer,
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let (to_tower, tower_in) = tokio::io::duplex(PIPE_BYTES);
    let (tower_out, from_tower) = tokio::io::duplex(PIPE_BYTES);
    let (frames, outbox) = mpsc::unbounded_channel::<Vec<u8>>();

    let tower = async move {
        Server::new(tower_in, tower_out, socket)
            .concurrency_level(CONCURRENCY)
            .serve(service)
            .await;
    };
    // The input side holds a weak sender: once tower's output has ended, the writer stops
    // after the last queued frame even while the client's input is still open.
    let inbound = relay_client_input(input, to_tower, frames.downgrade());
    let relay_out = relay_tower_output(from_tower, frames);
    let writer = write_all_frames(outbox, output);

    let rest = async move {
        let ((), (), written) = tokio::join!(tower, relay_out, writer);
        written
    };
    tokio::pin!(rest);
    tokio::select! {
        written = &mut rest => written,
        // The input ended (its pipe to tower is closed now): tower finishes what it has.
        _ = inbound => rest.await,
    }
}

/// Frames from the client to tower, answering the ones tower would choke on.
async fn relay_client_input<I: AsyncRead + Unpin>(
    input: I,
    mut to_tower: tokio::io::DuplexStream,
    replies: mpsc::WeakUnboundedSender<Vec<u8>>,
) {
    let reply = |frame: Vec<u8>| {
        if let Some(replies) = replies.upgrade() {
            let _ = replies.send(frame);
        }
    };
    let mut input = BufReader::new(input);
    loop {
        let body = match read_frame(&mut input).await {
            Ok(Some(body)) => body,
            Ok(None) => return,
            Err(FrameError::Header(why)) => {
                tracing::warn!("{why}");
                reply(error_frame(Value::Null, -32700, "Parse error: bad header"));
                continue;
            }
            Err(err) => {
                tracing::warn!("the client's input ended: {err}");
                return;
            }
        };
        match check(&body) {
            Ok(message) => {
                let body = with_params(body, message);
                if to_tower.write_all(&encode(&body)).await.is_err() {
                    return; // tower has stopped (after `exit`)
                }
            }
            Err(frame) => reply(frame),
        }
    }
}

/// `body`, or, for a request or notification without `params`, `message` with
/// `"params": null`.
fn with_params(body: Vec<u8>, mut message: Value) -> Vec<u8> {
    match message.as_object_mut() {
        Some(fields) if fields.contains_key("method") && !fields.contains_key("params") => {
            fields.insert("params".into(), Value::Null);
            message.to_string().into_bytes()
        }
        _ => body,
    }
}

/// The message of a JSON-RPC `body`, else the error frame that answers it.
fn check(body: &[u8]) -> Result<Value, Vec<u8>> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(_) => return Err(error_frame(Value::Null, -32700, "Parse error: not JSON")),
    };
    let is_message = serde_json::from_value::<Request>(value.clone()).is_ok()
        || serde_json::from_value::<Response>(value.clone()).is_ok();
    if is_message {
        return Ok(value);
    }
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    Err(error_frame(
        id,
        -32600,
        "Invalid request: not a JSON-RPC 2.0 message",
    ))
}

/// A framed JSON-RPC error response.
fn error_frame(id: Value, code: i64, message: &str) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    encode(body.to_string().as_bytes())
}

/// Tower's frames, whole, to the writer.
async fn relay_tower_output(
    from_tower: tokio::io::DuplexStream,
    frames: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut from_tower = BufReader::new(from_tower);
    while let Ok(Some(body)) = read_frame(&mut from_tower).await {
        if frames.send(encode(&body)).is_err() {
            return;
        }
    }
}

/// The one writer: each frame whole, flushed.
async fn write_all_frames<O: AsyncWrite + Unpin>(
    mut outbox: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: O,
) -> Result<(), LspError> {
    while let Some(frame) = outbox.recv().await {
        output.write_all(&frame).await.map_err(LspError::Write)?;
        output.flush().await.map_err(LspError::Write)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
