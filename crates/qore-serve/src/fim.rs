//! `POST /v1/completions`: fill-in-the-middle for editors and plugins (`prompt` and
//! `suffix`), through the agent's FIM body or the wire's own FIM endpoint
//! (`Client::complete_fim`). The same admission, accounting and relay as chat; errors in
//! OpenAI's envelope.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use qore_client::{CancellationToken, FimRequest, ResponseStream};
use qore_core::{ResponseEvent, StreamOutcome};

use crate::admission::{admit, rate_headers, Admitted};
use crate::dialect::completions::{self, FimInbound, TextCompletionEncoder};
use crate::events::EventSource as _;
use crate::exchange::Exchange;
use crate::relay::Relay;
use crate::respond::now_secs;
use crate::route::{Baked, Candidate, Job};
use crate::state::App;
use crate::usage::Normalized;
use crate::{ErrorKind, ReplyMeta, ServeError};

fn error_response(error: &ServeError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, axum::Json(completions::error_body(error))).into_response();
    if let Some(seconds) = error.retry_after {
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert("retry-after", value);
        }
    }
    response
}

fn refuse(exchange: Exchange, error: ServeError) -> Response {
    exchange.refused(&error);
    error_response(&error)
}

/// `POST /v1/completions`.
pub async fn completions(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let estimate = |fim: &FimInbound| ((fim.prompt.len() + fim.suffix.len()) / 4) as u64;
    let admitted = admit(
        &app,
        completions::NAME,
        &headers,
        body,
        completions::decode,
        |fim| &fim.model,
        estimate,
    )
    .await;
    let Admitted {
        request: inbound,
        mut exchange,
        admission,
        ..
    } = match admitted {
        Ok(admitted) => admitted,
        Err(refused) => return refused.respond(error_response),
    };
    let baked = Baked {
        max_tokens: inbound.max_tokens,
        temperature: inbound.temperature,
    };
    let plan = match (app.router)
        .plan_for(&app.manager, &inbound.model, baked, Job::Fim)
        .await
    {
        Ok(plan) => plan,
        Err(error) => return refuse(exchange, error),
    };
    let cancel = CancellationToken::new();
    let started = std::time::Instant::now();
    let (stream, candidate) = match open(&plan, &inbound, &cancel) {
        Ok(opened) => opened,
        Err(error) => return refuse(exchange, error),
    };
    let wire = candidate.target.client.protocol().clone();
    let mut stream = Normalized::new(stream, wire);
    exchange.agent = candidate.agent.clone();
    let first = stream.next().await;
    exchange.waited = started.elapsed();
    if let Some(ResponseEvent::Error { error }) = &first {
        return refuse(exchange, ServeError::from_upstream(error));
    }
    let meta = ReplyMeta {
        id: completions::new_id(),
        model: inbound.model.clone(),
        created: now_secs(),
        include_usage: inbound.include_usage,
    };
    exchange.reply = Some(meta.clone());
    if inbound.stream {
        exchange.streaming();
        let encoder = Box::new(TextCompletionEncoder::new(meta));
        let relay = Relay::new(
            Box::new(stream),
            first,
            encoder,
            exchange,
            app.shutdown.clone(),
            cancel,
        )
        .with_limits(app.settings.streams);
        let mut response = Response::new(Body::from_stream(relay.into_body()));
        response.headers_mut().insert(
            "content-type",
            HeaderValue::from_static("text/event-stream"),
        );
        rate_headers(&admission, response.headers_mut());
        return response;
    }
    while stream.next().await.is_some() {}
    let outcome = match stream.outcome() {
        Some(outcome) => outcome.clone(),
        None => StreamOutcome::Cancelled {
            usage: Default::default(),
        },
    };
    exchange.mark_first_byte();
    // The completions endpoint keeps nothing: no hook to fail.
    let _ = exchange.settle(&outcome).await;
    match &outcome {
        StreamOutcome::Finished { .. } => {
            let mut response = axum::Json(completions::response(&meta, &outcome)).into_response();
            rate_headers(&admission, response.headers_mut());
            response
        }
        StreamOutcome::Failed { error, .. } => error_response(&ServeError::from_upstream(error)),
        StreamOutcome::Cancelled { .. } => error_response(&ServeError::new(
            ErrorKind::Overloaded,
            "the request was cancelled",
        )),
    }
}

/// Start the completion at the first candidate that has a fill-in-the-middle path.
fn open(
    plan: &[Candidate],
    inbound: &FimInbound,
    cancel: &CancellationToken,
) -> Result<(ResponseStream, Candidate), ServeError> {
    let candidate = plan
        .first()
        .ok_or_else(|| ServeError::new(ErrorKind::Internal, "no target to send the request to"))?;
    let target = &candidate.target;
    let mut options = target.options.clone();
    if target.agent.is_none() {
        options.max_tokens = inbound.max_tokens.or(options.max_tokens);
        options.temperature = inbound.temperature.or(options.temperature);
    }
    if !inbound.stop.is_empty() {
        let fields = (target.client.protocol().stop_fields(&inbound.stop)).ok_or_else(|| {
            ServeError::invalid(
                "stop",
                "stop sequences cannot be honoured by the target's wire",
            )
        })?;
        options.merge_extra(fields);
    }
    if let Err(err) = target.client.fim_url(&target.model, options.stream) {
        return Err(ServeError::invalid("model", err.message));
    }
    let request = FimRequest {
        model: &target.model,
        prefix: &inbound.prompt,
        suffix: &inbound.suffix,
        extra: &[],
        options: &options,
    };
    Ok((
        target.client.complete_fim(&request, cancel.clone()),
        candidate.clone(),
    ))
}
