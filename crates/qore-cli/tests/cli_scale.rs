//! `qore serve` scaled out as docs/deploy.md runs it: three real `qore serve` processes on one
//! real PostgreSQL (Debian's, started by scripts/pg.sh) behind a real HAProxy (Debian's),
//! all by `scripts/scale.sh`, with loopback replay servers as the provider.
//!
//! Checks, each against the real parts: a process SIGKILLed mid-stream cuts only its own
//! clients' streams, leaves no half turn in the database, and the load balancer's next
//! requests go to the living processes; PostgreSQL stopped under load gives 503 with
//! Retry-After in each caller's dialect (every request returns), and the same processes
//! recover by themselves once it is back; a key's rpm holds across the processes (10 of 15
//! admitted). The pool and migration cases are in `cli_scale_support/cases/store.rs`.

mod cli_scale_support;
mod cli_serve_support;
mod common;

#[path = "cli_scale_support/cases/store.rs"]
mod store;

use std::collections::BTreeSet;
use std::time::Duration;

use cli_scale_support::load::Load;
use cli_scale_support::streams::{read_rest, stored_turns};
use cli_scale_support::{
    alive, backend_of, fresh_database, pg_sh, qore_on, retry_after, sigkill, Scale, REQUEST_LIMIT,
};
use cli_serve_support::upstream::{drip, drip_text, finished, text_of};
use cli_serve_support::{dialects, error_of, read_until, Answer, Headers, World};
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

/// Words in a slow stream (100 ms apart: 4 s).
const WORDS: usize = 40;

/// A world with `slow/m` (a 4-second stream) and `fast/m` (answers "ok" at once).
async fn world() -> (World, ReplayServer, ReplayServer) {
    let slow = ReplayServer::start_repeating(drip(WORDS, Duration::from_millis(100)))
        .await
        .expect("a replay server");
    let fast = ReplayServer::start_repeating(chat_answer("ok"))
        .await
        .expect("a replay server");
    let w = World::new();
    w.chat_provider("slow", &slow).chat_provider("fast", &fast);
    (w, slow, fast)
}

/// Request `i`'s path, body and `x-qore-session` (None: Responses with `store: true`); each
/// keeps its turn, saying `Talk i.`.
fn storing_request(i: usize, model: &str) -> (&'static str, Value, Option<String>) {
    let text = format!("Talk {i}.");
    let (path, ask) = dialects()[i % 3];
    let mut body = ask(model, &text, true);
    match path {
        "/v1/responses" => {
            body["store"] = json!(true);
            (path, body, None)
        }
        _ => (path, body, Some(format!("s{i}"))),
    }
}

