//! One stored turn whose calls ran through the real built-in tools, with the recorder's
//! record of what they changed (for the undo and turn-changes tests).

use std::sync::Arc;
use std::time::SystemTime;

use qore_core::{CancellationToken, ContentBlock, Message, Role, Tool, Usage};
use qore_session::undo::take_changes;
use qore_store::{Store, TurnRecord, TurnStatus};
use qore_tools::ChangeRecorder;
use serde_json::Value;

/// Run each of `calls` through its tool of `tools`, then append the turn to `session` with
/// `recorder`'s record.
pub async fn stored_turn(
    store: &dyn Store,
    session: &str,
    tools: &[Arc<dyn Tool>],
    recorder: &ChangeRecorder,
    calls: &[(&str, Value)],
) {
    let mut replies = Vec::new();
    for (n, (name, input)) in calls.iter().enumerate() {
        let tool = tools.iter().find(|t| t.spec().name == *name).unwrap();
        let out = tool.call(input.clone(), CancellationToken::new()).await;
        let id = format!("call-{n}");
        let call = ContentBlock::tool_use(id.clone(), name.to_string(), input.clone());
        let result = ContentBlock::tool_result(id, out.text_content(), out.is_error);
        replies.push(Message::new(Role::Assistant, vec![call]));
        replies.push(Message::new(Role::User, vec![result]));
    }
    replies.push(Message::assistant("done"));
    let record = TurnRecord {
        user: Message::user("change the files"),
        replies,
        usage: Usage::default(),
        model: None,
        agent: None,
        started_at: SystemTime::now(),
        finished_at: SystemTime::now(),
        status: TurnStatus::Finished,
        file_changes: take_changes(recorder),
    };
    store.append_turn(session, &record).await.unwrap();
}
