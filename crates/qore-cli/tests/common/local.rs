//! The local model server (SmolLM2-135M on llama.cpp) behind a recording proxy.

use std::time::Duration;

use qore_testkit::RecordingProxy;

use super::{command, run_with_limit};

/// Room for the first install of the local server.
pub const FIRST_START: Duration = Duration::from_secs(900);

/// The local server up (installed and started by `qore local start` if needed), and a
/// recording proxy in front of it.
pub async fn proxied_local_server() -> RecordingProxy {
    let started = run_with_limit(command(&["local", "start"]), FIRST_START).await;
    assert_eq!(started.code, Some(0), "{started:?}");
    let upstream = std::net::SocketAddr::from(([127, 0, 0, 1], qore_client::local::port()));
    RecordingProxy::start(upstream).await.expect("proxy starts")
}

/// The proxy's port, for `QORE_LOCAL_PORT`.
pub fn proxy_port(proxy: &RecordingProxy) -> String {
    proxy
        .url()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The tool-calling local server (`scripts/tool-model.sh`: SmolLM2-135M under
/// llama-cpp-python's `chatml-function-calling`, installed and started if needed), and a
/// recording proxy in front of it.
pub async fn proxied_tool_server() -> RecordingProxy {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/tool-model.sh");
    let mut start = tokio::process::Command::new("bash");
    start.args([script, "start"]);
    let started = run_with_limit(start, FIRST_START).await;
    assert_eq!(started.code, Some(0), "{started:?}");
    let port: u16 = std::env::var("QORE_TOOL_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(18081);
    let upstream = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    RecordingProxy::start(upstream).await.expect("proxy starts")
}
