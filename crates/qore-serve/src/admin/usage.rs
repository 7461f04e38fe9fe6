//! `/admin/v1/usage` (sums per day/key/model/agent, by the database, in UTC, with their cost)
//! and `/admin/v1/requests` (the request log: filters, cursor pages, one row in full).
//!
//! Promises: usage totals are summed in SQL over every stored row the filter keeps and the
//! answer says its zone (`"zone": "UTC"`: days are UTC dates); each row's `cost_usd` is the
//! sum, over the agents in it, of the agent's `[pricing]` applied to its summed tokens
//! ([`crate::request_log::usage_cost`]), null when no agent in it has `[pricing]`. A request
//! log page holds at most `limit` rows (default 100, 1–1000) newest first without bodies,
//! `next` is the cursor (`before`) of the next page or null; `status` is a status (100–599),
//! `ok` (below 400) or `failed` (400 and up); `since`/`until` are milliseconds since the
//! epoch; one row in full is `GET /admin/v1/requests/{id}` (404 when there is none).

use axum::extract::Path;
use axum::http::StatusCode;
use qore_store::{LogQuery, RequestLogRow, UsageGroup, UsageRow};
use serde_json::{json, Value};

use super::call::Admin;
use super::http::{ok, AdminError, Answer};
use crate::request_log::usage_cost;

fn usage_row(row: &UsageRow, cost: Option<f64>) -> Value {
    json!({
        "day": row.day, "key_id": row.key_id, "model": row.model, "agent": row.agent,
        "requests": row.requests, "errors": row.errors, "tokens_in": row.tokens_in,
        "tokens_out": row.tokens_out, "cost_usd": cost,
    })
}

/// Rows grouped by (group, agent), in group order, folded into one row per group with its
/// cost: the sum of each agent part's cost, `None` when no part has a price.
fn priced(
    by: UsageGroup,
    parts: Vec<UsageRow>,
    cost_of: impl Fn(&UsageRow) -> Option<f64>,
) -> Vec<(UsageRow, Option<f64>)> {
    let mut rows: Vec<(UsageRow, Option<f64>)> = Vec::new();
    for part in parts {
        let cost = cost_of(&part);
        let mut own = part.clone();
        if by != UsageGroup::Agent {
            own.agent = String::new();
        }
        match rows.last_mut() {
            Some((row, sum)) if same_group(row, &own) => {
                row.add(&own);
                *sum = match (*sum, cost) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
            }
            _ => rows.push((own, cost)),
        }
    }
    if rows.is_empty() && by == UsageGroup::Total {
        rows.push((UsageRow::default(), None));
    }
    rows
}

fn same_group(a: &UsageRow, b: &UsageRow) -> bool {
    (&a.day, &a.key_id, &a.model, &a.agent) == (&b.day, &b.key_id, &b.model, &b.agent)
}

pub async fn usage(call: Admin) -> Answer {
    let params = call.params(&["by", "key", "since", "until"])?;
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
    let query = qore_store::UsageQuery {
        by,
        by_agent: true,
        key_id: key,
        since,
        until,
    };
    let parts = call.store().usage_sums(&query).await?;
    let config = call.app.manager.config();
    let rows = priced(by, parts, |part| {
        usage_cost(config, &part.agent, part.tokens_in, part.tokens_out)
    });
    let rows: Vec<Value> = rows.iter().map(|(r, c)| usage_row(r, *c)).collect();
    ok(json!({"zone": "UTC", "rows": rows}))
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

pub async fn requests(call: Admin) -> Answer {
    let known = [
        "key", "model", "agent", "status", "since", "until", "before", "limit",
    ];
    let params = call.params(&known)?;
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
    let rows = call.store().request_log(&query).await?;
    let next = (rows.len() == limit as usize)
        .then(|| rows.last().map(|r| r.id.clone()))
        .flatten();
    ok(json!({"requests": rows.iter().map(request_row).collect::<Vec<_>>(), "next": next}))
}

pub async fn request(call: Admin, Path(id): Path<String>) -> Answer {
    match call.store().request_entry(&id).await? {
        Some(row) => ok(request_row(&row)),
        None => Err(AdminError::status(
            StatusCode::NOT_FOUND,
            format!("no request {id:?}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_costs_the_sum_of_its_priced_agents() {
        let part = |day: &str, agent: &str, tokens_in: u64| UsageRow {
            day: day.into(),
            agent: agent.into(),
            requests: 1,
            tokens_in,
            ..UsageRow::default()
        };
        // A dollar per token in for `a`, two for `b`, no price for others.
        let cost_of = |row: &UsageRow| match row.agent.as_str() {
            "a" => Some(row.tokens_in as f64),
            "b" => Some(2.0 * row.tokens_in as f64),
            _ => None,
        };
        // (group, parts by (group, agent), expected (day, agent, requests, tokens in, cost))
        type Want = Vec<(&'static str, &'static str, u64, u64, Option<f64>)>;
        let cases: [(UsageGroup, Vec<UsageRow>, Want); 4] = [
            (
                UsageGroup::Day,
                vec![
                    part("d1", "", 10),
                    part("d1", "a", 1),
                    part("d1", "b", 3),
                    part("d2", "", 5),
                ],
                vec![("d1", "", 3, 14, Some(7.0)), ("d2", "", 1, 5, None)],
            ),
            (
                UsageGroup::Agent,
                vec![part("", "", 4), part("", "a", 2)],
                vec![("", "", 1, 4, None), ("", "a", 1, 2, Some(2.0))],
            ),
            (
                UsageGroup::Total,
                vec![part("", "x", 4), part("", "b", 2)],
                vec![("", "", 2, 6, Some(4.0))],
            ),
            (UsageGroup::Total, vec![], vec![("", "", 0, 0, None)]),
        ];
        for (by, parts, want) in cases {
            let got: Want = (priced(by, parts, cost_of).into_iter())
                .map(|(r, cost)| {
                    let (day, agent) = (r.day.leak() as &str, r.agent.leak() as &str);
                    (day, agent, r.requests, r.tokens_in, cost)
                })
                .collect();
            assert_eq!(got, want, "{by:?}");
        }
    }
}
