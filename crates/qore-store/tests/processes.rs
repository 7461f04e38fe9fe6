//! The store across real processes: a writer killed with SIGKILL mid-write, and two writers
//! on one file at once. The children are this test binary re-executed with `CHILD_ROLE` set,
//! which turns [`child_writer`] from a no-op into the writer.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{stored_messages, tool_rounds_turn};
use qore_core::Message;
use qore_store::{check_well_formed, NewSession, Store};

const CHILD_ROLE: &str = "QORE_STORE_TEST_CHILD";
const CHILD_DB: &str = "QORE_STORE_TEST_DB";
const CHILD_NAME: &str = "QORE_STORE_TEST_NAME";
const CHILD_TURNS: &str = "QORE_STORE_TEST_TURNS";
const CHILD_ROUNDS: &str = "QORE_STORE_TEST_ROUNDS";

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

/// In a child: open the store, find or create the session named `CHILD_NAME`, append turns
/// numbered after its last one (`CHILD_TURNS` of them, or without end), print
/// `committed N` after each commit. In the test run itself: nothing.
#[test]
fn child_writer() {
    if std::env::var_os(CHILD_ROLE).is_none() {
        return;
    }
    let mut store = Store::open(var(CHILD_DB)).unwrap();
    let name = var(CHILD_NAME);
    let id = match store.session(&name) {
        Ok(info) => info.id,
        Err(_) => {
            let new = NewSession {
                name: Some(name),
                ..NewSession::default()
            };
            store.create_session(&new).unwrap()
        }
    };
    let first = store.turn_ids(&id).unwrap().len() as u64 + 1;
    let last = var(CHILD_TURNS)
        .parse()
        .map_or(u64::MAX, |n: u64| first + n - 1);
    let rounds = var(CHILD_ROUNDS).parse().unwrap_or(1);
    let mut out = std::io::stdout().lock();
    for n in first..=last {
        store.append_turn(&id, &turn(n, rounds)).unwrap();
        writeln!(out, "committed {n}").unwrap();
        out.flush().unwrap();
    }
}

/// Turn `n` of the writers: `rounds` tool rounds with short results.
fn turn(n: u64, rounds: usize) -> qore_store::TurnRecord {
    tool_rounds_turn(n, rounds, 64)
}

fn spawn_writer(db: &Path, name: &str, turns: Option<u64>, rounds: usize) -> Child {
    let exe = std::env::current_exe().unwrap();
    Command::new(exe)
        .args(["child_writer", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ROLE, "writer")
        .env(CHILD_DB, db)
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
fn check_session(db: &Path, name: &str, rounds: usize) -> u64 {
    let store = Store::open(db).unwrap();
    let info = store.session(name).unwrap();
    let n = info.turn_count as u64;
    let expected: Vec<Message> = (1..=n)
        .flat_map(|k| stored_messages(&turn(k, rounds)))
        .collect();
    let history = store.history(&info.id).unwrap();
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
}

fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap()
}

#[test]
fn a_writer_killed_mid_write_loses_at_most_the_turn_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("qore.db");
    // 402 messages a turn, so most of the writer's time is spent inside a turn's write.
    let rounds = 200;
    let mut seen = 0;
    // Several kills at different points; each child continues the session the last one left.
    for (pause_ms, wait_for) in [(0, 3), (1, 2), (2, 4), (3, 2), (5, 3)] {
        let mut child = spawn_writer(&db, "crash", None, rounds);
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
        assert_eq!(integrity(&db), "ok");
        let stored = check_session(&db, "crash", rounds);
        assert!(
            stored >= seen,
            "{stored} turns stored, {seen} reported committed"
        );
        seen = stored;
    }
    // The store stays writable after the crashes.
    let mut store = Store::open(&db).unwrap();
    let id = store.session("crash").unwrap().id;
    store.append_turn(&id, &turn(seen + 1, rounds)).unwrap();
    assert_eq!(check_session(&db, "crash", rounds), seen + 1);
}

#[test]
fn two_processes_writing_different_sessions_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fresh/qore.db");
    let turns = 60;
    // Both open a file that does not exist yet, so they also race to create and migrate it.
    let mut children = [
        spawn_writer(&db, "left", Some(turns), 1),
        spawn_writer(&db, "right", Some(turns), 1),
    ];
    for child in &mut children {
        assert_eq!(read_commits(child, |_| false), turns);
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(integrity(&db), "ok");
    for name in ["left", "right"] {
        assert_eq!(check_session(&db, name, 1), turns);
    }
}
