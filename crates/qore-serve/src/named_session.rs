//! `x-qore-session` on Chat Completions and Messages: the exchange is kept in the session
//! the header names. Those clients send the whole conversation each time, so nothing is
//! prepended; a finished answer appends the turn once it is whole.
//!
//! The session is looked up in the store at each append (nothing is kept in the process), so
//! servers sharing a store keep one conversation whichever of them answers; two servers
//! creating the same named session at once end with one, holding both turns.
//!
//! Durable before acknowledged: the turn is committed before the caller is told the answer
//! (the 200, or the stream's last chunk and `[DONE]` / `message_stop`). When it cannot be
//! (the store is down), the caller gets a 503 with `Retry-After` in its dialect, or the
//! stream ends in the dialect's error event, and the session does not hold the turn. An
//! answer that is not a whole turn yet (it calls the caller's tools) keeps nothing and
//! succeeds: the request that brings the tools' results keeps the turn. The hook names the
//! session it appended to, for the request log.

use std::sync::Arc;

use axum::http::HeaderMap;
use qore_core::{Message, Role, StreamOutcome};
use qore_store::{NewSession, Store, StoreError};

use crate::answer::Prepare;
use crate::exchange::After;
use crate::state::App;
use crate::stored::whole_turn;
use crate::{Inbound, ReplyMeta};

/// For Chat Completions and Messages: the exchange is kept in the session the
/// `x-qore-session` header names (by id, name or unique id prefix; a name not found starts
/// a session of that name). Those clients send the whole conversation each time, so nothing
/// is prepended; a finished answer appends the turn — from the request's last prompt to the
/// answer, tool rounds included — once it is whole (an answer that calls the caller's tools
/// waits for the request that brings their results).
pub fn session_hook(app: &Arc<App>, headers: &HeaderMap) -> Prepare {
    let named = (headers.get("x-qore-session"))
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty());
    let app = app.clone();
    Box::new(move |inbound, _caller| {
        Box::pin(async move {
            let after = named.and_then(|name| after_for(app, name, &inbound));
            Ok((inbound, after))
        })
    })
}

/// What keeps the exchange of `inbound` in the session `name` once it has finished.
fn after_for(app: Arc<App>, name: String, inbound: &Inbound) -> Option<After> {
    let messages: Vec<Message> = (inbound.history.iter())
        .filter(|m| m.role != Role::System)
        .cloned()
        .collect();
    let prompt = messages.iter().rposition(|m| {
        m.role == Role::User
            && !(m.blocks.iter()).any(|b| matches!(b, qore_core::ContentBlock::ToolResult { .. }))
    })?;
    let open: Vec<Message> = messages[prompt..].to_vec();
    let model = inbound.model.clone();
    Some(Box::new(move |outcome: StreamOutcome, _meta: ReplyMeta| {
        Box::pin(async move {
            let StreamOutcome::Finished { message, usage, .. } = outcome else {
                return Ok(None);
            };
            let mut open = open;
            open.push(message);
            let project = app.settings.root.clone();
            let store = app.gate.store();
            let saved = append_named(&**store, &name, project, open, &model, &usage).await;
            saved.map_err(|err| {
                tracing::warn!("turn not kept in session {name:?} (answered as failed): {err}");
                app.gate
                    .store_failed("keeping a turn in a named session", &err)
            })
        })
    }))
}

async fn append_named(
    store: &dyn Store,
    name: &str,
    project: Option<std::path::PathBuf>,
    open: Vec<Message>,
    model: &str,
    usage: &qore_core::Usage,
) -> Result<Option<String>, StoreError> {
    let Some(turn) = whole_turn(&open, model, usage) else {
        // Not whole yet (the answer calls the caller's tools): the next request brings it.
        return Ok(None);
    };
    let session = match store.session(name).await {
        Ok(found) => found.id,
        Err(e) if e.is_unavailable() => return Err(e),
        Err(_) => {
            let new = NewSession {
                name: Some(name.to_owned()),
                project_dir: project,
                model: Some(model.to_owned()),
                ..NewSession::default()
            };
            match store.create_session(&new).await {
                Ok(id) => id,
                // Another server created it meanwhile: that one.
                Err(StoreError::NameTaken(_)) => store.session(name).await?.id,
                Err(e) => return Err(e),
            }
        }
    };
    store.append_turn(&session, &turn).await?;
    Ok(Some(session))
}
