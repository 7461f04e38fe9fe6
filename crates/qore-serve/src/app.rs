//! The HTTP surface: routes, and the one path every chat request takes: authenticate,
//! read the body under the limit, decode in the dialect, check the key's models and limits,
//! route, open the upstream (fallbacks before the first byte), then answer whole or relay
//! the stream. Every refusal is written in the caller's dialect; none reaches a provider. A
//! store that cannot be reached on that path (the key, its limits, a stored conversation) is
//! a 503 with `Retry-After`, also in the caller's dialect; the store's own timeouts bound
//! every wait on it.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::future::BoxFuture;
use qore_client::CancellationToken;
use qore_session::SessionManager;

use crate::admission::{admit, rate_headers, Admitted};
use crate::config::ServeSettings;
use crate::dialect::anthropic::AnthropicMessages;
use crate::dialect::openai_chat::OpenAiChat;
use crate::dialect::openai_responses::OpenAiResponses;
use crate::dialect::Dialect;
use crate::exchange::{After, Exchange};
use crate::gate::{Caller, Gate};
use crate::metrics::Metrics;
use crate::relay::Relay;
use crate::route::{Baked, Router};
use crate::{server_tools, upstream, ErrorKind, Inbound, ReplyMeta, ServeError};

/// What every request handler shares.
pub struct App {
    pub manager: SessionManager,
    pub router: Router,
    pub gate: Gate,
    pub metrics: Metrics,
    pub settings: ServeSettings,
    /// Cancelled at SIGTERM: the server stops accepting and `/readyz` says so.
    pub stopping: CancellationToken,
    /// Cancelled when the drain time after SIGTERM is over: streams still open end.
    pub shutdown: CancellationToken,
    /// The tools the server runs itself, when `[serve] tools` allows any.
    pub server_tools: Option<crate::server_tools::ServerTools>,
}

pub static CHAT: OpenAiChat = OpenAiChat;
pub static MESSAGES: AnthropicMessages = AnthropicMessages;
pub static RESPONSES: OpenAiResponses = OpenAiResponses;

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

/// Prepares a decoded request before it is sent (history from the store) and returns it
/// with what runs after the turn (storing it).
pub type Prepare = Box<
    dyn FnOnce(Inbound, Caller) -> BoxFuture<'static, Result<(Inbound, Option<After>), ServeError>>
        + Send,
>;

