//! [`Admin`]: the one extractor every admin API handler starts with. It checks the admin
//! credential (or the console's cookie, [`super::auth::check`]) before anything else and
//! hands the handler the server's state and the call's query parameters.
//!
//! Promises: a handler taking [`Admin`] never runs for a call without an admin credential
//! (401, or 403 for an API key); a query string that is not `name=value` pairs is a 400
//! naming `query`; [`Admin::params`] refuses a parameter the endpoint does not know (400
//! naming it).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use qore_store::{KeyRecord, Store};

use super::auth;
use super::http::{AdminError, Params};
use crate::state::App;

/// An admin call whose credential was checked.
pub struct Admin {
    pub app: Arc<App>,
    /// The admin credential (or the cookie's) that made the call.
    pub credential: KeyRecord,
    query: HashMap<String, String>,
}

impl Admin {
    /// The store the server reads.
    pub fn store(&self) -> &Arc<dyn Store> {
        self.app.gate.store()
    }

    /// The call's query parameters, refusing a name not in `known`.
    pub fn params(&self, known: &[&str]) -> Result<Params, AdminError> {
        Params::of(self.query.clone(), known)
    }
}

impl FromRequestParts<Arc<App>> for Admin {
    type Rejection = AdminError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Admin, AdminError> {
        let credential = auth::check(&**app.gate.store(), &parts.headers).await?;
        let Query(query) = Query::<HashMap<String, String>>::try_from_uri(&parts.uri)
            .map_err(|e| AdminError::bad("query", e.body_text()))?;
        Ok(Admin {
            app: app.clone(),
            credential,
            query,
        })
    }
}
