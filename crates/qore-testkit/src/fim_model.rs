//! The local fill-in-the-middle model server of `scripts/fim-model.sh` (SmolLM2 with FIM
//! token ids in its GGUF, served by llama.cpp) behind a [`RecordingProxy`], for tests of the
//! real `/infill` wire.
//!
//! Promise: [`proxied`] returns once the server answers (started, and installed on the first
//! run, by the script) with a proxy in front of it and the proxy's port, what
//! `QORE_LOCAL_PORT` takes for the local provider to reach it. A failing script is a panic
//! naming it: this is test support.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::RecordingProxy;

/// The server up and a recording proxy in front of it; the proxy and its port.
pub async fn proxied() -> (RecordingProxy, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/fim-model.sh");
    let status = Command::new("bash")
        .arg(&script)
        .arg("start")
        .stdin(Stdio::null())
        .status()
        .unwrap_or_else(|err| panic!("cannot run bash {}: {err}", script.display()));
    assert!(status.success(), "{} start: {status}", script.display());
    let port = std::env::var("QORE_FIM_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(18082);
    let proxy = RecordingProxy::start(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .unwrap_or_else(|err| panic!("the proxy to port {port} does not start: {err}"));
    let proxy_port = proxy
        .url()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    (proxy, proxy_port)
}
