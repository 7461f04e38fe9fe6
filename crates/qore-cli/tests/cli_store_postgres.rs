//! The CLI on PostgreSQL: the real binary and a real server (`qore_testkit::postgres`, one
//! per test binary, a fresh database per test). The `qore sessions` steps of `cli_sessions`
//! run unchanged with `--store postgres://…` and with `QORE_STORE_URL`, and leave no SQLite
//! file behind; `qore store migrate` copies a SQLite file's sessions, keys, usage rows and
//! stored responses into PostgreSQL (a second run copies nothing), after which `sessions
//! list` shows the same on both; bad arguments and unreachable stores are one line (no
//! password in it) with exit codes 2 and 1.

mod cli_sessions_support;
mod common;

use std::sync::OnceLock;

use cli_sessions_support::{world, world_on, Place, World};
use common::{command, run_cmd, Run};
use qore_store::{NewKey, NewResponse, SqliteStore, Store, UsageRow};
use qore_testkit::postgres::{free_port, TestPostgres};
use serde_json::Value;

static SERVER: OnceLock<Result<TestPostgres, String>> = OnceLock::new();

/// A new empty database on this binary's one server.
fn fresh_database() -> String {
    let server = match SERVER.get_or_init(TestPostgres::start) {
        Ok(server) => server,
        Err(why) => panic!("no PostgreSQL server for the tests: {why}"),
    };
    match server.fresh_database() {
        Ok(url) => url,
        Err(why) => panic!("cannot create a database: {why}"),
    }
}

/// The sessions world in a fresh PostgreSQL database, found by the binary as `place` says.
async fn pg_world(place: impl Fn(String) -> Place) -> World {
    let url = fresh_database();
    let store = qore_store::open(&url).await.unwrap();
    world_on(tempfile::tempdir().unwrap(), store.as_ref(), place(url)).await
}

#[tokio::test]
async fn the_sessions_steps_run_the_same_on_postgres_by_flag_and_by_environment() {
    for place in [Place::Flag, Place::Env] {
        let w = pg_world(place).await;
        cli_sessions_support::sessions_steps(&w).await;
        assert!(
            !w.data.join("qore.db").exists(),
            "{:?}: the default SQLite file was used",
            w.place
        );
    }
}

/// `qore store migrate ARGS`, in a data dir of its own.
async fn migrate(w: &World, args: &[&str]) -> Run {
    let mut cmd = command(&[&["store", "migrate"][..], args].concat());
    cmd.env("QORE_DATA_DIR", &w.data).current_dir(&w.a);
    run_cmd(cmd).await
}

/// A key, two usage rows and a stored response added to the world's SQLite file.
async fn more_records(store: &dyn Store, session: &str) {
    let key = NewKey {
        name: "ci".into(),
        hash: "ab".repeat(32),
        models: vec!["coder".into()],
        rpm: Some(10),
        tpm: None,
        budget_tokens: Some(1_000),
    };
    let key = store.create_key(&key).await.unwrap();
    let row = |day: &str, key_id: &str| UsageRow {
        day: day.into(),
        key_id: key_id.into(),
        model: "coder".into(),
        agent: "coder".into(),
        requests: 3,
        errors: 1,
        tokens_in: 120,
        tokens_out: 30,
    };
    let rows = [row("2025-10-09", &key.id), row("2025-10-10", "")];
    store.record_usage(&rows).await.unwrap();
    let turn = store.turn_ids(session).await.unwrap()[1];
    let response = NewResponse {
        id: "resp_1",
        key_id: &key.id,
        session_id: Some(session),
        turn_id: Some(turn),
        pending: None,
        object: "{\"id\":\"resp_1\"}",
    };
    store.put_response(&response).await.unwrap();
}

