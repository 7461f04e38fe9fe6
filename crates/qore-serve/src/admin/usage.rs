//! `/admin/v1/usage` (sums per day/key/model/agent, by the database, in UTC) and
//! `/admin/v1/requests` (the request log: filters, cursor pages, one row in full).
//!
//! Promises: usage totals are summed in SQL over every stored row the filter keeps and the
//! answer says its zone (`"zone": "UTC"`: days are UTC dates); a request log page holds at
//! most `limit` rows (default 100, 1–1000) newest first without bodies, `next` is the cursor
//! (`before`) of the next page or null; `status` is a status (100–599), `ok` (below 400) or
//! `failed` (400 and up); `since`/`until` are milliseconds since the epoch; one row in full
//! is `GET /admin/v1/requests/{id}` (404 when there is none).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use qore_store::{LogQuery, RequestLogRow, UsageGroup, UsageRow};
use serde_json::{json, Value};

use super::auth;
use super::http::{ok, AdminError, Answer, Params};
use crate::state::App;

fn usage_row(row: &UsageRow) -> Value {
    json!({
        "day": row.day, "key_id": row.key_id, "model": row.model, "agent": row.agent,
        "requests": row.requests, "errors": row.errors, "tokens_in": row.tokens_in,
        "tokens_out": row.tokens_out,
    })
}

pub async fn usage(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let store = app.gate.store();
    auth::check(&**store, &headers).await?;
    let params = Params::of(query, &["by", "key", "since", "until"])?;
    let by = match params.text("by").as_deref() {
        None | Some("total") => UsageGroup::Total,
        Some("day") => UsageGroup::Day,
        Some("key") => UsageGroup::Key,
        Some("model") => UsageGroup::Model,
        Some("agent") => UsageGroup::Agent,
        Some(_) => {
            return Err(AdminError::bad(
                "by",
                "by must be total, day, key, model or agent",
            ))
        }
    };
    let (since, until) = (params.day("since")?, params.day("until")?);
    let key = params.text("key");
    let rows = store
        .usage_sums(by, key.as_deref(), since.as_deref(), until.as_deref())
        .await?;
    ok(json!({"zone": "UTC", "rows": rows.iter().map(usage_row).collect::<Vec<_>>()}))
}

/// A request log row as the admin API shows it.
pub fn request_row(row: &RequestLogRow) -> Value {
    json!({
        "id": row.id, "at_ms": row.at_ms, "key_id": row.key_id, "dialect": row.dialect,
        "model": row.model, "agent": row.agent, "upstream": row.upstream, "status": row.status,
        "error_kind": row.error_kind, "tokens_in": row.tokens_in, "tokens_out": row.tokens_out,
        "cost_usd": row.cost_micros.map(|m| m as f64 / 1e6), "ttfb_ms": row.ttfb_ms,
        "duration_ms": row.duration_ms, "session_id": row.session_id,
        "response_id": row.response_id, "request_body": row.request_body,
        "response_body": row.response_body,
    })
}

pub async fn requests(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let store = app.gate.store();
    auth::check(&**store, &headers).await?;
    let known = [
        "key", "model", "agent", "status", "since", "until", "before", "limit",
    ];
    let params = Params::of(query, &known)?;
    let (status_min, status_max) = match params.text("status").as_deref() {
        None => (None, None),
        Some("ok") => (None, Some(399)),
        Some("failed") => (Some(400), None),
        Some(text) => match text.parse::<u16>() {
            Ok(n) if (100..=599).contains(&n) => (Some(n), Some(n)),
            _ => {
                return Err(AdminError::bad(
                    "status",
                    "status must be 100–599, ok or failed",
                ))
            }
        },
    };
    let limit = params
        .number("limit", 1..=i64::from(qore_store::MOST_PER_PAGE))?
        .unwrap_or(100) as u32;
    let before = params.text("before");
    if before
        .as_ref()
        .is_some_and(|b| b.len() != 26 || !b.bytes().all(|c| c.is_ascii_alphanumeric()))
    {
        return Err(AdminError::bad("before", "before must be a request id"));
    }
    let query = LogQuery {
        key_id: params.text("key"),
        model: params.text("model"),
        agent: params.text("agent"),
        status_min,
        status_max,
        since_ms: params.number("since", 0..=i64::MAX)?,
        until_ms: params.number("until", 0..=i64::MAX)?,
        before,
        limit,
    };
    let rows = store.request_log(&query).await?;
    let next = (rows.len() == limit as usize)
        .then(|| rows.last().map(|r| r.id.clone()))
        .flatten();
    ok(json!({"requests": rows.iter().map(request_row).collect::<Vec<_>>(), "next": next}))
}

pub async fn request(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Answer {
    let store = app.gate.store();
    auth::check(&**store, &headers).await?;
    match store.request_entry(&id).await? {
        Some(row) => ok(request_row(&row)),
        None => Err(AdminError::status(
            StatusCode::NOT_FOUND,
            format!("no request {id:?}"),
        )),
    }
}
