//! What only the PostgreSQL backend promises, on one real server for this binary (a fresh
//! database per test): migrations racing on one empty database, a full pool answering
//! `Unavailable`, the location without its password, the statements a call costs, and
//! concurrent writers through separate pools (as separate processes would be).

mod common;

use std::sync::OnceLock;
use std::time::Duration;

use qore_store::{LimitCheck, NewSession, PgStore, Store, StoreError, UsageRow};
use qore_testkit::postgres::TestPostgres;

static SERVER: OnceLock<Result<TestPostgres, String>> = OnceLock::new();

fn server() -> &'static TestPostgres {
    match SERVER.get_or_init(TestPostgres::start) {
        Ok(server) => server,
        Err(why) => panic!("no PostgreSQL server for the tests: {why}"),
    }
}

/// A fresh database's URL and name.
fn fresh() -> (String, String) {
    let url = server().fresh_database().expect("a fresh database");
    let name = url.rsplit('/').next().expect("a database name").to_owned();
    (url, name)
}

/// A test's guard against a hang (never a timing assertion: it only stops a stuck test).
async fn bounded<T>(what: &str, work: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(Duration::from_secs(60), work).await {
        Ok(done) => done,
        Err(_) => panic!("{what} hung"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_migrating_one_empty_database_at_once_all_work() {
    let (url, db) = fresh();
    let racers = (0..4).map(|_| PgStore::connect(&url));
    let stores: Vec<PgStore> = bounded("racing migrations", futures_util::future::join_all(racers))
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("every racer connects");
    let psql = |sql: &str| server().psql_in(&db, sql).expect("psql");
    // Each migration applied once, however many racers ran it.
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres"))
        .expect("the migrations folder")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".sql"))
        })
        .count();
    assert!(migrations >= 2, "{migrations} migrations found");
    assert_eq!(
        psql("SELECT count(*) FROM refinery_schema_history"),
        migrations.to_string()
    );
    let tables = psql(
        "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables
         WHERE schemaname = 'public'",
    );
    assert_eq!(
        tables,
        "api_keys,file_changes,messages,rate_events,refinery_schema_history,request_log,\
         responses,sessions,store_clock,turns,usage"
    );
    let id = stores[0]
        .create_session(&NewSession::default())
        .await
        .unwrap();
    for store in &stores {
        assert_eq!(store.session(&id).await.unwrap().id, id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_pool_is_unavailable_until_a_connection_is_free() {
    let (url, db) = fresh();
    let store = PgStore::connect(&format!("{url}?pool_max_size=2&pool_timeout=1"))
        .await
        .unwrap();
    let (locker, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    (locker.batch_execute("BEGIN; LOCK TABLE store_clock IN ACCESS EXCLUSIVE MODE"))
        .await
        .unwrap();
    // Two writes wait for the lock, each holding one of the pool's two connections.
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.create_session(&NewSession::default()).await })
        })
        .collect();
    let waiting = "SELECT count(*) FROM pg_stat_activity
                   WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let mut seen = String::new();
    for _ in 0..400 {
        seen = server().psql_in(&db, waiting).unwrap();
        if seen == "2" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen, "2", "both writers wait on the lock");
    match bounded("a call on a full pool", store.session_ids()).await {
        Err(StoreError::Unavailable(why)) => {
            assert!(why.contains("no free connection"), "{why}");
        }
        other => panic!("a full pool answered {other:?}"),
    }
    // What lets requests in has a connection of its own: the full pool does not starve it.
    bounded("ping on a full pool", store.ping()).await.unwrap();
    bounded("the keys' version on a full pool", store.keys_version())
        .await
        .unwrap();
    locker.batch_execute("ROLLBACK").await.unwrap();
    for writer in writers {
        bounded("a waiting writer", writer).await.unwrap().unwrap();
    }
    store.ping().await.unwrap();
    assert_eq!(store.session_ids().await.unwrap().len(), 2);
}

#[tokio::test]
async fn the_location_never_shows_the_password() {
    let (url, _) = fresh();
    let with_password = url.replacen("qore@", "qore:sekrit@", 1);
    let store = PgStore::connect(&format!("{with_password}?pool_max_size=3"))
        .await
        .unwrap();
    assert_eq!(store.location(), format!("{url}?pool_max_size=3"));
    // The location opens the same store.
    let again = qore_store::open(&store.location()).await.unwrap();
    let id = store.create_session(&NewSession::default()).await.unwrap();
    assert_eq!(again.session(&id).await.unwrap().id, id);
}

