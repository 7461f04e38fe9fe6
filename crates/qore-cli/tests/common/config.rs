//! A config dir of a test's own (`QORE_CONFIG_DIR`), and running `qore` with it.

use std::path::PathBuf;

use serde_json::Value;

use qore_testkit::{ReplayServer, Reply};

use super::turns::MODEL;
use super::{command, run_cmd, Run};

/// A config dir, removed when dropped.
pub struct ConfigDir(pub PathBuf);

impl ConfigDir {
    pub fn new(files: &[(&str, &str)]) -> ConfigDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "qore-cli-agents-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        ConfigDir(dir)
    }
}

impl Drop for ConfigDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub async fn qore_in(config: &ConfigDir, args: &[&str]) -> Run {
    let mut cmd = command(args);
    cmd.env("QORE_CONFIG_DIR", &config.0);
    run_cmd(cmd).await
}

/// `qore run --tools MODE --project PROJECT` with `config` against a loopback model
/// answering `replies`; the run and the request bodies the model received.
pub async fn run_tools_in(
    config: &ConfigDir,
    project: &std::path::Path,
    mode: &str,
    replies: Vec<Reply>,
) -> (Run, Vec<Value>) {
    let server = ReplayServer::start(replies).await.expect("replay server");
    let url = format!("{}/v1", server.url());
    let project = project.to_str().expect("UTF-8 path");
    let args = [
        "run",
        "--url",
        &url,
        "--model",
        MODEL,
        "--tools",
        mode,
        "--project",
        project,
        "Go.",
    ];
    let mut cmd = command(&args);
    cmd.env("QORE_CONFIG_DIR", &config.0);
    let run = run_cmd(cmd).await;
    let bodies = server
        .requests()
        .iter()
        .map(|r| r.json().expect("JSON body"))
        .collect();
    (run, bodies)
}
