//! `x-qore-session` on Chat Completions and Messages: the exchange is kept in the session
//! the header names. Those clients send the whole conversation each time, so nothing is
//! prepended; a finished answer appends the turn once it is whole.

use axum::http::HeaderMap;
use qore_core::{Message, Role, StreamOutcome};
use qore_store::{NewSession, Store};

use crate::app::App;
use crate::exchange::After;
use crate::gate::Caller;
use crate::stored::whole_turn;
use crate::{Inbound, ReplyMeta, ServeError};

/// For Chat Completions and Messages: the exchange is kept in the session the
/// `x-qore-session` header names (by id, name or unique id prefix; a name not found starts
/// a session of that name). Those clients send the whole conversation each time, so nothing
/// is prepended; a finished answer appends the turn — from the request's last prompt to the
/// answer, tool rounds included — once it is whole (an answer that calls the caller's tools
/// waits for the request that brings their results).
pub fn session_hook(
    app: &App,
    headers: &HeaderMap,
) -> impl FnOnce(&mut Inbound, &Caller) -> Result<Option<After>, ServeError> + Send + 'static {
    let named = (headers.get("x-qore-session"))
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty());
    let store = app.manager.store().cloned();
    let project = app.settings.root.clone();
    move |inbound: &mut Inbound, _caller: &Caller| {
        let (Some(name), Some(store)) = (named, store) else {
            return Ok(None);
        };
        let messages: Vec<Message> = (inbound.history.iter())
            .filter(|m| m.role != Role::System)
            .cloned()
            .collect();
        let prompt = messages.iter().rposition(|m| {
            m.role == Role::User
                && !(m.blocks.iter())
                    .any(|b| matches!(b, qore_core::ContentBlock::ToolResult { .. }))
        });
        let Some(prompt) = prompt else {
            return Ok(None);
        };
        let open: Vec<Message> = messages[prompt..].to_vec();
        let model = inbound.model.clone();
        Ok(Some(Box::new(
            move |outcome: &StreamOutcome, _meta: &ReplyMeta| {
                let StreamOutcome::Finished { message, usage, .. } = outcome else {
                    return;
                };
                let mut open = open;
                open.push(message.clone());
                let saved = tokio::task::block_in_place(|| {
                    let mut store = store.lock().unwrap_or_else(|p| p.into_inner());
                    append_named(&mut store, &name, project, open, &model, usage)
                });
                if let Err(err) = saved {
                    tracing::warn!("turn not kept in session {name:?}: {err}");
                }
            },
        )))
    }
}

fn append_named(
    store: &mut Store,
    name: &str,
    project: Option<std::path::PathBuf>,
    open: Vec<Message>,
    model: &str,
    usage: &qore_core::Usage,
) -> Result<(), qore_store::StoreError> {
    let Some(turn) = whole_turn(&open, model, usage) else {
        // Not whole yet (the answer calls the caller's tools): the next request brings it.
        return Ok(());
    };
    let session = match store.session(name) {
        Ok(found) => found.id,
        Err(_) => store.create_session(&NewSession {
            name: Some(name.to_owned()),
            project_dir: project,
            model: Some(model.to_owned()),
            ..NewSession::default()
        })?,
    };
    store.append_turn(&session, &turn).map(|_| ())
}
