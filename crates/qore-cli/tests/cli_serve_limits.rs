//! The real `qore serve` under a low descriptor limit (`prlimit --nofile=256:256`) with
//! more connections than it can hold: with the default cap (from the limit) the extra ones
//! wait and no accept ever fails; with a cap set too high, accept fails with EMFILE, which
//! is logged, counted and paused on (no busy loop); either way the server stays up and
//! answers `/healthz` once the clients are gone. And HTTPS: SIGHUP makes the running binary
//! serve the certificate now in its files, while a stream opened before goes on to its end.

mod cli_serve_support;
mod common;

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cli_serve_support::upstream::drip;
use cli_serve_support::World;
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};
use tokio::net::TcpStream;

/// A `qore serve` started through `prefix` (e.g. `prlimit …`), its URL and its stderr.
struct Process {
    child: tokio::process::Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Process {
    async fn start(w: &World, prefix: &[&str], args: &[&str]) -> Process {
        let (program, before) = prefix
            .split_first()
            .map_or((common::QORE, &[][..]), |p| (*p.0, p.1));
        let mut cmd = tokio::process::Command::new(program);
        if !prefix.is_empty() {
            cmd.args(before).arg(common::QORE);
        }
        cmd.args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--header-read-timeout",
            "1",
        ])
        .args(args)
        .env("QORE_CONFIG_DIR", &w.config)
        .env("QORE_DATA_DIR", &w.data)
        .env_remove("QORE_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
        let mut child = cmd.spawn().expect("qore serve starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let kept = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                kept.lock().unwrap().push_str(&text);
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(60), stdout.read_line(&mut line)).await;
        assert!(
            matches!(read, Ok(Ok(n)) if n > 0),
            "no URL: {}",
            stderr.lock().unwrap()
        );
        Process {
            child,
            url: line.trim().to_owned(),
            stderr,
        }
    }