#[tokio::test]
async fn each_call_costs_the_statements_it_promises() {
    let (url, _) = fresh();
    // One connection, so every statement is prepared once (by the first call of each kind).
    let store = PgStore::connect(&format!("{url}?pool_max_size=1"))
        .await
        .unwrap();
    let session = store.create_session(&NewSession::default()).await.unwrap();
    let mut turn = common::tool_turn(1, 100);
    turn.file_changes = vec![
        common::change("a.rs", Some(b"old"), Some("ab"), true),
        common::change("b.rs", None, Some("cd"), true),
    ];
    let limited = LimitCheck {
        key_id: "k1".into(),
        rpm: Some(2),
        tpm: Some(1_000),
        budget_tokens: Some(10_000),
        estimate: 10,
    };
    let row = UsageRow {
        key_id: "k1".into(),
        ..common::usage_row("2025-01-01", "k1", 5)
    };
    // Warm every statement up once.
    store.append_turn(&session, &turn).await.unwrap();
    store.admit(&limited).await.unwrap();
    store
        .record_usage(std::slice::from_ref(&row))
        .await
        .unwrap();
    store.turns(&session).await.unwrap();
    // (call, statements sent, transactions committed)
    let mut cases = Vec::new();
    let before = store.counters();
    store.append_turn(&session, &turn).await.unwrap();
    // The clock's tick (BEGIN, SET LOCAL, UPDATE, COMMIT: one round trip), then the turn.
    cases.push(("append_turn", before, store.counters(), 5, 2));
    let before = store.counters();
    store.admit(&limited).await.unwrap();
    // BEGIN, SET LOCAL synchronous_commit, the lock, the window counting it, COMMIT: one trip.
    cases.push(("admit (admitted)", before, store.counters(), 5, 1));
    let before = store.counters();
    let refused = store.admit(&limited).await.unwrap();
    assert!(matches!(refused, qore_store::LimitVerdict::Requests { .. }));
    cases.push(("admit (refused)", before, store.counters(), 5, 1));
    let before = store.counters();
    store.record_usage(&[row.clone(), row]).await.unwrap();
    cases.push(("record_usage", before, store.counters(), 1, 1));
    let before = store.counters();
    store.turns(&session).await.unwrap();
    // BEGIN, turns, messages, file changes, COMMIT: one round trip.
    cases.push(("turns", before, store.counters(), 5, 1));
    for (call, before, after, statements, transactions) in cases {
        assert_eq!(
            (
                after.statements - before.statements,
                after.transactions - before.transactions
            ),
            (statements, transactions),
            "{call}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_appended_to_one_session_at_once_all_land_in_order() {
    let (url, _) = fresh();
    let store = PgStore::connect(&format!("{url}?pool_max_size=8"))
        .await
        .unwrap();
    let session = store.create_session(&NewSession::default()).await.unwrap();
    let appends: Vec<_> = (0..8u64)
        .map(|n| {
            let (store, session) = (store.clone(), session.clone());
            tokio::spawn(
                async move { store.append_turn(&session, &common::tool_turn(n, 10)).await },
            )
        })
        .collect();
    for append in appends {
        bounded("an append", append).await.unwrap().unwrap();
    }
    let turns = store.turns(&session).await.unwrap();
    assert_eq!(
        turns.iter().map(|t| t.seq).collect::<Vec<_>>(),
        (1..=8).collect::<Vec<_>>()
    );
    for turn in &turns {
        let n = turn.record.usage.output_tokens.expect("the turn's usage");
        assert_eq!(turn.record, common::tool_turn(n, 10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updated_at_strictly_increases_across_two_pools_writing_at_once() {
    let (url, _) = fresh();
    let a = PgStore::connect(&url).await.unwrap();
    let b = PgStore::connect(&url).await.unwrap();
    let writes = |store: PgStore| async move {
        for _ in 0..20 {
            let id = store.create_session(&NewSession::default()).await?;
            store.append_turn(&id, &common::tool_turn(1, 10)).await?;
        }
        Ok::<_, StoreError>(())
    };
    let (left, right) = bounded("two writers", async {
        tokio::join!(tokio::spawn(writes(a.clone())), tokio::spawn(writes(b)))
    })
    .await;
    left.unwrap().unwrap();
    right.unwrap().unwrap();
    let listed = a.list_sessions(None).await.unwrap();
    assert_eq!(listed.len(), 40);
    for pair in listed.windows(2) {
        assert!(
            pair[0].updated_at > pair[1].updated_at,
            "{} then {}",
            pair[0].updated_at,
            pair[1].updated_at
        );
    }
}
