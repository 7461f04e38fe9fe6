//! The console's login: an admin credential exchanged for a session cookie, and the
//! same-origin check on state-changing calls made with that cookie.
//!
//! Promises:
//! - `POST /admin/v1/session` with `{"credential": "…"}` answers 204 with the cookie
//!   [`COOKIE`] (`HttpOnly; SameSite=Strict`, for [`LIFETIME`]); nothing is stored and no key
//!   is minted: the cookie is `v1.KEY_ID.EXPIRY.MAC`, MAC the HMAC-SHA256 of `KEY_ID.EXPIRY`
//!   keyed with the credential's stored hash (which never leaves the server), so every
//!   process on the same store accepts it and revoking the credential ends its sessions;
//! - a wrong credential is 401, an API key 403, as on every admin call;
//! - `DELETE /admin/v1/session` clears the cookie;
//! - a call that changes something (any method but GET/HEAD) authenticated by the cookie
//!   must come from the same origin: `Sec-Fetch-Site: same-origin`, or an `Origin` whose
//!   host is the request's `Host`; else 403. Calls with `Authorization` (scripts) need no
//!   such check (a browser never adds that header by itself).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use qore_store::{KeyRecord, Store};
use sha2::Sha256;

use super::auth::{self, is_admin};
use super::http::{AdminError, Answer};
use crate::state::App;

/// The session cookie's name.
pub const COOKIE: &str = "qore_console";
/// How long a session lasts.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);

fn mac(key: &KeyRecord, payload: &str) -> Option<String> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.hash.as_bytes()).ok()?;
    mac.update(payload.as_bytes());
    let bytes = mac.finalize().into_bytes();
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The cookie value of a session of `key` ending at `expiry` (Unix seconds).
pub fn token(key: &KeyRecord, expiry: u64) -> Option<String> {
    let payload = format!("{}.{expiry}", key.id);
    Some(format!("v1.{payload}.{}", mac(key, &payload)?))
}

/// The session cookie's value in `headers`, if any.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    (headers.get_all(header::COOKIE).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

/// The admin credential of a valid session cookie in `headers`; `None` when there is no
/// cookie, `Err` 401 when it is not valid.
pub async fn from_cookie(
    store: &dyn Store,
    headers: &HeaderMap,
) -> Result<Option<KeyRecord>, AdminError> {
    let Some(value) = cookie(headers) else {
        return Ok(None);
    };
    let invalid = || {
        AdminError::status(
            StatusCode::UNAUTHORIZED,
            "the console session ended: log in again",
        )
    };
    let mut parts = value.split('.');
    let (Some("v1"), Some(id), Some(expiry), Some(_), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(invalid());
    };
    let Ok(expiry) = expiry.parse::<u64>() else {
        return Err(invalid());
    };
    if expiry <= now_secs() || id.len() != 26 {
        return Err(invalid());
    }
    let key = match store.key(id).await {
        Ok(key) if key.id == id && is_admin(&key) && !key.is_revoked() => key,
        Ok(_) | Err(qore_store::StoreError::NoSuchKey(_)) => return Err(invalid()),
        Err(e) => return Err(e.into()),
    };
    let Some(expected) = token(&key, expiry) else {
        return Err(invalid());
    };
    // Equal length hex: compare every byte whatever the first difference.
    let same = expected.len() == value.len()
        && expected
            .bytes()
            .zip(value.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if same {
        Ok(Some(key))
    } else {
        Err(invalid())
    }
}

/// Whether a cookie-authenticated call that changes something comes from the page's own
/// origin.
pub fn same_origin(method: &Method, headers: &HeaderMap) -> bool {
    if matches!(*method, Method::GET | Method::HEAD) {
        return true;
    }
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text("sec-fetch-site") {
        return site == "same-origin";
    }
    match (text("origin"), text("host")) {
        (Some(origin), Some(host)) => {
            let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest);
            origin_host == host
        }
        _ => false,
    }
}

/// `POST /admin/v1/session`: log in.
pub async fn login(State(app): State<Arc<App>>, body: axum::body::Bytes) -> Answer {
    let value: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| AdminError::bad("body", format!("the body is not JSON: {e}")))?;
    let Some(credential) = value.get("credential").and_then(|c| c.as_str()) else {
        return Err(AdminError::bad(
            "credential",
            "credential must be the admin credential",
        ));
    };
    let mut presented = HeaderMap::new();
    let bearer = HeaderValue::from_str(&format!("Bearer {}", credential.trim()))
        .map_err(|_| AdminError::bad("credential", "credential has characters no key has"))?;
    presented.insert(header::AUTHORIZATION, bearer);
    let key = auth::check(&**app.gate.store(), &presented).await?;
    let expiry = now_secs() + LIFETIME.as_secs();
    let token = token(&key, expiry)
        .ok_or_else(|| AdminError::status(StatusCode::INTERNAL_SERVER_ERROR, "cannot sign"))?;
    let cookie = format!(
        "{COOKIE}={token}; HttpOnly; SameSite=Strict; Max-Age={}",
        LIFETIME.as_secs()
    );
    Ok(with_cookie(&cookie))
}

/// `DELETE /admin/v1/session`: log out.
pub async fn logout() -> Response {
    with_cookie(&format!("{COOKIE}=; HttpOnly; SameSite=Strict; Max-Age=0"))
}

fn with_cookie(cookie: &str) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_same_origin_calls_may_change_things() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (k, v) in pairs {
                map.insert(*k, HeaderValue::from_static(v));
            }
            map
        };
        // (method, headers, allowed)
        let cases = [
            (Method::GET, headers(&[]), true),
            (Method::POST, headers(&[]), false),
            (
                Method::POST,
                headers(&[("sec-fetch-site", "same-origin")]),
                true,
            ),
            (
                Method::POST,
                headers(&[("sec-fetch-site", "cross-site")]),
                false,
            ),
            (
                Method::POST,
                headers(&[("sec-fetch-site", "same-site")]),
                false,
            ),
            (
                Method::POST,
                headers(&[("origin", "http://a:1"), ("host", "a:1")]),
                true,
            ),
            (
                Method::POST,
                headers(&[("origin", "http://evil:1"), ("host", "a:1")]),
                false,
            ),
            (
                Method::DELETE,
                headers(&[("origin", "null"), ("host", "a:1")]),
                false,
            ),
        ];
        for (method, headers, allowed) in cases {
            assert_eq!(
                same_origin(&method, &headers),
                allowed,
                "{method} {headers:?}"
            );
        }
    }
}