#[tokio::test]
async fn a_process_killed_mid_stream_cuts_only_its_streams_and_leaves_no_half_turn() {
    let (w, _slow, _fast) = world().await;
    let db = fresh_database();
    let scale = Scale::up(&w, 3, Some(&db));
    // Six streams at once, opened one after another: round robin puts two on each process.
    let mut open = Vec::new();
    for i in 0..6 {
        let (path, body, session) = storing_request(i, "slow/m");
        let headers: Vec<(&str, &str)> = session
            .iter()
            .map(|s| ("x-qore-session", s.as_str()))
            .collect();
        let mut response = scale
            .send_to(&scale.url, path, &body, &headers, Duration::from_secs(60))
            .await;
        assert_eq!(response.status(), 200, "{path}");
        let backend = backend_of(response.headers());
        let seen = read_until(&mut response, "w1 ").await;
        open.push((i, path, backend, response, seen));
    }
    let victim = open[0].2;
    let pids: Vec<u32> = (1..=3).map(|i| scale.pid(i)).collect();
    sigkill(pids[victim - 1]);

    let mut reading = Vec::new();
    for (i, path, backend, response, seen) in open {
        reading.push((i, path, backend, tokio::spawn(read_rest(response, seen))));
    }
    let mut survivors = BTreeSet::new();
    let mut cut = 0;
    for (i, path, backend, task) in reading {
        let (body, clean) = task.await.expect("a reader");
        if backend == victim {
            // Its client sees a cut stream: no clean end, no finished turn.
            assert!(
                !clean && !finished(path, &body),
                "client {i} on the killed q{victim}: clean {clean}: {body}"
            );
            cut += 1;
        } else {
            assert!(
                clean && finished(path, &body),
                "client {i} on q{backend}: clean {clean}: {body}"
            );
            assert_eq!(text_of(path, &body), drip_text(WORDS), "client {i}");
            survivors.insert(format!("Talk {i}."));
        }
    }
    assert!(
        cut >= 1 && survivors.len() >= 3,
        "cut {cut}, survivors {survivors:?}"
    );
    assert!(!alive(pids[victim - 1]), "q{victim} still runs");
    for (i, pid) in pids.iter().enumerate().filter(|(i, _)| i + 1 != victim) {
        assert!(alive(*pid), "q{} died too:\n{}", i + 1, scale.logs());
    }

    // The load balancer's next requests all go to the living processes.
    for (n, (path, ask)) in dialects().into_iter().cycle().take(6).enumerate() {
        let answer = scale
            .post(path, &ask("fast/m", "Hi.", n % 2 == 0), &[])
            .await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.text);
        assert_eq!(text_of(path, &answer.text), "ok", "{path}: {}", answer.text);
        assert_ne!(backend_of(&answer.headers), victim, "{path}");
    }

    // Started again on its address, the process is back in rotation at its first good check.
    scale.restart(victim);
    let mut back = false;
    for _ in 0..40 {
        let answer = scale
            .post(
                dialects()[0].0,
                &dialects()[0].1("fast/m", "Hi.", false),
                &[],
            )
            .await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        if backend_of(&answer.headers) == victim {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(back, "q{victim} never answered again:\n{}", scale.logs());

    // The database holds the finished turns, each whole, and nothing of the cut ones.
    let mut turns = stored_turns(&db).await;
    for _ in 0..50 {
        if turns.len() >= survivors.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        turns = stored_turns(&db).await;
    }
    for turn in &turns {
        assert_eq!(turn.seq, 1, "{turn:?}");
        assert_eq!(turn.replies, [drip_text(WORDS)], "a half turn: {turn:?}");
    }
    let users: BTreeSet<String> = turns.iter().map(|t| t.user.clone()).collect();
    assert_eq!(users, survivors, "{turns:#?}");
    assert_eq!(turns.len(), survivors.len(), "{turns:#?}");
}

#[tokio::test]
async fn a_keys_rpm_holds_across_the_processes() {
    let (w, _slow, _fast) = world().await;
    let db = fresh_database();
    let run = qore_on(&w, &db, &["serve", "keys", "create", "k", "--rpm", "10"]).await;
    let key = run.stdout.trim().to_owned();
    let scale = Scale::up(&w, 3, Some(&db));
    let mut tasks = Vec::new();
    for n in 0..15 {
        let (path, ask) = dialects()[n % 2];
        let (http, url, key) = (scale.http.clone(), scale.url.clone(), key.clone());
        tasks.push(tokio::spawn(async move {
            let response = (http.post(format!("{url}{path}")))
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {key}"))
                .body(ask("fast/m", "Hi.", false).to_string())
                .timeout(REQUEST_LIMIT)
                .send()
                .await
                .unwrap_or_else(|e| panic!("POST {path}: {e}"));
            (path, Answer::of(response).await)
        }));
    }
    let (mut admitted, mut refused, mut backends) = (0, 0, BTreeSet::new());
    for task in tasks {
        let (path, answer) = task.await.expect("a request");
        backends.insert(backend_of(&answer.headers));
        match answer.status {
            200 => admitted += 1,
            429 => {
                retry_after(&answer);
                error_of(path, &answer);
                refused += 1;
            }
            other => panic!("{path}: {other} {}", answer.text),
        }
    }
    assert_eq!((admitted, refused), (10, 5), "\n{}", scale.logs());
    assert!(backends.len() >= 2, "all on {backends:?}");
}

/// Send `ask` with `auth` until it is answered 200 (50 tries, 100 ms apart): whether it was.
async fn until_ok(scale: &Scale, base: &str, path: &str, ask: &Value, auth: Headers<'_>) -> bool {
    for _ in 0..50 {
        if scale.post_to(base, path, ask, auth).await.status == 200 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn postgres_stopped_under_load_is_503_with_retry_after_and_the_same_processes_recover() {
    let (w, _slow, _fast) = world().await;
    let scale = Scale::up(&w, 3, None); // its own PostgreSQL in DIR/pg, as docs/deploy.md
    let store = scale.store();
    let run = qore_on(
        &w,
        &store,
        &["serve", "keys", "create", "k", "--rpm", "100000"],
    )
    .await;
    let key = run.stdout.trim().to_owned();
    let auth = [("x-api-key", key.as_str())];
    let (chat, ask) = dialects()[0];
    // Keys reach every process within a second.
    let known = until_ok(
        &scale,
        &scale.url,
        chat,
        &ask("fast/m", "Hi.", false),
        &auth,
    )
    .await;
    assert!(known, "the new key never worked:\n{}", scale.logs());
    let pids: Vec<u32> = (1..=3).map(|i| scale.pid(i)).collect();

    let load = Load::start(&scale.http, &scale.url, &key, "fast/m", 4);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pg_dir = scale.dir().join("pg").to_string_lossy().into_owned();
    let port = scale.read("pg/port");
    pg_sh(vec!["stop".into(), pg_dir.clone()]).await;

    // Down: each dialect's caller gets a 503 with Retry-After in its own envelope.
    for (path, ask) in dialects().into_iter().take(2) {
        for stream in [false, true] {
            let answer = scale.post(path, &ask("fast/m", "Hi.", stream), &auth).await;
            assert_eq!(
                answer.status,
                503,
                "{path}: {}\n{}",
                answer.text,
                scale.logs()
            );
            retry_after(&answer);
            error_of(path, &answer);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    pg_sh(vec!["start".into(), pg_dir, port]).await;

    // Back: the same processes answer again, each directly and through the load balancer.
    for (i, (path, ask)) in (1..=3).zip(dialects()) {
        let base = scale.process_url(i);
        let back = until_ok(&scale, &base, path, &ask("fast/m", "Hi.", false), &auth).await;
        assert!(back, "q{i} did not recover:\n{}", scale.logs());
        assert_eq!(scale.status_of(&base, "/readyz").await, 200, "q{i}");
    }
    // And through the load balancer, whichever process it picks (each has its own key
    // check, refreshed every 250 ms, to come back).
    let through = until_ok(&scale, &scale.url, chat, &ask("fast/m", "Hi.", true), &auth).await;
    assert!(
        through,
        "no answer through the load balancer:\n{}",
        scale.logs()
    );
    let (mut ok, mut unavailable) = (0, 0);
    for outcome in load.finish().await {
        let o = outcome.unwrap_or_else(|e| panic!("a request did not return: {e}"));
        match o.status {
            200 => ok += 1,
            503 => {
                let retry = o.retry_after.as_deref().and_then(|r| r.parse::<u64>().ok());
                assert!(retry.is_some_and(|s| s >= 1), "{o:?}");
                let answer = Answer {
                    status: 503,
                    headers: Default::default(),
                    text: o.text,
                };
                error_of(o.path, &answer);
                unavailable += 1;
            }
            other => panic!("{}: {other} {}", o.path, o.text),
        }
    }
    assert!(ok > 0 && unavailable > 0, "ok {ok}, 503 {unavailable}");
    let now: Vec<u32> = (1..=3).map(|i| scale.pid(i)).collect();
    assert_eq!(now, pids, "the processes were replaced");
    assert!(pids.iter().all(|p| alive(*p)), "{}", scale.logs());
}
