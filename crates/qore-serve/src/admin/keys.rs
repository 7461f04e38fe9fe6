//! `/admin/v1/keys`: list (search by name, cursor pages), create (the secret shown once),
//! change (globs, limits, budget), revoke. Admin credentials are not listed here, cannot be
//! changed here, and their names cannot be taken.
//!
//! Promises: a page is at most `limit` keys (default 50, 1–500) in id order (creation
//! order), after the cursor `after` (the last id of the previous page), `next` is the cursor
//! of the next page or null; `search` keeps keys whose name contains it (case-insensitive);
//! the store filters and pages ([`qore_store::Store::key_page`]), never the server over every
//! key. A body that is not the documented JSON (an unknown field, a name that is empty or
//! starts with `admin:`, a bad glob, a limit that is not a positive whole number) is a 400
//! naming the field. A change applies to the next request with the key: the gate's copy of
//! the keys is refreshed before the answer.

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use qore_store::{KeyChange, KeyQuery, KeyRecord, NewKey};
use serde_json::{json, Map, Value};

use super::auth::{is_admin, PREFIX};
use super::call::Admin;
use super::http::{ok, AdminError, Answer};
use crate::gate::{check_pattern, hash_key, new_key};

/// A key as the admin API shows it: never its hash.
pub fn shown(key: &KeyRecord) -> Value {
    json!({
        "id": key.id, "name": key.name, "models": key.models, "rpm": key.rpm, "tpm": key.tpm,
        "budget_tokens": key.budget_tokens, "created_at_ms": key.created_at,
        "revoked_at_ms": key.revoked_at,
    })
}

pub async fn list(call: Admin) -> Answer {
    let params = call.params(&["search", "after", "limit"])?;
    let limit = params.number("limit", 1..=500)?.unwrap_or(50) as u32;
    let query = KeyQuery {
        search: params.text("search").filter(|s| !s.is_empty()),
        after: params.text("after").filter(|s| !s.is_empty()),
        // One more than the page: whether there is a next one.
        limit: limit + 1,
        hide_prefix: Some(PREFIX.to_owned()),
    };
    let mut keys = call.store().key_page(&query).await?;
    let more = keys.len() > limit as usize;
    keys.truncate(limit as usize);
    let next = more.then(|| keys.last().map(|k| k.id.clone())).flatten();
    ok(json!({"keys": keys.iter().map(shown).collect::<Vec<_>>(), "next": next}))
}

/// The JSON object of a body, refusing a field not in `known`.
fn object(body: &[u8], known: &[&str]) -> Result<Map<String, Value>, AdminError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| AdminError::bad("body", format!("the body is not JSON: {e}")))?;
    let Value::Object(fields) = value else {
        return Err(AdminError::bad("body", "the body must be a JSON object"));
    };
    if let Some(name) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(AdminError::bad(name, format!("unknown field {name:?}")));
    }
    Ok(fields)
}

/// `models`: an array of globs (`null`: every model, as `[]`).
fn models(value: &Value) -> Result<Vec<String>, AdminError> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => {
            let mut models = Vec::new();
            for item in items {
                let Some(pattern) = item.as_str() else {
                    return Err(AdminError::bad("models", "models must be strings"));
                };
                check_pattern(pattern).map_err(|why| AdminError::bad("models", why))?;
                models.push(pattern.trim().to_owned());
            }
            Ok(models)
        }
        _ => Err(AdminError::bad(
            "models",
            "models must be an array of globs",
        )),
    }
}

/// A limit: a positive whole number, or `null` for none.
fn limit(field: &str, value: &Value) -> Result<Option<u64>, AdminError> {
    match value {
        Value::Null => Ok(None),
        value => match value.as_u64() {
            Some(n) if n > 0 && i64::try_from(n).is_ok() => Ok(Some(n)),
            _ => Err(AdminError::bad(
                field,
                format!("{field} must be a positive whole number, or null for none"),
            )),
        },
    }
}

const LIMITS: [&str; 3] = ["rpm", "tpm", "budget_tokens"];

