//! Admin credentials: minted once, stored hashed in the store's key table, and checked on
//! every admin API call.
//!
//! Promises:
//! - an admin credential is a key the store keeps like any other (only its SHA-256), named
//!   `admin:NAME`, whose one model pattern ([`NO_MODEL`]) matches no model and whose token
//!   budget is 0: it can call no model, and `qore serve keys revoke admin:NAME` revokes it;
//! - [`create`] returns the credential's text once; it is never stored or logged;
//! - a call presenting no credential, or one the store does not know or has revoked, is
//!   401; an ordinary API key is 403; the store is asked once per call (no copy to go
//!   stale: a revoked credential is refused at once);
//! - with no key presented, the console's session cookie is checked instead
//!   ([`super::session`]);
//! - ordinary key names may not start with [`PREFIX`] (the admin API refuses them).

use axum::http::{HeaderMap, StatusCode};
use qore_store::{KeyRecord, NewKey, Store};

use super::http::AdminError;
use crate::gate::{hash_key, new_key};

/// The name prefix of an admin credential in the key table.
pub const PREFIX: &str = "admin:";

/// The model pattern of an admin credential: it matches no model name a caller can give.
pub const NO_MODEL: &str = "qore-admin-console/no-model-matches-this";

/// Whether a stored key is an admin credential.
pub fn is_admin(key: &KeyRecord) -> bool {
    key.name.starts_with(PREFIX)
}

/// Store a new admin credential named `admin:NAME`; its text (shown once) and record.
pub async fn create(store: &dyn Store, name: &str) -> Result<(String, KeyRecord), AdminError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(AdminError::bad("name", "an admin credential needs a name"));
    }
    let secret = new_key()
        .map_err(|e| AdminError::status(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let new = NewKey {
        name: format!("{PREFIX}{name}"),
        hash: hash_key(&secret),
        models: vec![NO_MODEL.to_owned()],
        rpm: None,
        tpm: None,
        budget_tokens: Some(0),
    };
    let record = store.create_key(&new).await?;
    Ok((secret, record))
}

/// The admin credential a call presents (`Authorization: Bearer …` or `x-api-key`), or why
/// it is refused (401, or 403 for an ordinary key).
pub async fn check(store: &dyn Store, headers: &HeaderMap) -> Result<KeyRecord, AdminError> {
    let presented = crate::gate::presented_keys(headers);
    if presented.is_empty() {
        return match super::session::from_cookie(store, headers).await? {
            Some(key) => Ok(key),
            None => Err(unauthorized()),
        };
    }
    let mut ordinary = false;
    for text in presented {
        match store.key_by_hash(&hash_key(text)).await? {
            Some(key) if key.is_revoked() => {}
            Some(key) if is_admin(&key) => return Ok(key),
            Some(_) => ordinary = true,
            None => {}
        }
    }
    if ordinary {
        return Err(AdminError::status(
            StatusCode::FORBIDDEN,
            "an API key cannot use the admin API: present an admin credential \
             (qore serve admin create NAME)",
        ));
    }
    Err(unauthorized())
}

fn unauthorized() -> AdminError {
    AdminError::status(
        StatusCode::UNAUTHORIZED,
        "an admin credential is required (Authorization: Bearer …)",
    )
}
