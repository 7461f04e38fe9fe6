//! `/diff`: what the last turn changed, one unified diff per file (qore-session's
//! [`last_turn_changes`]), coloured when stdout is a terminal that takes colours.
//!
//! Promises: every file the turn's tools wrote is shown whole, sorted by path (a file the
//! turn created as all additions, one it removed as all removals); a file changed since the
//! turn is shown as it is now, saying so; a file whose earlier content was not recorded, or
//! that is binary, is named without a diff; calls whose changes are not recorded
//! (`run_command`) are named; a turn that changed nothing says "no changes in the last turn".

use qore_core::ErrorInfo;
use qore_session::turn_changes::{last_turn_changes, ChangedFile};
use serde_json::{json, Value};

use super::conversation::Conversation;
use crate::console::styled_stdout;
use crate::diff::{coloured, file_diff};

/// `/diff`: the JSON line's type and fields, and the text.
pub async fn last_turn(
    conversation: &Conversation,
) -> Result<(&'static str, Value, String), ErrorInfo> {
    let (Some(id), Some(store)) = (conversation.id(), conversation.store()) else {
        return Err(ErrorInfo::config(
            "an ephemeral chat keeps no record of what its turns changed",
        ));
    };
    let project = (conversation.project())
        .ok_or_else(|| ErrorInfo::config("no project directory to compare files in"))?;
    let told = last_turn_changes(store.as_ref(), id, &project).await;
    let told = told.map_err(|error| ErrorInfo::config(error.to_string()))?;
    let Some(turn) = told else {
        let text = "no turn yet in this session\n".to_owned();
        return Ok(("diff", json!({"turn": null, "files": []}), text));
    };
    let styled = styled_stdout();
    let mut text = String::new();
    let mut files = Vec::new();
    for file in &turn.files {
        let (diff, note) = shown(file);
        text.push_str(&note);
        text.push_str(&coloured(&diff, styled));
        files.push(json!({"path": file.path, "diff": diff, "note": note.trim_end()}));
    }
    if !turn.unrecorded_calls.is_empty() {
        text.push_str(&format!(
            "The turn also ran {}; what that changed is not recorded.\n",
            turn.unrecorded_calls.join(", ")
        ));
    }
    if text.is_empty() {
        text.push_str("no changes in the last turn\n");
    }
    let fields = json!({
        "turn": turn.seq, "files": files, "unrecorded_calls": turn.unrecorded_calls,
    });
    Ok(("diff", fields, text))
}

/// One file's diff (empty when none can be shown) and a note about it (empty or a line).
fn shown(file: &ChangedFile) -> (String, String) {
    let path = &file.path;
    if !file.before_recorded {
        let note = format!("`{path}`: what it held before the turn was too large to record\n");
        return (String::new(), note);
    }
    let (Some(before), Some(now)) = (text(&file.before), text(&file.now)) else {
        return (String::new(), format!("`{path}`: a binary file changed\n"));
    };
    let diff = file_diff(path, before, now.unwrap_or_default());
    let note = match file.changed_since {
        true => format!("`{path}` was changed after the turn; shown as it is now\n"),
        false => String::new(),
    };
    (diff, note)
}

/// `bytes` as text: `Some(None)` for no file, `None` when they are not UTF-8.
fn text(bytes: &Option<Vec<u8>>) -> Option<Option<&str>> {
    match bytes {
        None => Some(None),
        Some(bytes) => std::str::from_utf8(bytes).ok().map(Some),
    }
}
