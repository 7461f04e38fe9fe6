//! The console's server side: its settings (`[serve] console`, `console_path`), and, under
//! `/admin/v1/…`, the admin API (see docs/console.md): health, keys, usage, the request log,
//! each behind an admin credential ([`auth`]).
//!
//! Promises: the console is on by default at `/ui`; `console = false` turns the page off;
//! `console_path` moves it (a path starting with `/`, without a trailing one, of plain
//! path characters only: anything else is a settings error naming the key).

pub mod auth;
mod health;
pub mod http;
mod keys;
pub mod session;
pub mod ui;
mod usage;

use std::sync::Arc;

use axum::routing::{get, post};

use crate::app::App;
use crate::config::{ConfigError, ServeTable};

/// The admin API's routes under `/admin/v1` (see docs/console.md).
pub fn routes(app: Arc<App>) -> axum::Router {
    let started = std::time::Instant::now();
    let api = axum::Router::new()
        .route("/health", get(health::handler(started)))
        .route("/keys", get(keys::list).post(keys::create))
        .route("/keys/{id}/revoke", post(keys::revoke))
        .route("/usage", get(usage::usage))
        .route("/requests", get(usage::requests))
        .route("/requests/{id}", get(usage::request))
        .route("/session", post(session::login).delete(session::logout))
        .layer(axum::middleware::from_fn(same_origin_for_cookies));
    let page = ui::routes(&app.settings.console);
    axum::Router::new()
        .nest("/admin/v1", api)
        .merge(page)
        .with_state(app)
}

/// A call that changes something without a key in its headers (the console's cookie, or
/// nothing) must come from the same origin (CSRF): else 403.
async fn same_origin_for_cookies(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let keyed = !crate::gate::presented_keys(request.headers()).is_empty();
    if !keyed && !session::same_origin(request.method(), request.headers()) {
        use axum::response::IntoResponse as _;
        let refused = http::AdminError::status(
            axum::http::StatusCode::FORBIDDEN,
            "a console call that changes something must come from the console's own origin",
        );
        return refused.into_response();
    }
    next.run(request).await
}

/// Where the console's page is served unless `[serve] console_path` says otherwise.
pub const DEFAULT_CONSOLE_PATH: &str = "/ui";

/// Whether and where the console is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleSettings {
    pub enabled: bool,
    /// The page's path (`/ui`, or e.g. `/gateway/ui` behind a proxy's sub-path).
    pub path: String,
}

impl Default for ConsoleSettings {
    fn default() -> Self {
        ConsoleSettings {
            enabled: true,
            path: DEFAULT_CONSOLE_PATH.to_owned(),
        }
    }
}

impl ConsoleSettings {
    /// The `[serve]` table's values over the defaults; a bad path is an error naming it.
    pub fn of(table: &ServeTable) -> Result<ConsoleSettings, ConfigError> {
        let path = table
            .console_path
            .as_deref()
            .unwrap_or(DEFAULT_CONSOLE_PATH);
        let plain = |c: char| c.is_ascii_alphanumeric() || "/-_.~".contains(c);
        let good = path.starts_with('/')
            && path.len() > 1
            && !path.ends_with('/')
            && !path.contains("//")
            && path.chars().all(plain);
        if !good {
            return Err(ConfigError(format!(
                "[serve] console_path {path:?}: expected a path like \"/ui\" or \"/gateway/ui\""
            )));
        }
        Ok(ConsoleSettings {
            enabled: table.console.unwrap_or(true),
            path: path.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_path_is_checked() {
        // (console_path, accepted)
        let cases = [
            (None, Some("/ui")),
            (Some("/gateway/ui"), Some("/gateway/ui")),
            (Some("ui"), None),
            (Some("/ui/"), None),
            (Some("/"), None),
            (Some("/a//b"), None),
            (Some("/a b"), None),
            (Some("/a\"<"), None),
        ];
        for (path, accepted) in cases {
            let table = ServeTable {
                console_path: path.map(str::to_owned),
                ..ServeTable::default()
            };
            let got = ConsoleSettings::of(&table).ok().map(|c| c.path);
            assert_eq!(got.as_deref(), accepted, "{path:?}");
        }
    }
}
