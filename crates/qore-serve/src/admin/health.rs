//! `/admin/v1/health`: the version, the store's backend, whether it answers, the uptime.

use std::time::Instant;

use serde_json::json;

use super::call::Admin;
use super::http::{ok, Answer};

pub async fn health(call: Admin, started: Instant) -> Answer {
    let store = call.store();
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
) -> impl Fn(Admin) -> futures_util::future::BoxFuture<'static, Answer> + Clone {
    move |call| Box::pin(health(call, started))
}
