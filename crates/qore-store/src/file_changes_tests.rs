use super::*;
use crate::schema::V1;

#[test]
fn bad_changes_are_named() {
    let change = |path: &str, restorable, before: Option<&[u8]>| FileChange {
        path: path.into(),
        before: before.map(<[u8]>::to_vec),
        after_hash: Some("00".into()),
        restorable,
    };
    let cases = [
        (vec![change("", true, None)], "relative"),
        (vec![change("/etc/passwd", true, None)], "relative"),
        (
            vec![change("a", true, None), change("a", true, None)],
            "twice",
        ),
        (vec![change("big", false, Some(b"x"))], "not restorable"),
    ];
    for (changes, reason) in cases {
        let why = check(&changes).unwrap_err().to_string();
        assert!(why.contains(reason), "{why}");
    }
    assert!(check(&[change("a", true, None), change("b", false, None)]).is_ok());
}

#[test]
fn a_version_1_database_migrates_and_keeps_its_turns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    let old = Connection::open(&path).unwrap();
    old.execute_batch(V1).unwrap();
    old.execute_batch(
        r#"INSERT INTO sessions (id, created_at, updated_at) VALUES ('s1', 1, 1);
           INSERT INTO turns (session_id, seq, started_at, finished_at, usage, status)
             VALUES ('s1', 1, 1, 2, '{}', 'finished');
           INSERT INTO messages (turn_id, seq, role, content) VALUES
             (1, 1, 'user', '{"role":"user","blocks":[{"type":"text","text":"hi"}]}'),
             (1, 2, 'assistant', '{"role":"assistant","blocks":[{"type":"text","text":"yo"}]}');
           PRAGMA user_version = 1;"#,
    )
    .unwrap();
    drop(old);
    let store = Db::open(&path).unwrap();
    assert_eq!(
        crate::schema_version(&store.conn).unwrap(),
        crate::SCHEMA_VERSION
    );
    let last = store.last_undoable_turn("s1").unwrap().unwrap();
    assert_eq!((last.seq, last.file_changes.len()), (1, 0));
    assert_eq!(last.messages[1].text(), "yo");
    assert_eq!(store.history("s1").unwrap().len(), 2);
    let tables: i64 = (store.conn)
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'file_changes'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1);
}
