//! The local model server: SmolLM2-135M-Instruct served by llama.cpp's own HTTP server
//! (the `xllamacpp` wheel) on 127.0.0.1, OpenAI-compatible under `/v1`.
//!
//! Promises: [`ensure_running`] answers with the server's base URL and model id, starting
//! the server first when nothing answers on the port. The work is done by
//! `scripts/local-model.sh` (venv under the cache dir, pinned packages, one thread, detached
//! server, a lock against concurrent starts); this binary carries that script and its
//! launcher and writes them to `$QORE_CACHE_DIR/bin` so it works from any directory.
//! Progress goes to the caller's stderr; nothing is written to stdout. Callers cap the
//! answers of requests to it at [`DEFAULT_MAX_TOKENS`] unless told otherwise, and a request
//! that no agent shapes gets [`sampling`], which keeps the tiny model out of repetition loops.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use qore_core::ErrorInfo;

const SCRIPT: &str = include_str!("../../../scripts/local-model.sh");
const LAUNCHER: &str = include_str!("../../../scripts/llama_server.py");
const SCRIPT_LIB: &str = include_str!("../../../scripts/server-lib.sh");

/// The model id the local server lists.
pub const MODEL_ID: &str = "smollm2-135m-instruct";

/// The output cap of requests to the local server when the caller sets none: the server's
/// own default is no cap (`n_predict` -1), and the tiny model can ramble on an odd prompt
/// for minutes.
pub const DEFAULT_MAX_TOKENS: u32 = 512;

/// The sampling of a request to the local server that no agent profile shapes: llama.cpp's
/// DRY sampler (which penalises continuing a run of tokens already in the context) and a
/// mild repeat penalty. Without them SmolLM2-135M loops ("a fleeting beauty, a fleeting
/// beauty, …") until the output cap on about one short prompt in six. The bundled
/// `local-chat` profile sends the same fields from its `[body]`.
pub fn sampling() -> serde_json::Map<String, serde_json::Value> {
    let fields = serde_json::json!({
        "repeat_penalty": 1.1,
        "dry_multiplier": 1.5,
        "dry_base": 1.75,
        "dry_allowed_length": 2,
    });
    match fields {
        serde_json::Value::Object(fields) => fields,
        _ => serde_json::Map::new(),
    }
}

/// The output cap of a request: the one asked for, else [`DEFAULT_MAX_TOKENS`] when the
/// request goes to the local server (`local`), else none (the provider's default).
pub fn max_tokens(requested: Option<u32>, local: bool) -> Option<u32> {
    requested.or(local.then_some(DEFAULT_MAX_TOKENS))
}

/// Port of the local server (`QORE_LOCAL_PORT`, default 18080).
pub fn port() -> u16 {
    std::env::var("QORE_LOCAL_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(18080)
}

/// Base URL of the local server, OpenAI style (ends in `/v1`).
pub fn base_url() -> String {
    format!("http://127.0.0.1:{}/v1", port())
}

/// The base URL at which the local server speaks `protocol` (a name accepted by
/// [`crate::protocols::by_name`]), or `None` when llama.cpp's server does not speak it.
pub fn base_url_for(protocol: &str) -> Option<String> {
    let wire = crate::protocols::by_name(protocol)?;
    match wire.name() {
        "openai-chat" | "openai-responses" | "llamacpp" | "mistral" => Some(base_url()),
        // Anthropic's paths carry their own `v1/`.
        "anthropic" => Some(format!("http://127.0.0.1:{}", port())),
        _ => None,
    }
}

/// Where the local server's venv, logs and scripts live.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("QORE_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    use etcetera::BaseStrategy as _;
    etcetera::choose_base_strategy()
        .map_or_else(|_| std::env::temp_dir(), |dirs| dirs.cache_dir())
        .join("qore")
}

/// True when the local server answers `/health` with 200.
pub async fn is_running() -> bool {
    let url = format!("http://127.0.0.1:{}/health", port());
    let Ok(client) = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build()
    else {
        return false;
    };
    matches!(client.get(url).send().await, Ok(r) if r.status().is_success())
}

/// Start the local server unless it is running; returns its base URL.
pub async fn ensure_running() -> Result<String, ErrorInfo> {
    if is_running().await {
        return Ok(base_url());
    }
    run_script("start").await?;
    Ok(base_url())
}

/// Stop the local server if this machine's script started it.
pub async fn stop() -> Result<(), ErrorInfo> {
    run_script("stop").await
}

async fn run_script(command: &str) -> Result<(), ErrorInfo> {
    let (script, launcher) = write_scripts()?;
    let status = tokio::process::Command::new("bash")
        .arg(&script)
        .arg(command)
        .env("QORE_LAUNCHER", &launcher)
        .env("QORE_CACHE_DIR", cache_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .await
        .map_err(|err| ErrorInfo::config(format!("cannot run bash for the local model: {err}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(ErrorInfo::config(format!(
            "the local model server did not {command} ({status}); see the messages above and {}",
            cache_dir().join("server.log").display()
        )))
    }
}

/// Write the embedded scripts to the cache dir (atomically, only when they changed).
fn write_scripts() -> Result<(PathBuf, PathBuf), ErrorInfo> {
    let dir = cache_dir().join("bin");
    std::fs::create_dir_all(&dir)
        .map_err(|err| ErrorInfo::config(format!("cannot create {}: {err}", dir.display())))?;
    let script = dir.join("local-model.sh");
    let launcher = dir.join("llama_server.py");
    let lib = dir.join("server-lib.sh");
    for (path, text) in [(&script, SCRIPT), (&launcher, LAUNCHER), (&lib, SCRIPT_LIB)] {
        if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
            continue;
        }
        let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|err| {
            ErrorInfo::config(format!("cannot write in {}: {err}", dir.display()))
        })?;
        std::io::Write::write_all(&mut tmp, text.as_bytes())
            .and_then(|()| tmp.persist(path).map(drop).map_err(|err| err.error))
            .map_err(|err| ErrorInfo::config(format!("cannot write {}: {err}", path.display())))?;
    }
    Ok((script, launcher))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_local_server_speaks_the_llama_cpp_protocols_only() {
        let base = super::base_url();
        assert_eq!(
            super::base_url_for("openai").as_deref(),
            Some(base.as_str())
        );
        assert_eq!(
            super::base_url_for("llamacpp").as_deref(),
            Some(base.as_str())
        );
        let anthropic = super::base_url_for("anthropic").unwrap();
        assert!(!anthropic.ends_with("/v1"), "{anthropic}");
        assert_eq!(super::base_url_for("gemini"), None);
        assert_eq!(super::base_url_for("ollama"), None);
        assert_eq!(super::base_url_for("nope"), None);
    }
}
