//! Durable before acknowledged, on a real SQLite file whose writes of turns and responses
//! fail (triggers that abort them, put there by another connection, as a full or broken disk
//! would): for each dialect, streaming and not, the request asking to keep its turn is
//! answered with the store's failure (a 500 in the dialect's envelope, no id; streaming:
//! `response.failed`, an `error` event, an error chunk without `[DONE]`), never with its
//! success ending, and the store holds nothing of it. With the triggers gone, the same
//! requests are acknowledged and kept.

mod durable;
mod fleet;

use durable::{check_kept, one, Kept, Told, CASES};
use fleet::{add_key, Fleet};
use qore_testkit::chat::chat_answer;

const BREAK: &str = "
    CREATE TRIGGER no_turns BEFORE INSERT ON turns BEGIN SELECT RAISE(ABORT, 'disk says no'); END;
    CREATE TRIGGER no_responses BEFORE INSERT ON responses
        BEGIN SELECT RAISE(ABORT, 'disk says no'); END;";
const MEND: &str = "DROP TRIGGER no_turns; DROP TRIGGER no_responses;";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_refuses_the_write_is_never_acknowledged_in_any_dialect() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let fleet = Fleet::start_with(
        &path.to_string_lossy(),
        1,
        chat_answer("kept answer"),
        |_| {},
    )
    .await;
    let key = add_key(&*fleet.stores[0], "ledger", |_| {}).await;
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(BREAK).unwrap();
    for (i, (dialect, stream)) in CASES.into_iter().enumerate() {
        let tag = format!("broken-{i}");
        let told = one(&fleet, 0, &key, dialect, stream, &tag).await;
        let case = format!("{dialect:?} stream={stream}");
        match &told {
            Told::Refused { status, message } => {
                // The status is out before a stream's first byte; a whole answer gets 500.
                assert_eq!(*status, if stream { 200 } else { 500 }, "{case}: {told:?}");
                let what = match dialect {
                    durable::Dialect::Responses => "storing a response",
                    _ => "keeping a turn",
                };
                assert!(message.contains(what), "{case}: {message}");
            }
            other => panic!("{case}: {other:?}"),
        }
        let name = format!("s-{tag}");
        if let Ok(session) = fleet.stores[0].session(&name).await {
            let turns = fleet.stores[0].turns(&session.id).await.unwrap();
            assert!(turns.is_empty(), "{case}: {turns:?}");
        }
    }
    assert!(fleet.stores[0].responses().await.unwrap().is_empty());

    db.execute_batch(MEND).unwrap();
    for (i, (dialect, stream)) in CASES.into_iter().enumerate() {
        let told = one(&fleet, 0, &key, dialect, stream, &format!("mended-{i}")).await;
        let Told::Acknowledged(kept) = told else {
            panic!("{dialect:?} stream={stream}: {told:?}");
        };
        if let Kept::Response(id) = &kept {
            assert!(id.starts_with("resp_"), "{id}");
        }
        check_kept(&fleet, 0, &key, &kept).await.unwrap();
    }
    fleet.stop().await;
}
