//! A steady load through the load balancer while a test breaks something: a few workers,
//! each sending one request after another with an API key (Chat Completions and Messages in
//! turn) until told to stop, each request bounded by [`REQUEST_LIMIT`]. Every outcome is
//! kept, so the test can check that each one returned and how.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cli_scale_support::REQUEST_LIMIT;
use crate::cli_serve_support::dialects;

/// The most requests one worker sends (the load stops by itself).
const MOST: usize = 2000;

/// One request's end: its path, status, `Retry-After` and body.
#[derive(Debug)]
pub struct Outcome {
    pub path: &'static str,
    pub status: u16,
    pub retry_after: Option<String>,
    pub text: String,
}

/// Workers running until [`Load::finish`].
pub struct Load {
    stop: Arc<AtomicBool>,
    workers: Vec<tokio::task::JoinHandle<Vec<Result<Outcome, String>>>>,
}

impl Load {
    /// `workers` workers asking `model` at `url` with `key`.
    pub fn start(
        http: &reqwest::Client,
        url: &str,
        key: &str,
        model: &str,
        workers: usize,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let workers = (0..workers)
            .map(|_| {
                let (http, url, key, model) = (
                    http.clone(),
                    url.to_owned(),
                    key.to_owned(),
                    model.to_owned(),
                );
                tokio::spawn(worker(http, url, key, model, stop.clone()))
            })
            .collect();
        Load { stop, workers }
    }

    /// Stop the workers: every outcome, or why a request did not return.
    pub async fn finish(self) -> Vec<Result<Outcome, String>> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for worker in self.workers {
            all.extend(worker.await.expect("a load worker"));
        }
        all
    }
}

async fn worker(
    http: reqwest::Client,
    url: String,
    key: String,
    model: String,
    stop: Arc<AtomicBool>,
) -> Vec<Result<Outcome, String>> {
    let mut seen = Vec::new();
    while !stop.load(Ordering::Relaxed) && seen.len() < MOST {
        let (path, ask) = dialects()[seen.len() % 2];
        let sent = (http.post(format!("{url}{path}")))
            .header("content-type", "application/json")
            .header("x-api-key", &key)
            .body(ask(&model, "Hi.", false).to_string())
            .timeout(REQUEST_LIMIT)
            .send()
            .await;
        let outcome = match sent {
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = (response.headers().get("retry-after"))
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                match response.text().await {
                    Ok(text) => Ok(Outcome {
                        path,
                        status,
                        retry_after,
                        text,
                    }),
                    Err(e) => Err(format!("{path}: body: {e}")),
                }
            }
            Err(e) => Err(format!("{path}: {e}")),
        };
        seen.push(outcome);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seen
}
