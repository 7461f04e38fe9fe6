//! The harness of `cli_scale`: several real `qore serve` processes on one real PostgreSQL
//! behind a real HAProxy, started and stopped by `scripts/scale.sh` (the script
//! docs/deploy.md gives users), plus requests through the load balancer over loopback.
//!
//! Promises: [`Scale::up`] returns a running set or panics with the script's stderr; the set
//! is stopped (`scale.sh down`) when the value is dropped, and by itself once this test
//! process has exited (`QORE_SCALE_OWNER_PID`), so no run leaves processes behind. One
//! PostgreSQL server ([`shared_pg`]) serves the cases that do not stop their database; each
//! gets a fresh database on it.
#![allow(dead_code)]

pub mod load;
pub mod streams;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use qore_testkit::postgres::TestPostgres;
use serde_json::Value;

use crate::cli_serve_support::{Answer, Headers, World};
use crate::common::QORE;

/// How long any one request through the load balancer may take before the test fails.
pub const REQUEST_LIMIT: Duration = Duration::from_secs(30);

static PG: OnceLock<Result<TestPostgres, String>> = OnceLock::new();

/// The binary's one PostgreSQL server (started on first use).
pub fn shared_pg() -> &'static TestPostgres {
    match PG.get_or_init(TestPostgres::start) {
        Ok(pg) => pg,
        Err(why) => panic!("no PostgreSQL server for the tests: {why}"),
    }
}

/// A fresh empty database on [`shared_pg`]: its URL.
pub fn fresh_database() -> String {
    shared_pg()
        .fresh_database()
        .unwrap_or_else(|why| panic!("cannot create a database: {why}"))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/scale.sh")
}

/// `qore ARGS` on the store at `url`, in `world` (to its end): the run, after checking that
/// it exited 0.
pub async fn qore_on(world: &World, url: &str, args: &[&str]) -> crate::common::Run {
    let args = [args, &["--store", url][..]].concat();
    let run = world.qore(&args).await;
    assert_eq!(run.code, Some(0), "qore {args:?}: {run:?}");
    run
}

/// A running `scripts/scale.sh up` set.
pub struct Scale {
    dir: tempfile::TempDir,
    /// The load balancer: `http://127.0.0.1:PORT`.
    pub url: String,
    pub http: reqwest::Client,
}

