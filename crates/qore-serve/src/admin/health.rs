//! `/admin/v1/health`: the version, the store's backend, whether it answers, the uptime.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::json;

use super::auth;
use super::http::{ok, Answer};
use crate::state::App;

pub async fn health(app: Arc<App>, started: Instant, headers: HeaderMap) -> Answer {
    let store = app.gate.store();
    auth::check(&**store, &headers).await?;
    let backend = if qore_store::is_postgres(&store.location()) {
        "postgresql"
    } else {
        "sqlite"
    };
    let answers = store.ping().await.is_ok();
    ok(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "store": {"backend": backend, "answers": answers},
        "uptime_secs": started.elapsed().as_secs(),
    }))
}

/// The handler with the server's start time.
pub fn handler(
    started: Instant,
) -> impl Fn(State<Arc<App>>, HeaderMap) -> futures_util::future::BoxFuture<'static, Answer> + Clone
{
    move |State(app), headers| Box::pin(health(app, started, headers))
}