    fn addr(&self) -> String {
        self.url.split("://").nth(1).unwrap_or_default().to_owned()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// CPU time (user + system) the process used so far.
    fn cpu(&self) -> Duration {
        let pid = self.child.id().expect("running");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let after = stat.rsplit(')').next().unwrap_or_default();
        let fields: Vec<u64> = after
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        // utime and stime are fields 14 and 15 of stat (11 and 12 after the name).
        Duration::from_millis((fields[11] + fields[12]) * 10)
    }

    fn signal(&self, name: &str) {
        let pid = self.child.id().expect("running");
        let status = std::process::Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

async fn healthz(http: &reqwest::Client, url: &str) -> Option<String> {
    let response = http.get(format!("{url}/healthz")).send().await.ok()?;
    response.text().await.ok()
}

fn metric(text: &str, start: &str) -> f64 {
    (text.lines().find(|l| l.starts_with(start)))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_low_descriptor_limit_the_server_holds_logs_and_recovers() {
    let upstream = ReplayServer::start_repeating(chat_answer("hi"))
        .await
        .unwrap();
    let w = World::new();
    w.chat_provider("up", &upstream);
    let prlimit = ["prlimit", "--nofile=256:256", "--"];
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    // (extra flags, connections opened, whether accept runs out of descriptors)
    let cases: [(&[&str], usize, bool); 2] = [
        (&[], 300, false),
        (&["--max-connections", "1000"], 400, true),
    ];
    for (flags, n, runs_out) in cases {
        let server = Process::start(&w, &prlimit, flags).await;
        let cpu_before = server.cpu();
        let held_since = Instant::now();
        let mut clients = Vec::new();
        for _ in 0..n {
            clients.push(TcpStream::connect(server.addr()).await.unwrap());
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        let cpu = server.cpu() - cpu_before;
        let wall = held_since.elapsed();
        assert!(
            cpu < wall / 2,
            "{flags:?}: {cpu:?} of CPU in {wall:?}: a busy loop?"
        );
        drop(clients);
        // Recovered: it answers again.
        let deadline = Instant::now() + Duration::from_secs(20);
        while healthz(&http, &server.url).await.as_deref() != Some("ok\n") {
            assert!(
                Instant::now() < deadline,
                "{flags:?}: no /healthz: {}",
                server.stderr()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let metrics = (http.get(format!("{}/metrics", server.url)).send().await)
            .unwrap()
            .text()
            .await
            .unwrap();
        let stderr = server.stderr();
        let errors = metric(&metrics, "qore_accept_errors_total{kind=\"descriptors\"}");
        if runs_out {
            assert!(errors >= 1.0, "{metrics}");
            assert!(stderr.contains("out of file descriptors"), "{stderr}");
            assert!(
                stderr.contains("above the 64 the open file limit allows"),
                "{stderr}"
            );
        } else {
            // The cap from 256 descriptors: (256 - 128) / 2.
            assert_eq!(metric(&metrics, "qore_connections_cap "), 64.0, "{metrics}");
            assert!(metric(&metrics, "qore_connections_cap_waits_total ") >= 1.0);
            assert_eq!(errors, 0.0, "{stderr}");
        }
        let reaped = "qore_connections_closed_total{reason=\"first_byte_timeout\"}";
        assert!(metric(&metrics, reaped) >= 1.0, "{metrics}");
        drop(server);
    }
}

/// `openssl`: a CA `dir/NAME-ca.crt` and a certificate it signed for 127.0.0.1 at
/// `dir/NAME.crt` and `dir/NAME.key`.
fn signed(dir: &Path, name: &str) {
    let run = |args: &[&str]| {
        let status = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stderr(Stdio::null())
            .status()
            .expect("openssl runs");
        assert!(status.success(), "openssl {args:?}");
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let (ca, ca_key) = (format!("{name}-ca.crt"), format!("{name}-ca.key"));
    let (crt, key, csr) = (
        format!("{name}.crt"),
        format!("{name}.key"),
        format!("{name}.csr"),
    );
    let subject = format!("/CN={name} test CA");
    run(&[
        &["req", "-x509"][..],
        &ec,
        &[
            "-days", "2", "-subj", &subject, "-keyout", &ca_key, "-out", &ca,
        ],
    ]
    .concat());
    run(&[
        &["req"][..],
        &ec,
        &["-subj", "/CN=localhost", "-keyout", &key, "-out", &csr],
    ]
    .concat());
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &ca,
        "-CAkey",
        &ca_key,
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        &crt,
    ]);
}

/// A client trusting only `dir/NAME-ca.crt`.
fn trusting(dir: &Path, name: &str) -> reqwest::Client {
    let pem = std::fs::read(dir.join(format!("{name}-ca.crt"))).unwrap();
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_serves_the_new_certificate_and_the_open_stream_finishes() {
    let upstream = ReplayServer::start_repeating(drip(20, Duration::from_millis(500)))
        .await
        .unwrap();
    let w = World::new();
    w.chat_provider("up", &upstream);
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        signed(dir.path(), name);
    }
    let (cert, key) = (dir.path().join("served.crt"), dir.path().join("served.key"));
    std::fs::copy(dir.path().join("a.crt"), &cert).unwrap();
    std::fs::copy(dir.path().join("a.key"), &key).unwrap();
    let args = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let server = Process::start(&w, &[], &args).await;
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    let (a, b) = (trusting(dir.path(), "a"), trusting(dir.path(), "b"));
    assert_eq!(healthz(&a, &server.url).await.as_deref(), Some("ok\n"));
    assert_eq!(healthz(&b, &server.url).await, None);
    let body = serde_json::json!({"model": "up/m", "stream": true,
                                  "messages": [{"role": "user", "content": "Talk."}]});
    let url = format!("{}/v1/chat/completions", server.url);
    let sent = (a.post(&url))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await;
    let mut stream = sent.unwrap();
    assert_eq!(stream.status(), 200);
    let mut text = String::new();
    text.push_str(&String::from_utf8_lossy(
        &stream.chunk().await.unwrap().unwrap(),
    ));
    // B's files in place with A's modification times: only SIGHUP can tell.
    for (from, to) in [("b.crt", &cert), ("b.key", &key)] {
        let stamp = std::fs::metadata(to).unwrap().modified().unwrap();
        std::fs::copy(dir.path().join(from), to).unwrap();
        std::fs::File::options()
            .write(true)
            .open(to)
            .unwrap()
            .set_modified(stamp)
            .unwrap();
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        healthz(&a, &server.url).await.as_deref(),
        Some("ok\n"),
        "reloaded unasked"
    );
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while healthz(&b, &server.url).await.as_deref() != Some("ok\n") {
        assert!(
            Instant::now() < deadline,
            "B never served: {}",
            server.stderr()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    while let Some(chunk) = stream.chunk().await.unwrap() {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.contains("w19 "), "the stream was cut: {text}");
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    assert!(
        server.stderr().contains("certificate was reloaded"),
        "{}",
        server.stderr()
    );
}
