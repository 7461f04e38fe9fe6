//! The console's page: plain HTML, CSS and JavaScript embedded in the binary
//! (`include_str!`, no build step), served at `[serve] console_path` (default `/ui`) unless
//! `[serve] console = false`.
//!
//! Promises: every file is answered with a strict Content-Security-Policy (only this
//! origin's scripts, styles and connections; no inline script, no frames, no `<base>`),
//! `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`; the page finds the
//! admin API by a path relative to itself (given in a `<meta>` tag), so it works behind a
//! proxy that serves it under a sub-path; the page itself holds no secret.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::ConsoleSettings;

/// The policy every console file is sent with.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

const INDEX: &str = include_str!("assets/index.html");
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file beside the page: its path under the console, its type, its text. The page
/// loads the scripts in this order (app.js first: the views add themselves to it).
const ASSETS: [(&str, &str, &str); 10] = [
    ("app.css", CSS, include_str!("assets/app.css")),
    ("app.js", JS, include_str!("assets/app.js")),
    ("keys.js", JS, include_str!("assets/keys.js")),
    ("usage.js", JS, include_str!("assets/usage.js")),
    ("log.js", JS, include_str!("assets/log.js")),
    (
        "conversations.js",
        JS,
        include_str!("assets/conversations.js"),
    ),
    ("catalog.js", JS, include_str!("assets/catalog.js")),
    ("playground.js", JS, include_str!("assets/playground.js")),
    (
        "vendor/uPlot.iife.min.js",
        JS,
        include_str!("assets/vendor/uPlot.iife.min.js"),
    ),
    (
        "vendor/uPlot.min.css",
        CSS,
        include_str!("assets/vendor/uPlot.min.css"),
    ),
];

fn file(kind: &'static str, body: String) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The admin API's path relative to the page at `{path}/`: one `../` per segment.
pub fn api_from(path: &str) -> String {
    let depth = path.split('/').filter(|s| !s.is_empty()).count();
    format!("{}admin/v1", "../".repeat(depth))
}

/// The page's routes, or none when the console is off.
pub fn routes<S: Clone + Send + Sync + 'static>(settings: &ConsoleSettings) -> axum::Router<S> {
    if !settings.enabled {
        return axum::Router::new();
    }
    let base = settings.path.clone();
    let index = INDEX.replace("{{API}}", &api_from(&base));
    let slash = format!("{base}/");
    let mut router = axum::Router::new()
        .route(
            &base,
            get(move || async move { Redirect::permanent(&slash) }),
        )
        .route(
            &format!("{base}/"),
            get(move || async move { file("text/html; charset=utf-8", index) }),
        );
    for (name, kind, text) in ASSETS {
        router = router.route(
            &format!("{base}/{name}"),
            get(move || async move { file(kind, text.to_owned()) }),
        );
    }
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_and_style_the_page_names_is_served() {
        for line in INDEX.lines() {
            for attr in ["src=\"", "href=\""] {
                let Some(at) = line.find(attr) else { continue };
                let rest = &line[at + attr.len()..];
                let name = &rest[..rest.find('"').unwrap()];
                if name.starts_with('#') {
                    continue;
                }
                assert!(
                    ASSETS.iter().any(|(n, _, _)| *n == name),
                    "{name} not served"
                );
            }
        }
    }

    #[test]
    fn the_api_is_found_relative_to_the_page() {
        for (path, api) in [("/ui", "../admin/v1"), ("/gateway/ui", "../../admin/v1")] {
            assert_eq!(api_from(path), api, "{path}");
        }
    }
}