/// The one path of a chat request in `dialect`.
pub async fn answer(
    app: Arc<App>,
    dialect: &'static dyn Dialect,
    headers: HeaderMap,
    body: Body,
    prepare: Prepare,
) -> Response {
    let endpoint = dialect.name();
    let decode = |bytes: &[u8]| {
        let mut inbound = dialect.decode(bytes, &headers)?;
        inbound.wire = dialect.wire();
        Ok(inbound)
    };
    let estimate = |inbound: &Inbound| {
        qore_session::tokens::estimate_messages(inbound.history.messages())
            + qore_session::tokens::estimate_tools(&inbound.tools)
    };
    let admitted = admit(
        &app,
        endpoint,
        &headers,
        body,
        decode,
        |i| &i.model,
        estimate,
    )
    .await;
    let Admitted {
        caller,
        request: inbound,
        mut exchange,
        admission,
    } = match admitted {
        Ok(admitted) => admitted,
        Err(refused) => return refused.respond(|error| error_response(dialect, error)),
    };
    let mut inbound = match prepare(inbound, caller).await {
        Ok((inbound, after)) => {
            exchange.after = after;
            inbound
        }
        Err(error) => return refuse(exchange, dialect, error),
    };
    let baked = Baked {
        max_tokens: inbound.max_tokens,
        temperature: inbound.temperature,
    };
    let plan = match app.router.plan(&app.manager, &inbound.model, baked).await {
        Ok(plan) => plan,
        Err(error) => return refuse(exchange, dialect, error),
    };
    if let Some(first) = plan.first() {
        if let Err(error) = crate::capability::check_images(first, &inbound).await {
            return refuse(exchange, dialect, error);
        }
    }
    let cancel = CancellationToken::new();
    let tools = app.server_tools.as_ref();
    let opened = match plan.first() {
        Some(first) if server_tools::applies(tools, &first.target, &inbound) => match tools {
            Some(tools) => server_tools::open(tools, first, &inbound, &cancel).await,
            None => upstream::open(&plan, &inbound, &cancel).await,
        },
        _ => upstream::open(&plan, &inbound, &cancel).await,
    };
    let opened = match opened {
        Ok(opened) => opened,
        Err(error) => return refuse(exchange, dialect, error),
    };
    exchange.agent = opened.candidate.agent.clone();
    exchange.note.upstream = opened.candidate.target.model.clone();
    exchange.waited = opened.waited;
    let meta = ReplyMeta {
        id: dialect.new_id(),
        model: inbound.model.clone(),
        created: now_secs(),
        include_usage: inbound.include_usage,
    };
    exchange.reply = Some(meta.clone());
    let target = &opened.candidate.target;
    if inbound.wire == target.client.protocol().name() {
        // Passed on unchanged to the caller's own vendor: not dropped after all.
        let passed = &inbound.passthrough_headers;
        inbound
            .dropped
            .retain(|d| !passed.iter().any(|(name, _)| name == d));
    }
    for hint in upstream::dropped_for(target, &inbound) {
        inbound.drop_hint(hint);
    }
    for hint in &inbound.dropped {
        app.metrics.dropped(endpoint, hint);
        tracing::debug!(
            "{endpoint}: {hint} not passed on to {}",
            opened.candidate.name
        );
    }
    let mut response = if inbound.stream {
        if let Some(qore_core::ResponseEvent::Error { error }) = &opened.first {
            // Nothing was written yet: the failure gets its status.
            let error = ServeError::from_upstream(error);
            return refuse(exchange, dialect, error);
        }
        exchange.streaming();
        let relay = Relay::new(
            opened.stream,
            opened.first,
            dialect.encoder(&meta),
            exchange,
            app.shutdown.clone(),
            cancel,
        )
        .with_limits(app.settings.streams);
        let mut response = Response::new(Body::from_stream(relay.into_body()));
        let headers = response.headers_mut();
        headers.insert(
            "content-type",
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert("cache-control", HeaderValue::from_static("no-cache"));
        response
    } else {
        let outcome = whole(opened).await;
        exchange.mark_first_byte();
        let response = match &outcome {
            qore_core::StreamOutcome::Finished { .. } => {
                // Durable before acknowledged: what the caller is told about is committed
                // first; when it cannot be, a 503 with no id.
                if let Err(error) = exchange.settle(&outcome).await {
                    return error_response(dialect, &error);
                }
                axum::Json(dialect.response(&meta, &outcome)).into_response()
            }
            qore_core::StreamOutcome::Failed { error, .. } => {
                let error = ServeError::from_upstream(error);
                // A failed turn keeps nothing: the hook has nothing to fail.
                let _ = exchange.settle(&outcome).await;
                return error_response(dialect, &error);
            }
            qore_core::StreamOutcome::Cancelled { .. } => {
                let error = ServeError::new(ErrorKind::Overloaded, "the request was cancelled");
                let _ = exchange.settle(&outcome).await;
                return error_response(dialect, &error);
            }
        };
        response
    };
    if !inbound.dropped.is_empty() {
        if let Ok(value) = HeaderValue::from_str(&inbound.dropped.join(", ")) {
            response.headers_mut().insert("x-qore-dropped", value);
        }
    }
    rate_headers(&admission, response.headers_mut());
    response
}

/// Receive the rest of an opened stream: its outcome.
async fn whole(mut opened: upstream::Opened) -> qore_core::StreamOutcome {
    use futures_util::StreamExt as _;
    while opened.stream.next().await.is_some() {}
    match opened.stream.outcome() {
        Some(outcome) => outcome.clone(),
        None => qore_core::StreamOutcome::Cancelled {
            usage: Default::default(),
        },
    }
}

fn refuse(exchange: Exchange, dialect: &dyn Dialect, error: ServeError) -> Response {
    exchange.refused(&error);
    error_response(dialect, &error)
}

/// `error` in `dialect`'s envelope, with its status and `Retry-After`.
pub fn error_response(dialect: &dyn Dialect, error: &ServeError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, axum::Json(dialect.error_body(error))).into_response();
    if let Some(seconds) = error.retry_after {
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert("retry-after", value);
        }
    }
    response
}

/// The body, or 413 past `limit` bytes, or 408 past the listener's body deadline.
pub async fn read_body(body: Body, limit: usize) -> Result<bytes::Bytes, ServeError> {
    axum::body::to_bytes(body, limit).await.map_err(|err| {
        if let Some(late) = crate::listen::body_deadline(&err) {
            return ServeError::new(ErrorKind::InvalidRequest, late.to_string()).with_status(408);
        }
        ServeError::new(
            ErrorKind::TooLarge,
            format!("the request body is over the limit of {limit} bytes"),
        )
    })
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
