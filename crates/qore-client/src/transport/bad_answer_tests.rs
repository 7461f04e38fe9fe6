//! Messages for pages and text, tidy lines and capped bodies, sizes and titles.

use super::*;

/// An answer from `api.example.com`; `content_type` is an [`essence`], as [`Head::of`] keeps it.
fn answer<'a>(status: u16, content_type: &'a str, body: &'a [u8]) -> Answer<'a> {
    Answer {
        status,
        host: "api.example.com",
        content_type,
        body,
        size: body.len(),
    }
}

fn codec_error(status: u16, body: &[u8]) -> ErrorInfo {
    let body = String::from_utf8_lossy(body);
    crate::transport::http::http_error(status, &body, None, None)
}

#[test]
fn non_json_error_bodies_say_what_they_are() {
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>{}</body></html>",
        "x".repeat(20 * 1024)
    );
    // (status, content type, body, message)
    let cases: &[(u16, &str, &[u8], &str)] = &[
        (
            502,
            "text/html",
            page.as_bytes(),
            "HTTP 502 Bad Gateway from api.example.com: \"502 Bad Gateway\" (text/html, 20 KB)",
        ),
        (
            503,
            "",
            b"<html><body>down</body></html>",
            "HTTP 503 Service Unavailable from api.example.com: an HTML page (no content type, 30 B)",
        ),
        (
            503,
            "text/plain",
            b"\n upstream connect error or disconnect/reset before headers\nmore\n",
            "HTTP 503 Service Unavailable from api.example.com: \"upstream connect error or \
             disconnect/reset before headers\" (text/plain, 65 B)",
        ),
        (
            599,
            "text/plain",
            b"odd",
            "HTTP 599 from api.example.com: \"odd\" (text/plain, 3 B)",
        ),
    ];
    for &(status, content_type, body, message) in cases {
        let answer = answer(status, content_type, body);
        let error = http_answer(codec_error(status, body), &answer);
        assert_eq!(error.message, message);
        assert_eq!(error.status(), Some(status));
    }
}

#[test]
fn json_and_empty_error_bodies_keep_the_codecs_message() {
    let body = br#"{"error":{"message":"bad key","type":"auth"}}"#;
    let codec = crate::transport::http::http_error(401, "", Some("bad key".into()), None);
    let error = http_answer(codec, &answer(401, "text/html", body));
    assert_eq!(error.message, "HTTP 401: bad key");
    let error = http_answer(codec_error(500, b""), &answer(500, "text/html", b""));
    assert_eq!(error.message, "HTTP 500 with an empty body");
}

#[test]
fn a_page_in_a_2xx_answer_is_named() {
    let error = not_a_stream(&answer(
        200,
        "text/html",
        b"<html><title>Sign in &amp; go</title></html>",
    ));
    assert_eq!(error.category, ErrorCategory::Provider);
    assert_eq!(
        error.message,
        "HTTP 200 OK from api.example.com is not an event stream or JSON but \
         \"Sign in & go\" (text/html, 44 B)"
    );
    assert_eq!(error.status(), Some(200));
    for (content_type, page) in [
        ("text/html; charset=UTF-8", true),
        ("Text/Plain", true),
        ("application/xhtml+xml", true),
        ("text/event-stream", false),
        ("application/json", false),
        ("application/x-ndjson", false),
        ("", false),
    ] {
        assert_eq!(
            is_page_or_text(&essence(content_type)),
            page,
            "{content_type}"
        );
    }
}

#[test]
fn an_essence_is_the_lowercase_media_type() {
    for (content_type, want) in [
        ("Text/HTML; charset=UTF-8", "text/html"),
        (" application/json ;x=1", "application/json"),
        ("text/event-stream", "text/event-stream"),
        ("", ""),
    ] {
        assert_eq!(essence(content_type), want, "{content_type}");
    }
}

#[test]
fn tidy_makes_one_short_line_and_caps_the_body() {
    let mut error =
        ErrorInfo::provider(format!("a\n\n b\t{}", "é".repeat(400))).with_detail(ProviderDetail {
            status: Some(500),
            error_type: None,
            body: Some("é".repeat(BODY_CAP)),
        });
    tidy(&mut error);
    assert!(error.message.starts_with("a b éé"), "{}", error.message);
    assert_eq!(error.message.chars().count(), MESSAGE_MAX);
    assert!(error.message.ends_with('…'));
    let body = error.provider.unwrap().body.unwrap();
    assert!(body.len() <= BODY_CAP && body.len() > BODY_CAP - 2);

    let mut short = ErrorInfo::network("fine as it is");
    tidy(&mut short);
    assert_eq!(short.message, "fine as it is");
}

#[test]
fn sizes_and_titles() {
    for (bytes, text) in [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1 KB"),
        (20 * 1024 + 100, "20 KB"),
        (20 * 1024 * 1024, "20.0 MB"),
    ] {
        assert_eq!(size(bytes), text);
    }
    assert_eq!(
        html_title("<HTML><TITLE lang=en>\n  Bad\n Gateway </TITLE>").as_deref(),
        Some("Bad Gateway")
    );
    assert_eq!(html_title("<html><title></title>"), None);
    assert_eq!(html_title("<html><title>never closed"), None);
}
