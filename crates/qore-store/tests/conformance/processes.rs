//! The store across real processes: a writer killed with SIGKILL mid-write leaves only whole
//! turns (and the store writable), and two writers at once on a store nobody has opened yet
//! both succeed. The writers are this test binary re-executed with `CHILD_ROLE` set, which
//! turns the runner's `processes::child_writer` test from a no-op into the writer; they are
//! given the store's location, so the same cases run on every backend.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::ExitStatusExt as _;
use std::process::{Child, Command, Stdio};

use qore_core::Message;
use qore_store::{check_well_formed, is_postgres, NewSession, TurnRecord};

use crate::common::{stored_messages, tool_rounds_turn};

const CHILD_ROLE: &str = "QORE_STORE_TEST_CHILD";
const CHILD_LOCATION: &str = "QORE_STORE_TEST_LOCATION";
const CHILD_NAME: &str = "QORE_STORE_TEST_NAME";
const CHILD_TURNS: &str = "QORE_STORE_TEST_TURNS";
const CHILD_ROUNDS: &str = "QORE_STORE_TEST_ROUNDS";

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// In a child: open the store, find or create the session named `CHILD_NAME`, append turns
/// numbered after its last one (`CHILD_TURNS` of them, or without end), print
/// `committed N` after each commit. In the test run itself: nothing.
pub fn child_writer() {
    if std::env::var_os(CHILD_ROLE).is_none() {
        return;
    }
    runtime().block_on(async {
        let store = crate::conformance::open(&var(CHILD_LOCATION)).await;
        let name = var(CHILD_NAME);
        let id = match store.session(&name).await {
            Ok(info) => info.id,
            Err(_) => {
                let new = NewSession {
                    name: Some(name),
                    ..NewSession::default()
                };
                store.create_session(&new).await.unwrap()
            }
        };
        let first = store.turn_ids(&id).await.unwrap().len() as u64 + 1;
        let last = var(CHILD_TURNS)
            .parse()
            .map_or(u64::MAX, |n: u64| first + n - 1);
        let rounds = var(CHILD_ROUNDS).parse().unwrap_or(1);
        for n in first..=last {
            store.append_turn(&id, &turn(n, rounds)).await.unwrap();
            let mut out = std::io::stdout().lock();
            writeln!(out, "committed {n}").unwrap();
            out.flush().unwrap();
        }
    });
}

/// Turn `n` of the writers: `rounds` tool rounds with short results.
fn turn(n: u64, rounds: usize) -> TurnRecord {
    tool_rounds_turn(n, rounds, 64)
}

fn spawn_writer(location: &str, name: &str, turns: Option<u64>, rounds: usize) -> Child {
    let exe = std::env::current_exe().unwrap();
    Command::new(exe)
        .args([
            "processes::child_writer",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ROLE, "writer")
        .env(CHILD_LOCATION, location)
        .env(CHILD_NAME, name)
        .env(
            CHILD_TURNS,
            turns.map(|n| n.to_string()).unwrap_or_default(),
        )
        .env(CHILD_ROUNDS, rounds.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The numbers a child reported committed, read until `stop` returns true or the child ends.
fn read_commits(child: &mut Child, mut stop: impl FnMut(u64) -> bool) -> u64 {
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut last = 0;
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap() > 0 {
        if let Some(n) = line.strip_prefix("committed ") {
            last = n.trim().parse().unwrap();
            if stop(last) {
                break;
            }
        }
        line.clear();
    }
    // Kept open: a child writing to a closed pipe would die of that, not of the kill.
    child.stdout = Some(stdout.into_inner());
    last
}

/// Check a session holds turns 1..=n exactly as written, whole, and well-formed.
fn check_session(location: &str, name: &str, rounds: usize) -> u64 {
    runtime().block_on(async {
        let store = crate::conformance::open(location).await;
        let info = store.session(name).await.unwrap();
        let n = info.turn_count as u64;
        let expected: Vec<Message> = (1..=n)
            .flat_map(|k| stored_messages(&turn(k, rounds)))
            .collect();
        let history = store.history(&info.id).await.unwrap();
        assert_eq!(
            history.len(),
            expected.len(),
            "session {name}: the stored messages of {n} turns"
        );
        assert!(
            history.messages() == &expected[..],
            "session {name}: messages differ"
        );
        for turn in history.messages().chunks(2 + 2 * rounds) {
            check_well_formed(&turn.iter().collect::<Vec<_>>()).unwrap();
        }
        n
    })
}

/// The backend's own check of its files where it has one (SQLite's `integrity_check`); a
/// PostgreSQL server recovers a cut connection's transaction itself.
fn check_integrity(location: &str) {
    if is_postgres(location) {
        return;
    }
    let conn = rusqlite::Connection::open(location).unwrap();
    let result: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(result, "ok");
}

pub fn a_writer_killed_mid_write(location: &str) {
    // 402 messages a turn, so most of the writer's time is spent inside a turn's write.
    let rounds = 200;
    let mut seen = 0;
    // Several kills at different points; each child continues the session the last one left.
    for (pause_ms, wait_for) in [(0, 3), (1, 2), (2, 4), (3, 2), (5, 3)] {
        let mut child = spawn_writer(location, "crash", None, rounds);
        let before = seen;
        seen = read_commits(&mut child, |n| n >= before + wait_for);
        // Varies where in its next turn the writer is hit; nothing is asserted about time.
        std::thread::sleep(std::time::Duration::from_millis(pause_ms));
        child.kill().unwrap(); // SIGKILL on Unix
        let status = child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(9),
            "the writer must die of the kill: {status}"
        );
        check_integrity(location);
        let stored = check_session(location, "crash", rounds);
        assert!(
            stored >= seen,
            "{stored} turns stored, {seen} reported committed"
        );
        seen = stored;
    }
    // The store stays writable after the crashes.
    runtime().block_on(async {
        let store = crate::conformance::open(location).await;
        let id = store.session("crash").await.unwrap().id;
        store
            .append_turn(&id, &turn(seen + 1, rounds))
            .await
            .unwrap();
    });
    assert_eq!(check_session(location, "crash", rounds), seen + 1);
}

pub fn two_writers_at_once(location: &str) {
    let turns = 60;
    // Both open a store nobody has opened yet, so they also race to create and migrate it.
    let mut children = [
        spawn_writer(location, "left", Some(turns), 1),
        spawn_writer(location, "right", Some(turns), 1),
    ];
    for child in &mut children {
        assert_eq!(read_commits(child, |_| false), turns);
        assert!(child.wait().unwrap().success());
    }
    check_integrity(location);
    for name in ["left", "right"] {
        assert_eq!(check_session(location, name, 1), turns);
    }
}
