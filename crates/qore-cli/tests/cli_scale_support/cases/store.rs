//! `qore serve --store postgres://…` at the edges of its database: a pool of one connection
//! held by a slow database answers 503 with Retry-After (every request returns, none hangs),
//! and two processes migrating one empty database at the same moment both come up and
//! serve, leaving the schema exactly as one process alone leaves it.

use std::time::Duration;

use serde_json::Value;

use crate::cli_scale_support::{fresh_database, qore_on, retry_after, shared_pg, REQUEST_LIMIT};
use crate::cli_serve_support::upstream::text_of;
use crate::cli_serve_support::{dialects, error_of, Answer, World};
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;

/// The database name of a `postgres://…/NAME[?…]` URL.
fn database_of(url: &str) -> String {
    let tail = url.rsplit('/').next().unwrap_or_default();
    tail.split('?').next().unwrap_or_default().to_owned()
}

/// Run SQL in database `db` of the shared server (on the blocking pool).
async fn psql_in(db: &str, sql: &str) -> String {
    let (db, sql) = (db.to_owned(), sql.to_owned());
    tokio::task::spawn_blocking(move || shared_pg().psql_in(&db, &sql))
        .await
        .expect("a blocking task")
        .unwrap_or_else(|e| panic!("psql: {e}"))
}

/// Every table and column of the database's own schemas with its type, and each table's
/// row count: what migrating leaves behind.
async fn schema_of(db: &str) -> (String, Vec<(String, String)>) {
    let columns = psql_in(
        db,
        "SELECT table_schema || '.' || table_name || '.' || column_name || ' ' || data_type \
         FROM information_schema.columns \
         WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
    )
    .await;
    let tables = psql_in(
        db,
        "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) \
         FROM information_schema.tables WHERE table_type = 'BASE TABLE' \
         AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
    )
    .await;
    let mut rows = Vec::new();
    for table in tables.lines().filter(|l| !l.is_empty()) {
        let count = psql_in(db, &format!("SELECT count(*) FROM {table}")).await;
        rows.push((table.to_owned(), count.trim().to_owned()));
    }
    (columns, rows)
}

#[tokio::test]
async fn two_processes_migrating_one_empty_database_at_once_both_serve() {
    let fast = ReplayServer::start_repeating(chat_answer("ok"))
        .await
        .expect("a replay server");
    let w = World::new();
    w.chat_provider("fast", &fast);
    // What one process alone leaves: a database migrated by `qore serve keys list`.
    let alone = fresh_database();
    qore_on(&w, &alone, &["serve", "keys", "list"]).await;
    let reference = schema_of(&database_of(&alone)).await;
    assert!(!reference.1.is_empty(), "no tables after migrating");
    for round in 0..3 {
        let db = fresh_database();
        let args = ["--store", &db, "--drain-timeout", "1"];
        let (mut a, mut b) = tokio::join!(w.serve(&args), w.serve(&args));
        assert_eq!(
            schema_of(&database_of(&db)).await,
            reference,
            "round {round}"
        );
        for server in [&a, &b] {
            assert_eq!(
                server.get("/readyz", &[]).await.status,
                200,
                "round {round}"
            );
            for (path, ask) in dialects() {
                let answer = server.post(path, &ask("fast/m", "Hi.", false), &[]).await;
                assert_eq!(answer.status, 200, "round {round} {path}: {}", answer.text);
                assert_eq!(text_of(path, &answer.text), "ok", "{path}");
            }
        }
        assert_eq!(a.stop().await, Some(0), "{}", a.stderr());
        assert_eq!(b.stop().await, Some(0), "{}", b.stderr());
    }
}

/// Lock every table of `db` for `secs` seconds from another session (a database that is
/// slow to answer): returns once the locks are held; the task ends when they are released.
async fn hold_tables(db: &str, secs: u32) -> tokio::task::JoinHandle<Result<String, String>> {
    let (name, sql) = (
        db.to_owned(),
        format!(
            "BEGIN; DO $$ DECLARE t text; BEGIN \
             FOR t IN SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables \
             WHERE schemaname NOT IN ('pg_catalog', 'information_schema') LOOP \
             EXECUTE 'LOCK TABLE ' || t || ' IN ACCESS EXCLUSIVE MODE'; END LOOP; END $$; \
             SELECT pg_sleep({secs}); COMMIT;"
        ),
    );
    let holder = tokio::task::spawn_blocking(move || shared_pg().psql_in(&name, &sql));
    let held = "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database \
                WHERE d.datname = current_database() AND l.mode = 'AccessExclusiveLock' \
                AND l.granted AND l.relation IS NOT NULL AND l.pid <> pg_backend_pid()";
    for _ in 0..100 {
        if psql_in(db, held).await.trim() != "0" {
            return holder;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the tables of {db} were never locked: {:?}", holder.await);
}

#[tokio::test]
async fn an_exhausted_pool_answers_503_with_retry_after_never_a_hang() {
    let fast = ReplayServer::start_repeating(chat_answer("ok"))
        .await
        .expect("a replay server");
    let w = World::new();
    w.chat_provider("fast", &fast);
    let db = fresh_database();
    let run = qore_on(
        &w,
        &db,
        &["serve", "keys", "create", "k", "--rpm", "100000"],
    )
    .await;
    let key = run.stdout.trim().to_owned();
    let one = format!("{db}?pool_max_size=1&pool_timeout=1");
    let mut server = w.serve(&["--store", &one, "--drain-timeout", "1"]).await;
    let auth = [("x-api-key", key.as_str())];
    let hi = |n: usize| dialects()[n % 2].1("fast/m", "Hi.", n % 4 >= 2);
    let mut known = false;
    for _ in 0..50 {
        if server
            .post("/v1/chat/completions", &hi(0), &auth)
            .await
            .status
            == 200
        {
            known = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(known, "the key never worked: {}", server.stderr());

    // The database's tables are locked for 4 s: the pool's one connection waits on them,
    // and every other request that needs the store finds no free connection.
    let holder = hold_tables(&database_of(&db), 4).await;
    let mut tasks = Vec::new();
    for n in 0..8 {
        let (http, url, key) = (server.http.clone(), server.url.clone(), key.clone());
        let (path, body): (&str, Value) = (dialects()[n % 2].0, hi(n));
        tasks.push(tokio::spawn(async move {
            let sent = (http.post(format!("{url}{path}")))
                .header("content-type", "application/json")
                .header("x-api-key", key)
                .body(body.to_string())
                .timeout(REQUEST_LIMIT)
                .send()
                .await;
            match sent {
                Ok(response) => Ok((path, Answer::of(response).await)),
                Err(e) => Err(format!("{path}: {e}")),
            }
        }));
    }
    let mut unavailable = 0;
    for task in tasks {
        let (path, answer) = (task.await.expect("a request"))
            .unwrap_or_else(|e| panic!("a request did not return: {e}\n{}", server.stderr()));
        match answer.status {
            200 => {}
            503 => {
                retry_after(&answer);
                error_of(path, &answer);
                unavailable += 1;
            }
            other => panic!("{path}: {other} {}", answer.text),
        }
    }
    assert!(
        unavailable >= 1,
        "no 503 from a pool of one held connection"
    );
    holder
        .await
        .expect("the holder")
        .expect("the lock was held and released");
    // Once the database answers again, so does the server (its key copy refreshed within a
    // second or so).
    let mut answer = server.post("/v1/chat/completions", &hi(0), &auth).await;
    for _ in 0..50 {
        if answer.status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        answer = server.post("/v1/chat/completions", &hi(0), &auth).await;
    }
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(server.stop().await, Some(0), "{}", server.stderr());
}