/// The body of `POST /admin/v1/keys`: `{"name", "models", "rpm", "tpm", "budget_tokens"}`,
/// each field checked on its own so a refusal names it.
fn new_key_body(body: &[u8]) -> Result<NewKey, AdminError> {
    let fields = object(body, &["name", "models", "rpm", "tpm", "budget_tokens"])?;
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
    let get = |field: &str| fields.get(field).unwrap_or(&Value::Null);
    Ok(NewKey {
        name,
        hash: String::new(),
        models: models(get("models"))?,
        rpm: limit("rpm", get("rpm"))?,
        tpm: limit("tpm", get("tpm"))?,
        budget_tokens: limit("budget_tokens", get("budget_tokens"))?,
    })
}

/// The body of `PATCH /admin/v1/keys/{id}`: any of `models`, `rpm`, `tpm`, `budget_tokens`
/// (a limit `null` clears it); a field left out stays as it is.
fn change_body(body: &[u8]) -> Result<KeyChange, AdminError> {
    let fields = object(body, &["models", "rpm", "tpm", "budget_tokens"])?;
    let mut change = KeyChange {
        models: fields.get("models").map(models).transpose()?,
        ..KeyChange::default()
    };
    for field in LIMITS {
        let value = fields.get(field).map(|v| limit(field, v)).transpose()?;
        match field {
            "rpm" => change.rpm = value,
            "tpm" => change.tpm = value,
            _ => change.budget_tokens = value,
        }
    }
    Ok(change)
}

pub async fn create(call: Admin, body: axum::body::Bytes) -> Answer {
    let mut new = new_key_body(&body)?;
    let secret = new_key()
        .map_err(|e| AdminError::status(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    new.hash = hash_key(&secret);
    let record = call.store().create_key(&new).await?;
    let answer = json!({"key": secret, "record": shown(&record)});
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

/// The ordinary key `id` names (name, id or unique id prefix): 404 for an admin credential.
async fn ordinary(call: &Admin, id: &str) -> Result<KeyRecord, AdminError> {
    let key = call.store().key(id).await?;
    if is_admin(&key) {
        return Err(AdminError::status(
            StatusCode::NOT_FOUND,
            format!("no API key {id:?} (an admin credential is managed with qore serve)"),
        ));
    }
    Ok(key)
}

pub async fn change(call: Admin, Path(id): Path<String>, body: axum::body::Bytes) -> Answer {
    let change = change_body(&body)?;
    let key = ordinary(&call, &id).await?;
    let changed = call.store().change_key(&key.id, &change).await?;
    // The next request with the key meets the new limits (other processes within a second).
    call.app.gate.refresh_keys().await;
    ok(shown(&changed))
}

pub async fn revoke(call: Admin, Path(id): Path<String>) -> Answer {
    let key = ordinary(&call, &id).await?;
    let revoked = call.store().revoke_key(&key.id).await?;
    call.app.gate.refresh_keys().await;
    ok(shown(&revoked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_body_names_the_field_at_fault() {
        // (body, the field named, or None when accepted)
        let cases: [(&str, Option<&str>); 10] = [
            (r#"{}"#, None),
            (r#"{"rpm": 5, "tpm": null, "models": ["up/*"]}"#, None),
            (r#"{"budget_tokens": null}"#, None),
            (r#"{"rpm": 0}"#, Some("rpm")),
            (r#"{"tpm": -3}"#, Some("tpm")),
            (r#"{"budget_tokens": 1.5}"#, Some("budget_tokens")),
            (r#"{"models": "up/*"}"#, Some("models")),
            (r#"{"models": [""]}"#, Some("models")),
            (r#"{"name": "x"}"#, Some("name")),
            (r#"[1]"#, Some("body")),
        ];
        for (body, field) in cases {
            let named = change_body(body.as_bytes()).err().map(|e| e.field.unwrap());
            assert_eq!(named.as_deref(), field, "{body}");
        }
        let change = change_body(br#"{"rpm": 5, "tpm": null}"#).unwrap();
        assert_eq!(
            (change.rpm, change.tpm, change.budget_tokens, change.models),
            (Some(Some(5)), Some(None), None, None)
        );
    }
}