#[tokio::test]
async fn migrate_copies_a_sqlite_file_into_postgres_once() {
    let w = world().await;
    let file = w.data.join("qore.db");
    let sqlite = SqliteStore::open(&file).unwrap();
    more_records(&sqlite, &w.ids[0]).await;
    let url = fresh_database();
    let from = file.to_str().unwrap();

    let first = migrate(&w, &["--from", from, "--to", &url]).await;
    let second = migrate(&w, &["--to", &url, "--from", from]).await;
    // (run, [(what, copied, already there)])
    let runs = [
        (&first, [3, 4, 1, 2, 1].map(|n| (n, 0))),
        (&second, [3, 4, 1, 2, 1].map(|n| (0, n))),
    ];
    for (run, counts) in runs {
        assert_eq!(run.code, Some(0), "{run:?}");
        let kinds = ["sessions", "turns", "keys", "usage rows", "responses"];
        for (what, (copied, there)) in kinds.into_iter().zip(counts) {
            let line = format!("{what}: {copied} copied, {there} already there");
            assert!(run.stdout.contains(&line), "no {line:?} in {run:?}");
        }
    }

    // `sessions list` shows the same on both stores.
    let mut listed = Vec::new();
    for place in [Place::DataDir, Place::Flag(url.clone())] {
        let args = ["sessions", "list", "--all-projects", "--json"];
        let run = w.qore_at(&place, &args).await;
        assert_eq!(run.code, Some(0), "{run:?}");
        listed.push(serde_json::from_str::<Value>(&run.stdout).unwrap());
    }
    assert_eq!(listed[0].as_array().map(Vec::len), Some(3), "{}", listed[0]);
    assert_eq!(listed[1], listed[0]);

    // Keys, usage and the response came over as they are.
    let pg = qore_store::open(&url).await.unwrap();
    assert_eq!(pg.keys().await.unwrap(), sqlite.keys().await.unwrap());
    let usage = pg.usage(None, None).await.unwrap();
    assert_eq!(usage.len(), 2);
    assert_eq!(usage, sqlite.usage(None, None).await.unwrap());
    let response = pg.response("resp_1").await.unwrap().expect("the response");
    assert_eq!(response.session_id.as_deref(), Some(w.ids[0].as_str()));
    let turn_ids = pg.turn_ids(&w.ids[0]).await.unwrap();
    assert_eq!(response.turn_id, Some(turn_ids[1]));
}

#[tokio::test]
async fn bad_arguments_exit_2_and_unreachable_stores_exit_1_without_a_password() {
    let w = world().await;
    let file = w.data.join("qore.db");
    let from = file.to_str().unwrap();
    let missing = w.data.join("nothing-here.db");
    let port = free_port().unwrap();
    let refused = format!("postgres://qore:hunter2secret@127.0.0.1:{port}/qore");
    let shown = format!("postgres://qore@127.0.0.1:{port}/qore");
    let dotted = w.data.join(".").join("qore.db");
    // (args, exit code, stderr must contain)
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["--from", from], 2, "--to"),
        (vec!["--from", from, "--to", from], 2, "the same store"),
        (
            vec!["--from", from, "--to", dotted.to_str().unwrap()],
            2,
            "the same store",
        ),
        (
            vec!["--from", missing.to_str().unwrap(), "--to", from],
            1,
            "no store at",
        ),
        (vec!["--from", from, "--to", &refused], 1, &shown),
        (vec!["--from", &refused, "--to", from], 1, &shown),
    ];
    for (args, code, says) in cases {
        let run = migrate(&w, &args).await;
        assert_eq!(run.code, Some(code), "{args:?}: {run:?}");
        assert!(run.stderr.contains(says), "{args:?}: no {says} in {run:?}");
        assert!(!run.stderr.contains("hunter2secret"), "{run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
        if code == 1 {
            run.one_stderr_line();
        }
    }
    assert!(!missing.exists(), "a missing source was created");
    // The sessions commands on an unreachable store: one line, no password, exit 1.
    let run = w
        .qore_at(&Place::Env(refused.clone()), &["sessions", "list"])
        .await;
    assert_eq!(run.code, Some(1), "{run:?}");
    let line = run.one_stderr_line();
    assert!(
        line.contains(&shown) && !line.contains("hunter2secret"),
        "{line}"
    );
    // Help names the variable, never its value.
    let help = w
        .qore_at(&Place::Env(refused), &["sessions", "--help"])
        .await;
    assert_eq!(help.code, Some(0), "{help:?}");
    assert!(help.stdout.contains("QORE_STORE_URL"), "{help:?}");
    assert!(!help.stdout.contains("hunter2secret"), "{help:?}");
}
