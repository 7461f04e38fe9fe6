//! The console's server side: under `/admin/v1/…`, the admin API (see docs/console.md):
//! health, keys, usage, the request log, conversations, agents and models, each behind an
//! admin credential ([`auth`], checked by the [`call::Admin`] extractor).
//!
//! Promises: the page is served where [`ConsoleSettings`] says (crate::console_settings);
//! every admin call needs an admin credential or the console's cookie, and one that
//! changes something without a key must come from the console's own origin.

pub mod auth;
pub mod call;
mod catalog;
mod conversations;
mod health;
pub mod http;
mod keys;
pub mod session;
pub mod ui;
mod usage;

use std::sync::Arc;

use axum::routing::{get, patch, post};

pub use crate::console_settings::{ConsoleSettings, DEFAULT_CONSOLE_PATH};
use crate::state::App;

/// The admin API's routes under `/admin/v1` (see docs/console.md).
pub fn routes(app: Arc<App>) -> axum::Router {
    let started = std::time::Instant::now();
    let api = axum::Router::new()
        .route("/health", get(health::handler(started)))
        .route("/keys", get(keys::list).post(keys::create))
        .route("/keys/{id}", patch(keys::change))
        .route("/keys/{id}/revoke", post(keys::revoke))
        .route("/usage", get(usage::usage))
        .route("/requests", get(usage::requests))
        .route("/requests/{id}", get(usage::request))
        .route("/conversations", get(conversations::list))
        .route("/conversations/{id}", get(conversations::one))
        .route("/agents", get(catalog::agents))
        .route("/models", get(catalog::models))
        .route("/session", post(session::login).delete(session::logout))
        .layer(axum::middleware::from_fn(same_origin_for_cookies));
    let page = ui::routes(&app.settings.console);
    axum::Router::new()
        .nest("/admin/v1", api)
        .merge(page)
        .with_state(app)
}

/// A call that changes something without a key in its headers (the console's cookie, or
/// nothing) must come from the same origin (CSRF): else 403.
async fn same_origin_for_cookies(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let keyed = !crate::gate::presented_keys(request.headers()).is_empty();
    if !keyed && !session::same_origin(request.method(), request.headers()) {
        use axum::response::IntoResponse as _;
        let refused = http::AdminError::status(
            axum::http::StatusCode::FORBIDDEN,
            "a console call that changes something must come from the console's own origin",
        );
        return refused.into_response();
    }
    next.run(request).await
}
