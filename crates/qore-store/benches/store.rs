//! Reading a big store: opening a session of 10,000 messages, and listing 10,000 sessions.
//!
//! The workload (a temporary SQLite database, written before timing through qore-store's own
//! async API, each session one [`Store::import_session`] transaction):
//! - one session of 2,500 turns, each a question, a tool call (with reasoning), its result
//!   (400 bytes) and the answer (the store tests' `tool_turn`): 10,000 messages;
//! - 10,000 sessions of one such turn (4 messages) each, spread over 10 projects.
//!
//! Per iteration (each on a tokio runtime, criterion's `to_async`):
//! - `history_10k`: [`Store::history`] of the big session (every message decoded);
//! - `open_history_10k`: [`qore_store::open`] (connection, WAL, migration check), the
//!   resolver ([`Store::session`] by a 12-character prefix) and [`Store::history`]: what
//!   `qore chat --session ID` pays before its first prompt;
//! - `list_10k`: [`Store::list_sessions`] of all projects (10,000 rows with counts and usage);
//! - `list_project_1k`: [`Store::list_sessions`] of one project (1,000 of the 10,000).
//!
//! Before timing, the counts are checked (10,000 messages, 10,000 sessions). There are no
//! timing assertions. Run: `cargo bench -p qore-store --bench store`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use qore_store::{ImportTurn, NewSession, SessionImport, Store};
use tokio::runtime::Runtime;

/// Turn `n` of the store's tests: a question, a tool call, its 400-byte result, the answer.
fn turn(n: usize) -> ImportTurn {
    ImportTurn {
        record: common::tool_turn(n as u64, 400),
        undone: false,
    }
}

fn session(project: usize, turns: Vec<ImportTurn>) -> SessionImport {
    SessionImport {
        session: NewSession {
            project_dir: Some(PathBuf::from(format!("/src/project-{project}"))),
            agent: Some("coder".into()),
            model: Some("m-1".into()),
            ..NewSession::default()
        },
        title: None,
        created_at: None,
        turns,
    }
}

async fn open(path: &Path) -> Arc<dyn Store> {
    let location = path.to_str().expect("a UTF-8 temporary path");
    qore_store::open(location)
        .await
        .expect("open the bench store")
}

/// The database: the big session's id, and the file.
async fn fill(dir: &Path) -> (String, PathBuf) {
    let path = dir.join("qore.db");
    let store = open(&path).await;
    let started = Instant::now();
    let big = store
        .import_session(&session(0, (0..2_500).map(turn).collect()))
        .await
        .expect("write the big session");
    for n in 0..10_000 {
        store
            .import_session(&session(n % 10, vec![turn(n)]))
            .await
            .expect("write a session");
    }
    println!("filled in {:?}", started.elapsed());
    let history = store.history(&big).await.expect("history");
    assert_eq!(history.len(), 10_000);
    let listed = store.list_sessions(None).await.expect("list");
    assert_eq!(listed.len(), 10_001);
    (big, path)
}

fn benches(c: &mut Criterion) {
    let runtime = Runtime::new().expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (big, path) = runtime.block_on(fill(dir.path()));
    let store = runtime.block_on(open(&path));
    let project = PathBuf::from("/src/project-3");
    let mut group = c.benchmark_group("store");
    group.sample_size(10);
    group.bench_function("history_10k", |b| {
        b.to_async(&runtime)
            .iter(|| async { store.history(&big).await.expect("history").len() })
    });
    group.bench_function("open_history_10k", |b| {
        b.to_async(&runtime).iter(|| async {
            let store = open(&path).await;
            let id = store.session(&big[..12]).await.expect("resolve").id;
            store.history(&id).await.expect("history").len()
        })
    });
    group.bench_function("list_10k", |b| {
        b.to_async(&runtime)
            .iter(|| async { store.list_sessions(None).await.expect("list").len() })
    });
    group.bench_function("list_project_1k", |b| {
        b.to_async(&runtime).iter(|| async {
            let listed = store.list_sessions(Some(&project)).await.expect("list");
            listed.len()
        })
    });
    group.finish();
}

criterion_group!(store_benches, benches);
criterion_main!(store_benches);
