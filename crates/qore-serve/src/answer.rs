//! The one path every chat request takes: authenticate, read the body under the limit,
//! decode in the dialect, check the key's models and limits, prepare ([`Prepare`]: history
//! from the store), route, open the upstream (fallbacks before the first byte), then answer
//! whole or relay the stream. Every refusal is written in the caller's dialect; none
//! reaches a provider. A store that cannot be reached on that path (the key, its limits, a
//! stored conversation) is a 503 with `Retry-After`, also in the caller's dialect; the
//! store's own timeouts bound every wait on it.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use qore_client::CancellationToken;

use crate::admission::{admit, rate_headers, Admitted};
use crate::dialect::Dialect;
use crate::exchange::{After, Exchange};
use crate::gate::Caller;
use crate::relay::Relay;
use crate::respond::{error_response, now_secs};
use crate::route::Baked;
use crate::state::App;
use crate::{server_tools, upstream, ErrorKind, Inbound, ReplyMeta, ServeError};

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
