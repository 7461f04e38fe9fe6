//! The admin API's answers: JSON errors with the status and the field at fault, and the
//! query parameters every endpoint reads.
//!
//! Promises: a parameter an endpoint does not know, a number that does not parse or is out
//! of range, a day that is not `YYYY-MM-DD`, a status filter that is neither a status nor
//! `ok`/`failed` is a 400 whose JSON names the field (`{"error": {"message", "field"}}`);
//! a store failure is a 503 (unreachable) or 500, never a panic.

use std::collections::HashMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use qore_store::StoreError;
use serde_json::json;

/// An admin API failure: the status, a message, and the field at fault when there is one.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct AdminError {
    pub status: StatusCode,
    pub message: String,
    pub field: Option<String>,
}

impl AdminError {
    pub fn bad(field: &str, message: impl Into<String>) -> AdminError {
        AdminError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            field: Some(field.to_owned()),
        }
    }

    pub fn status(status: StatusCode, message: impl Into<String>) -> AdminError {
        AdminError {
            status,
            message: message.into(),
            field: None,
        }
    }
}

impl From<StoreError> for AdminError {
    fn from(error: StoreError) -> Self {
        let status = match &error {
            e if e.is_unavailable() => StatusCode::SERVICE_UNAVAILABLE,
            StoreError::NoSuchKey(_) | StoreError::NotFound(_) => StatusCode::NOT_FOUND,
            StoreError::KeyNameTaken(_) => StatusCode::CONFLICT,
            StoreError::InvalidKey(_) | StoreError::BadDay(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        AdminError::status(status, error.to_string())
    }
}

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"message": self.message, "field": self.field}});
        (self.status, Json(body)).into_response()
    }
}

pub type Answer = Result<Response, AdminError>;

/// An endpoint's query parameters, checked against the names it knows.
pub struct Params(HashMap<String, String>);

impl Params {
    /// `query`, refusing a name not in `known` (400 naming it).
    pub fn of(query: HashMap<String, String>, known: &[&str]) -> Result<Params, AdminError> {
        if let Some(name) = query.keys().find(|name| !known.contains(&name.as_str())) {
            let known = known.join(", ");
            return Err(AdminError::bad(
                name,
                format!("unknown parameter {name:?} (known: {known})"),
            ));
        }
        Ok(Params(query))
    }

    /// A text parameter (an empty one counts as given: `key=` is "no key").
    pub fn text(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }

    /// A number within `range`.
    pub fn number(
        &self,
        name: &str,
        range: std::ops::RangeInclusive<i64>,
    ) -> Result<Option<i64>, AdminError> {
        let Some(text) = self.0.get(name) else {
            return Ok(None);
        };
        match text.parse::<i64>() {
            Ok(n) if range.contains(&n) => Ok(Some(n)),
            _ => Err(AdminError::bad(
                name,
                format!(
                    "{name} must be a whole number from {} to {}",
                    range.start(),
                    range.end()
                ),
            )),
        }
    }

    /// A day `YYYY-MM-DD` (UTC).
    pub fn day(&self, name: &str) -> Result<Option<String>, AdminError> {
        match self.0.get(name) {
            Some(day) if !qore_store::is_day(day) => Err(AdminError::bad(
                name,
                format!("{name} must be a day YYYY-MM-DD (UTC)"),
            )),
            day => Ok(day.cloned()),
        }
    }
}

/// `value` as a 200 JSON answer.
pub fn ok(value: serde_json::Value) -> Answer {
    Ok(Json(value).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Result<Params, AdminError> {
        let query = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Params::of(query, &["limit", "since"])
    }

    #[test]
    fn bad_parameters_name_their_field() {
        // (query, the field named, or None when accepted)
        type Case = (
            &'static [(&'static str, &'static str)],
            Option<&'static str>,
        );
        let cases: [Case; 7] = [
            (&[], None),
            (&[("limit", "10")], None),
            (&[("limit", "0")], Some("limit")),
            (&[("limit", "ten")], Some("limit")),
            (&[("since", "2025-01-01")], None),
            (&[("since", "yesterday")], Some("since")),
            (&[("colour", "red")], Some("colour")),
        ];
        for (pairs, field) in cases {
            let checked = params(pairs).and_then(|p| {
                p.number("limit", 1..=1000)?;
                p.day("since")?;
                Ok(())
            });
            let named = checked.err().map(|e| {
                assert_eq!(e.status, StatusCode::BAD_REQUEST);
                e.field.unwrap()
            });
            assert_eq!(named.as_deref(), field, "{pairs:?}");
        }
    }
}
