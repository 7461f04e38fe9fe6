//! `/admin/v1/keys`: list (search by name, cursor pages), create (the secret shown once),
//! revoke. Admin credentials are not listed here and their names cannot be taken.
//!
//! Promises: a page is at most `limit` keys (default 50, 1–500) in id order (creation
//! order), after the cursor `after` (the last id of the previous page), `next` is the cursor
//! of the next page or null; `search` keeps keys whose name contains it (case-insensitive);
//! a body that is not the documented JSON (an unknown field, a name that is empty or
//! starts with `admin:`, a bad glob, a limit that is not a positive whole number) is a 400
//! naming the field.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use qore_store::{KeyRecord, NewKey};
use serde_json::{json, Value};

use super::auth::{self, is_admin, PREFIX};
use super::http::{ok, AdminError, Answer, Params};
use crate::gate::{check_pattern, hash_key, new_key};
use crate::state::App;

/// A key as the admin API shows it: never its hash.
pub fn shown(key: &KeyRecord) -> Value {
    json!({
        "id": key.id, "name": key.name, "models": key.models, "rpm": key.rpm, "tpm": key.tpm,
        "budget_tokens": key.budget_tokens, "created_at_ms": key.created_at,
        "revoked_at_ms": key.revoked_at,
    })
}

pub async fn list(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let store = app.gate.store();
    auth::check(&**store, &headers).await?;
    let params = Params::of(query, &["search", "after", "limit"])?;
    let limit = params.number("limit", 1..=500)?.unwrap_or(50) as usize;
    let search = params.text("search").map(|s| s.to_lowercase());
    let after = params.text("after");
    let mut keys: Vec<KeyRecord> = (store.keys().await?.into_iter())
        .filter(|k| !is_admin(k))
        .filter(|k| {
            search
                .as_ref()
                .is_none_or(|s| k.name.to_lowercase().contains(s))
        })
        .filter(|k| after.as_ref().is_none_or(|a| k.id > *a))
        .collect();
    keys.sort_by(|a, b| a.id.cmp(&b.id));
    let more = keys.len() > limit;
    keys.truncate(limit);
    let next = more.then(|| keys.last().map(|k| k.id.clone())).flatten();
    ok(json!({"keys": keys.iter().map(shown).collect::<Vec<_>>(), "next": next}))
}

/// The body of `POST /admin/v1/keys`: `{"name", "models", "rpm", "tpm", "budget_tokens"}`,
/// each field checked on its own so a refusal names it.
fn new_key_body(body: &[u8]) -> Result<NewKey, AdminError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| AdminError::bad("body", format!("the body is not JSON: {e}")))?;
    let Value::Object(fields) = value else {
        return Err(AdminError::bad("body", "the body must be a JSON object"));
    };
    let known = ["name", "models", "rpm", "tpm", "budget_tokens"];
    if let Some(name) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(AdminError::bad(name, format!("unknown field {name:?}")));
    }
    let name = match fields.get("name") {
        Some(Value::String(name))
            if !name.trim().is_empty() && !name.trim().starts_with(PREFIX) =>
        {
            name.trim().to_owned()
        }
        _ => {
            let why = format!("name must be a non-empty string not starting with {PREFIX:?}");
            return Err(AdminError::bad("name", why));
        }
    };
    let models = match fields.get("models") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            let mut models = Vec::new();
            for item in items {
                let Some(pattern) = item.as_str() else {
                    return Err(AdminError::bad("models", "models must be strings"));
                };
                check_pattern(pattern).map_err(|why| AdminError::bad("models", why))?;
                models.push(pattern.trim().to_owned());
            }
            models
        }
        Some(_) => {
            return Err(AdminError::bad(
                "models",
                "models must be an array of globs",
            ))
        }
    };
    let limit = |field: &str| -> Result<Option<u64>, AdminError> {
        match fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if n > 0 && i64::try_from(n).is_ok() => Ok(Some(n)),
                _ => Err(AdminError::bad(
                    field,
                    format!("{field} must be a positive whole number"),
                )),
            },
        }
    };
    Ok(NewKey {
        name,
        hash: String::new(),
        models,
        rpm: limit("rpm")?,
        tpm: limit("tpm")?,
        budget_tokens: limit("budget_tokens")?,
    })
}

pub async fn create(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Answer {
    let store = app.gate.store();
    auth::check(&**store, &headers).await?;
    let mut new = new_key_body(&body)?;
    let secret = new_key()
        .map_err(|e| AdminError::status(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    new.hash = hash_key(&secret);
    let record = store.create_key(&new).await?;
    let answer = json!({"key": secret, "record": shown(&record)});
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

pub async fn revoke(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Answer {
    let store = app.gate.store();
    auth::check(&**store, &headers).await?;
    let key = store.key(&id).await?;
    if is_admin(&key) {
        return Err(AdminError::bad(
            "id",
            "an admin credential is revoked with qore serve keys revoke",
        ));
    }
    let revoked = store.revoke_key(&key.id).await?;
    ok(shown(&revoked))
}