impl Scale {
    /// `scale.sh up DIR --processes N [--store URL] -- --drain-timeout 1` with `world`'s
    /// config and data dirs and the binary under test.
    pub fn up(world: &World, processes: usize, store: Option<&str>) -> Scale {
        let dir = tempfile::Builder::new()
            .prefix("qore-scale-")
            .tempdir()
            .expect("a temporary directory");
        let mut cmd = Command::new("bash");
        cmd.arg(script())
            .arg("up")
            .arg(dir.path())
            .args(["--processes", &processes.to_string()]);
        if let Some(url) = store {
            cmd.args(["--store", url]);
        }
        cmd.args(["--", "--drain-timeout", "1"])
            .env("QORE_BIN", QORE)
            .env("QORE_CONFIG_DIR", &world.config)
            .env("QORE_DATA_DIR", &world.data)
            .env("QORE_SCALE_OWNER_PID", std::process::id().to_string())
            .env_remove("QORE_LOG")
            .env_remove("QORE_STORE_URL");
        let out = cmd.output().expect("bash runs scale.sh");
        let url = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success() && url.starts_with("http://127.0.0.1:"),
            "scale.sh up failed ({:?}): stdout {url:?}\n{stderr}",
            out.status
        );
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("an HTTP client");
        Scale { dir, url, http }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A file of the set's directory, trimmed.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir().join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .trim()
            .to_owned()
    }

    /// The store's URL.
    pub fn store(&self) -> String {
        self.read("store")
    }

    /// Process `i`'s (1-based, as in `x-qore-backend: qI`) pid.
    pub fn pid(&self, i: usize) -> u32 {
        let text = self.read(&format!("qore-{i}.pid"));
        text.parse()
            .unwrap_or_else(|e| panic!("qore-{i}.pid: {text:?}: {e}"))
    }

    /// Process `i`'s own URL.
    pub fn process_url(&self, i: usize) -> String {
        self.read(&format!("qore-{i}.url"))
    }

    /// Process `i`'s stderr so far.
    pub fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir().join(format!("qore-{i}.log"))).unwrap_or_default()
    }

    /// Every process's log and HAProxy's, for failure messages.
    pub fn logs(&self) -> String {
        let mut all = String::new();
        for entry in std::fs::read_dir(self.dir())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".log") {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                all += &format!("--- {name}\n{text}\n");
            }
        }
        all
    }

    /// `scale.sh restart DIR I`: process `i` stopped if it runs, started again on its address.
    pub fn restart(&self, i: usize) {
        let out = Command::new("bash")
            .arg(script())
            .arg("restart")
            .arg(self.dir())
            .arg(i.to_string())
            .env("QORE_SCALE_STOP_WAIT", "5")
            .output()
            .expect("bash runs scale.sh");
        assert!(
            out.status.success(),
            "scale.sh restart {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `scale.sh status DIR`: its exit code and stdout.
    pub fn status(&self) -> (Option<i32>, String) {
        let out = Command::new("bash")
            .arg(script())
            .arg("status")
            .arg(self.dir())
            .output()
            .expect("bash runs scale.sh");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// POST `body` to `base` + `path` and read the whole answer (within [`REQUEST_LIMIT`]).
    pub async fn post_to(
        &self,
        base: &str,
        path: &str,
        body: &Value,
        headers: Headers<'_>,
    ) -> Answer {
        let response = self.send_to(base, path, body, headers, REQUEST_LIMIT).await;
        let read = tokio::time::timeout(REQUEST_LIMIT, Answer::of(response)).await;
        read.unwrap_or_else(|_| panic!("POST {base}{path}: no whole body within {REQUEST_LIMIT:?}"))
    }

    /// POST through the load balancer and read the whole answer.
    pub async fn post(&self, path: &str, body: &Value, headers: Headers<'_>) -> Answer {
        self.post_to(&self.url, path, body, headers).await
    }

    /// POST to `base` + `path`: the response as it starts.
    pub async fn send_to(
        &self,
        base: &str,
        path: &str,
        body: &Value,
        headers: Headers<'_>,
        limit: Duration,
    ) -> reqwest::Response {
        let mut request = (self.http.post(format!("{base}{path}")))
            .header("content-type", "application/json")
            .body(body.to_string())
            .timeout(limit);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request
            .send()
            .await
            .unwrap_or_else(|err| panic!("POST {base}{path}: {err}"))
    }

    /// GET `base` + `path`: the status (0 when nothing answers within 5 s).
    pub async fn status_of(&self, base: &str, path: &str) -> u16 {
        let request = self.http.get(format!("{base}{path}"));
        match request.timeout(Duration::from_secs(5)).send().await {
            Ok(response) => response.status().as_u16(),
            Err(_) => 0,
        }
    }
}

impl Drop for Scale {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("down")
            .arg(self.dir())
            .env("QORE_SCALE_STOP_WAIT", "5")
            .output();
    }
}

/// Run `scripts/pg.sh ARGS` (on the blocking pool): its stdout, after checking it succeeded.
pub async fn pg_sh(args: Vec<String>) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg.sh");
    let out =
        tokio::task::spawn_blocking(move || Command::new("bash").arg(script).args(&args).output())
            .await
            .expect("a blocking task")
            .expect("bash runs pg.sh");
    assert!(
        out.status.success(),
        "pg.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether process `pid` runs (signal 0).
pub fn alive(pid: u32) -> bool {
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// SIGKILL `pid`.
pub fn sigkill(pid: u32) {
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -KILL {pid}");
}

/// The backend that served an answer through the load balancer: `qI` → I.
pub fn backend_of(headers: &reqwest::header::HeaderMap) -> usize {
    let name = headers
        .get("x-qore-backend")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no x-qore-backend header: {headers:?}"));
    name.strip_prefix('q')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("x-qore-backend: {name:?}"))
}

/// `Retry-After` of an answer: whole seconds, at least 1.
pub fn retry_after(answer: &Answer) -> u64 {
    let value = answer
        .header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {} {}", answer.status, answer.text));
    let secs: u64 = value
        .parse()
        .unwrap_or_else(|e| panic!("Retry-After {value:?}: {e}"));
    assert!(secs >= 1, "Retry-After {secs}");
    secs
}
