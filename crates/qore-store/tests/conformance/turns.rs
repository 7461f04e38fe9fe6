//! Turns: each comes back as the record it was appended from (times, usage, status,
//! messages, `seq`, undone flag), an undone turn stays stored but leaves the history, a
//! failed or cancelled turn is kept without its partial answer, and a malformed turn is
//! refused with its reason and writes nothing.

use std::sync::Arc;

use qore_core::{ContentBlock, Message, Role, ToolResultPart};
use qore_store::{NewSession, Store, StoreError, TurnId, TurnRecord, TurnStatus};

use crate::common::{stored_messages, tool_turn};

pub async fn turns_come_back_as_they_were_appended(store: Arc<dyn Store>) {
    let id = store.create_session(&NewSession::default()).await.unwrap();
    assert_eq!(store.turns(&id).await.unwrap(), Vec::new());
    assert_eq!(store.last_undoable_turn(&id).await.unwrap(), None);
    let failed = TurnRecord {
        status: TurnStatus::Failed,
        replies: Vec::new(),
        ..tool_turn(2, 5)
    };
    let cancelled = TurnRecord {
        status: TurnStatus::Cancelled,
        ..tool_turn(3, 5)
    };
    let appended = [tool_turn(1, 10), failed, cancelled];
    let mut ids = Vec::new();
    for turn in &appended {
        ids.push(store.append_turn(&id, turn).await.unwrap());
    }
    assert_eq!(store.turn_ids(&id).await.unwrap(), ids);
    store.mark_undone(ids[0]).await.unwrap();

    let other = crate::conformance::open(&store.location()).await;
    let turns = other.turns(&id).await.unwrap();
    assert_eq!(turns.len(), 3);
    let mut cancelled_stored = appended[2].clone();
    cancelled_stored.replies.pop(); // its partial answer is never stored
                                    // (the record the stored turn must equal, undone)
    let expected = [
        (&appended[0], true),
        (&appended[1], false),
        (&cancelled_stored, false),
    ];
    for (n, (turn, (record, undone))) in turns.iter().zip(expected).enumerate() {
        assert_eq!(&turn.record, record, "turn {n}");
        assert_eq!(turn.undone, undone, "turn {n}");
        assert_eq!(turn.seq, n as i64 + 1);
        assert_eq!(turn.id, ids[n]);
    }
    let history: Vec<Message> = (turns.iter().filter(|t| !t.undone))
        .flat_map(|t| stored_messages(&t.record))
        .collect();
    assert_eq!(other.history(&id).await.unwrap().messages(), &history[..]);
}

pub async fn an_undone_turn_stays_stored_but_leaves_the_history(store: Arc<dyn Store>) {
    let id = store.create_session(&NewSession::default()).await.unwrap();
    let first = tool_turn(1, 1);
    store.append_turn(&id, &first).await.unwrap();
    let second = store.append_turn(&id, &tool_turn(2, 1)).await.unwrap();
    store.mark_undone(second).await.unwrap();
    assert_eq!(
        store.history(&id).await.unwrap().messages(),
        &stored_messages(&first)[..]
    );
    let info = store.session(&id).await.unwrap();
    assert_eq!((info.turn_count, info.message_count), (2, 8));
    assert_eq!(
        info.last_usage,
        Some(first.usage),
        "the undone turn's usage is not the last"
    );
    // A turn appended after an undone one takes the next seq.
    store.append_turn(&id, &tool_turn(3, 1)).await.unwrap();
    let seqs: Vec<i64> = (store.turns(&id).await.unwrap().iter())
        .map(|t| t.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert!(matches!(
        store.mark_undone(TurnId(999_999)).await,
        Err(StoreError::NoSuchTurn(999_999))
    ));
}

pub async fn a_failed_or_cancelled_turn_is_kept_without_its_partial_answer(store: Arc<dyn Store>) {
    let id = store.create_session(&NewSession::default()).await.unwrap();
    for status in [TurnStatus::Failed, TurnStatus::Cancelled] {
        let mut turn = tool_turn(1, 1);
        turn.status = status;
        turn.replies[2] = Message::assistant("half an ans");
        store.append_turn(&id, &turn).await.unwrap();
    }
    let history = store.history(&id).await.unwrap();
    assert_eq!(history.len(), 6);
    assert!(history.iter().all(|m| m.text() != "half an ans"));
    let statuses: Vec<TurnStatus> = (store.turns(&id).await.unwrap().iter())
        .map(|t| t.record.status)
        .collect();
    assert_eq!(statuses, [TurnStatus::Failed, TurnStatus::Cancelled]);
}

fn result(id: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.into(),
        content: vec![ToolResultPart::Text { text: "ok".into() }],
        is_error: false,
    }
}

pub async fn a_malformed_turn_is_refused_and_nothing_is_written(store: Arc<dyn Store>) {
    type Break = fn(&mut TurnRecord);
    let cases: [(&str, Break, &str); 7] = [
        ("no result", |t| t.replies.truncate(1), "has no result"),
        (
            "stray result",
            |t| t.replies[1].blocks.push(result("other")),
            "answers no open call",
        ),
        (
            "system reply",
            |t| t.replies[2].role = Role::System,
            "system message",
        ),
        (
            "opens as assistant",
            |t| t.user.role = Role::Assistant,
            "open with a user message",
        ),
        (
            "text among results",
            |t| t.replies[1].blocks.push(ContentBlock::text("x")),
            "mixes",
        ),
        (
            "ends on results",
            |t| {
                t.replies.pop();
            },
            "must end with an assistant",
        ),
        (
            "partial keeps a call open",
            |t| {
                t.status = TurnStatus::Cancelled;
                t.replies.remove(1);
            },
            "has no result",
        ),
    ];
    let id = store.create_session(&NewSession::default()).await.unwrap();
    for (name, break_turn, reason) in cases {
        let mut turn = tool_turn(1, 1);
        break_turn(&mut turn);
        match store.append_turn(&id, &turn).await {
            Err(StoreError::MalformedTurn(why)) => assert!(why.contains(reason), "{name}: {why}"),
            other => panic!("{name}: expected a refusal, got {other:?}"),
        }
    }
    assert!(store.history(&id).await.unwrap().is_empty());
    assert_eq!(store.turns(&id).await.unwrap(), Vec::new());
    assert_eq!(store.session(&id).await.unwrap().title, None);
    assert!(matches!(
        store.append_turn("no-such", &tool_turn(1, 1)).await,
        Err(StoreError::NotFound(_))
    ));
}
