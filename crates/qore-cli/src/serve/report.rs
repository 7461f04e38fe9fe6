//! What `qore serve keys list` and `qore serve usage` print: tables for people, JSON with
//! `--json`.
//!
//! Promises: a key list shows names, id prefixes (at least 8 characters, long enough to tell
//! every id apart), model patterns, limits and times, never a key or its hash; usage is one
//! row per key, model, agent and UTC day, with a total when there is more than one row, and
//! its cost in US dollars when the agent has `[pricing]` (the same sum as the console's:
//! `qore_serve::request_log::usage_cost`; `cost_usd` null and an empty cell otherwise); an
//! empty list or report says so on stderr and prints nothing on stdout.

use comfy_table::{presets::NOTHING, Table};
use qore_store::{time_of, KeyRecord, Store, UsageRow};
use serde_json::json;

use crate::console::{note, outln};

pub(super) async fn list(store: &dyn Store, json: bool) -> Result<(), String> {
    let keys = store.keys().await.map_err(|e| e.to_string())?;
    if json {
        let rows: Vec<_> = (keys.iter())
            .map(|k| {
                json!({
                    "id": k.id,
                    "name": k.name,
                    "models": k.models,
                    "rpm": k.rpm,
                    "tpm": k.tpm,
                    "budget_tokens": k.budget_tokens,
                    "created_at": rfc3339(k.created_at),
                    "revoked_at": k.revoked_at.map(rfc3339),
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(rows));
        return Ok(());
    }
    if keys.is_empty() {
        note!("no API keys yet (`qore serve keys create NAME` makes one)");
        return Ok(());
    }
    let mut ids: Vec<String> = keys.iter().map(|k| k.id.clone()).collect();
    ids.sort();
    let width = prefix_len(&ids);
    let mut table = Table::new();
    table
        .load_preset(NOTHING)
        .set_header(["NAME", "ID", "MODELS", "LIMITS", "CREATED", "REVOKED"]);
    for k in &keys {
        table.add_row([
            k.name.clone(),
            k.id.get(..width).unwrap_or(&k.id).to_owned(),
            models_text(k),
            limits_text(k),
            minute(k.created_at),
            k.revoked_at.map(minute).unwrap_or_default(),
        ]);
    }
    for line in table.lines() {
        outln!("{}", line.trim_end());
    }
    Ok(())
}

/// Which usage rows to print.
pub(super) struct UsageFilter<'a> {
    /// A key's name, id or unique id prefix.
    pub key: Option<&'a str>,
    /// The first UTC day (`YYYY-MM-DD`).
    pub since: Option<&'a str>,
}

pub(super) async fn usage(
    store: &dyn Store,
    agents: &qore_agents::config::Config,
    filter: UsageFilter<'_>,
    json: bool,
) -> Result<(), String> {
    let UsageFilter { key, since } = filter;
    let key_id = match key {
        Some(k) => Some(store.key(k).await.map_err(|e| e.to_string())?.id),
        None => None,
    };
    let rows = (store.usage(key_id.as_deref(), since).await).map_err(|e| e.to_string())?;
    let keys = store.keys().await.map_err(|e| e.to_string())?;
    let name_of = |row: &UsageRow| -> String {
        if row.key_id.is_empty() {
            return "(no key)".into();
        }
        (keys.iter().find(|k| k.id == row.key_id))
            .map_or_else(|| row.key_id.clone(), |k| k.name.clone())
    };
    let cost_of = |row: &UsageRow| {
        qore_serve::request_log::usage_cost(agents, &row.agent, row.tokens_in, row.tokens_out)
    };
    if json {
        let out: Vec<_> = (rows.iter())
            .map(|r| {
                json!({
                    "key": name_of(r),
                    "key_id": r.key_id,
                    "model": r.model,
                    "agent": r.agent,
                    "day": r.day,
                    "requests": r.requests,
                    "errors": r.errors,
                    "tokens_in": r.tokens_in,
                    "tokens_out": r.tokens_out,
                    "cost_usd": cost_of(r),
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(out));
        return Ok(());
    }
    if rows.is_empty() {
        note!(
            "no usage recorded{}",
            since.map_or(String::new(), |d| format!(" since {d}"))
        );
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(NOTHING).set_header([
        "KEY",
        "MODEL",
        "AGENT",
        "DAY",
        "REQUESTS",
        "ERRORS",
        "TOKENS IN",
        "TOKENS OUT",
        "COST USD",
    ]);
    let cells = |key: String, r: &UsageRow, cost: Option<f64>| {
        let counts = [r.requests, r.errors, r.tokens_in, r.tokens_out].map(|n| n.to_string());
        let cost = cost.map_or(String::new(), |c| format!("{c:.6}"));
        [
            vec![key, r.model.clone(), r.agent.clone(), r.day.clone()],
            counts.to_vec(),
            vec![cost],
        ]
        .concat()
    };
    let mut total = UsageRow::default();
    let mut total_cost: Option<f64> = None;
    for r in &rows {
        total.add(r);
        let cost = cost_of(r);
        if let Some(c) = cost {
            total_cost = Some(total_cost.unwrap_or(0.0) + c);
        }
        table.add_row(cells(name_of(r), r, cost));
    }
    if rows.len() > 1 {
        table.add_row(cells("total".into(), &total, total_cost));
    }
    for line in table.lines() {
        outln!("{}", line.trim_end());
    }
    Ok(())
}

pub(super) fn models_text(key: &KeyRecord) -> String {
    if key.models.is_empty() {
        "all".into()
    } else {
        key.models.join(" ")
    }
}

pub(super) fn limits_text(key: &KeyRecord) -> String {
    let limits: Vec<String> = [
        (key.rpm, "rpm"),
        (key.tpm, "tpm"),
        (key.budget_tokens, "budget"),
    ]
    .into_iter()
    .filter_map(|(n, what)| n.map(|n| format!("{what} {n}")))
    .collect();
    if limits.is_empty() {
        "none".into()
    } else {
        limits.join(", ")
    }
}

/// The shortest length (at least 8) at which every id differs from its neighbours; `ids`
/// sorted.
fn prefix_len(ids: &[String]) -> usize {
    let shared = |a: &str, b: &str| a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (ids.windows(2))
        .map(|pair| shared(&pair[0], &pair[1]) + 1)
        .fold(8, usize::max)
}

fn rfc3339(millis: i64) -> String {
    humantime::format_rfc3339_seconds(time_of(millis)).to_string()
}

/// `2026-11-25 14:58` (UTC).
pub(super) fn minute(millis: i64) -> String {
    let text = rfc3339(millis);
    text.get(..16).unwrap_or(&text).replacen('T', " ", 1)
}
