//! The console over HTTP on a real `qore serve`: the page and its files under a strict CSP at
//! `/ui` (moved by `console_path`, gone with `console = false`); login exchanging the admin
//! credential for an HttpOnly SameSite=Strict cookie without minting a key (a wrong
//! credential 401, an API key 403); the cookie reads the admin API, a tampered one or one of
//! a revoked credential is 401; a cookie call that changes something needs the same origin.

mod admin;

use admin::Served;
use qore_serve::admin::ConsoleSettings;
use reqwest::header::{HeaderMap, HeaderValue};

async fn get(served: &Served, path: &str) -> (u16, HeaderMap, String) {
    let url = format!("{}{path}", served.server.url());
    let response = served.http.get(url).send().await.unwrap();
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.text().await.unwrap())
}

/// A call with `headers` (name, value pairs); the status and the `Set-Cookie` header.
async fn call(
    served: &Served,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: &str,
) -> (u16, Option<String>) {
    let url = format!("{}/admin/v1{path}", served.server.url());
    let mut request = served.http.request(method.parse().unwrap(), url);
    for (name, value) in headers {
        request = request.header(*name, HeaderValue::from_str(value).unwrap());
    }
    if !body.is_empty() {
        request = request
            .header("content-type", "application/json")
            .body(body.to_owned());
    }
    let response = request.send().await.unwrap();
    let cookie = (response.headers().get("set-cookie")).map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), cookie)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_is_served_under_a_strict_policy_where_the_settings_say() {
    // (console settings, page path, relative API path, a path that must be 404)
    let cases = [
        (
            ConsoleSettings::default(),
            "/ui/",
            Some("../admin/v1"),
            "/gateway/ui/",
        ),
        (
            ConsoleSettings {
                enabled: true,
                path: "/gateway/ui".into(),
            },
            "/gateway/ui/",
            Some("../../admin/v1"),
            "/ui/",
        ),
        (
            ConsoleSettings {
                enabled: false,
                path: "/ui".into(),
            },
            "/ui/",
            None,
            "/ui/app.js",
        ),
    ];
    for (console, page, api, absent) in cases {
        let served = Served::start_with(|s| s.console = console.clone()).await;
        let (status, headers, text) = get(&served, page).await;
        match api {
            Some(api) => {
                assert_eq!(status, 200, "{page}");
                let csp = headers["content-security-policy"].to_str().unwrap();
                for part in [
                    "default-src 'none'",
                    "script-src 'self'",
                    "frame-ancestors 'none'",
                ] {
                    assert!(csp.contains(part), "{csp}");
                }
                assert!(
                    !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
                    "{csp}"
                );
                assert!(text.contains(&format!("content=\"{api}\"")), "{text}");
                for file in [
                    "app.js",
                    "app.css",
                    "vendor/uPlot.iife.min.js",
                    "vendor/uPlot.min.css",
                ] {
                    let (status, headers, _) = get(&served, &format!("{page}{file}")).await;
                    assert_eq!(status, 200, "{page}{file}");
                    assert!(headers.contains_key("content-security-policy"));
                }
            }
            None => assert_eq!(status, 404, "{page}"),
        }
        assert_eq!(get(&served, absent).await.0, 404, "{absent}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_gives_a_strict_cookie_and_changes_need_the_same_origin() {
    let served = Served::start().await;
    let (admin, _) = qore_serve::admin::auth::create(&*served.store, "ops")
        .await
        .unwrap();
    let api_key = {
        let bearer = [("authorization", format!("Bearer {admin}"))];
        let url = format!("{}/admin/v1/keys", served.server.url());
        let made = served
            .http
            .post(url)
            .header("authorization", &bearer[0].1)
            .header("content-type", "application/json")
            .body(r#"{"name":"app"}"#)
            .send()
            .await
            .unwrap();
        let made: serde_json::Value = serde_json::from_str(&made.text().await.unwrap()).unwrap();
        made["key"].as_str().unwrap().to_owned()
    };
    let keys_before = served.store.keys().await.unwrap().len();
    let login = |credential: &str| format!(r#"{{"credential":"{credential}"}}"#);
    let same = ("sec-fetch-site", "same-origin".to_owned());
    // (credential, status)
    for (credential, wanted) in [("qore-wrong", 401), (api_key.as_str(), 403)] {
        let (status, cookie) = call(
            &served,
            "POST",
            "/session",
            std::slice::from_ref(&same),
            &login(credential),
        )
        .await;
        assert_eq!((status, cookie), (wanted, None), "{credential}");
    }
    let (status, cookie) = call(
        &served,
        "POST",
        "/session",
        std::slice::from_ref(&same),
        &login(&admin),
    )
    .await;
    assert_eq!(status, 204);
    let cookie = cookie.unwrap();
    for part in ["HttpOnly", "SameSite=Strict", "Max-Age="] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert_eq!(
        served.store.keys().await.unwrap().len(),
        keys_before,
        "no key is minted"
    );
    let jar = ("cookie", cookie.split(';').next().unwrap().to_owned());
    assert_eq!(
        call(&served, "GET", "/keys", std::slice::from_ref(&jar), "")
            .await
            .0,
        200
    );
    // (headers besides the cookie, status) for a change made with the cookie
    let body = r#"{"name":"from-the-page"}"#;
    let cases = [
        (vec![], 403),
        (vec![("sec-fetch-site", "cross-site".to_owned())], 403),
        (vec![("origin", "http://evil.example".to_owned())], 403),
        (vec![same.clone()], 201),
    ];
    for (extra, wanted) in cases {
        let mut headers = vec![jar.clone()];
        headers.extend(extra.clone());
        assert_eq!(
            call(&served, "POST", "/keys", &headers, body).await.0,
            wanted,
            "{extra:?}"
        );
    }
    let tampered = ("cookie", format!("{}0", jar.1));
    assert_eq!(call(&served, "GET", "/keys", &[tampered], "").await.0, 401);
    let (status, cleared) = call(
        &served,
        "DELETE",
        "/session",
        &[jar.clone(), same.clone()],
        "",
    )
    .await;
    assert!(status == 204 && cleared.unwrap().contains("Max-Age=0"));
    served.store.revoke_key("admin:ops").await.unwrap();
    assert_eq!(
        call(&served, "GET", "/keys", &[jar], "").await.0,
        401,
        "revoked: the session ends"
    );
}
