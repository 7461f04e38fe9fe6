//! The HTTP surface: the routes, and the handlers that only pick a dialect (`chat`,
//! `messages`) or render (`metrics`); every chat request then takes the one path of
//! [`crate::answer`]. This module is the top of the handlers: none of them depends on it.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::answer::answer;
use crate::state::{App, CHAT, MESSAGES};

/// The routes.
pub fn routes(app: Arc<App>) -> axum::Router {
    axum::Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/chat/completions", post(chat))
        .route("/v1/messages", post(messages))
        .route(
            "/v1/messages/count_tokens",
            post(crate::extra::count_tokens),
        )
        .route("/v1/responses", post(crate::stored::create))
        .route("/responses", post(crate::stored::create))
        .route(
            "/v1/responses/{id}",
            get(crate::stored::retrieve).delete(crate::stored::delete),
        )
        .route("/v1/completions", post(crate::fim::completions))
        .route("/completions", post(crate::fim::completions))
        .route("/v1/models", get(crate::extra::models))
        .route("/models", get(crate::extra::models))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(crate::extra::ready))
        .route("/metrics", get(metrics))
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(app.clone())
        .merge(crate::admin::routes(app))
}

async fn chat(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let hook = crate::named_session::session_hook(&app, &headers);
    answer(app, &CHAT, headers, body, hook).await
}

async fn messages(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let hook = crate::named_session::session_hook(&app, &headers);
    answer(app, &MESSAGES, headers, body, hook).await
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let mut response = app.metrics.render().into_response();
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}
